import Foundation

/// One condition of an ``IncidentQuery``: the closed set of filters. Each store translates a
/// query's ``IncidentQuery/filters`` with an exhaustive `switch` (SQLite's `Selection`,
/// PostgreSQL's `Filter`), so a filter added here does not compile until both stores handle
/// it; every front end offers them from one catalogue, ``IncidentFilter/Parameter``.
public enum IncidentFilter: Hashable, Sendable {
    /// In one of these states at the query's `now` (``StoredIncident/status(at:)``).
    case status([IncidentStatus])
    /// From one of these sources.
    case source([String])
    /// In one of these categories.
    case category([IncidentCategory])
    /// `started_at` at or after `since` and before `until` (either end open; not both).
    case started(since: UTCInstant?, until: UTCInstant?)
    /// `last_seen_at` at or after this instant.
    case seenSince(UTCInstant)
    /// The road name or its canonical name contains `contains` (NFC text), or the canonical
    /// name is `reference` (the road that text names: `고속국도1호선` for `경부고속도로`).
    case road(contains: String, reference: String?)
    /// The incident's extent (its geometry's box, else its position) overlaps this box.
    case boundingBox(BoundingBox)
    /// Within `radiusMeters` of the point by ``Incident/distance(to:)``.
    case near(Coordinate, radiusMeters: Double)
    /// Every whitespace-separated word occurs in the description or the location.
    case search(String)
}

extension IncidentQuery {
    /// The filters set, in a fixed order (SQLite breaks ties between equally selective indexes
    /// by it); empty for every incident.
    public var filters: [IncidentFilter] {
        var filters: [IncidentFilter] = []
        if !statuses.isEmpty { filters.append(.status(statuses)) }
        if !sources.isEmpty { filters.append(.source(sources)) }
        if !categories.isEmpty { filters.append(.category(categories)) }
        if let roadContains { filters.append(.road(contains: roadContains, reference: roadReference)) }
        if startedSince != nil || startedUntil != nil { filters.append(.started(since: startedSince, until: startedUntil)) }
        if let seenSince { filters.append(.seenSince(seenSince)) }
        if let boundingBox { filters.append(.boundingBox(boundingBox)) }
        if let near { filters.append(.near(near, radiusMeters: radiusMeters)) }
        if let search { filters.append(.search(search)) }
        return filters
    }
}

// MARK: The catalogue

extension IncidentFilter {
    /// The filters as front ends name them: CLI options (`--road 경부`), HTTP query parameters
    /// (`road=경부`), docs/analyst.md's filter table and `--help`. Each declares its name, value
    /// syntax, help text and an example once, here; ``IncidentQuery/init(parameters:context:)``
    /// parses them.
    public enum Parameter: String, CaseIterable, Sendable {
        case active
        case status
        case source
        case category
        case since
        case until
        case seenSince = "seen-since"
        case road
        case bbox
        case near
        case radius
        case search

        /// How a parameter takes values.
        public enum Kind: Sendable, Equatable {
            /// Present or not: `--active`; in a URL `active`, `active=` or `active=true`. `false`
            /// is refused rather than read as "no filter" (or as "only those not active"): the
            /// parameter left out is every incident, `status` picks those not in force.
            case flag
            /// One value.
            case value
            /// One value or more; any of them matches.
            case repeatable
        }

        /// The name without dashes: `seen-since`.
        public var name: String { rawValue }

        /// How it takes values (an OpenAPI parameter: a boolean, a string, an array of strings).
        public var kind: Kind {
            switch self {
            case .active: .flag
            case .status, .source, .category: .repeatable
            case .since, .until, .seenSince, .road, .bbox, .near, .radius, .search: .value
            }
        }

        /// The values a parameter takes when they are a fixed set (an OpenAPI `enum`); nil otherwise.
        public var choices: [String]? {
            switch self {
            case .status: IncidentStatus.allCases.map(\.rawValue)
            case .category: IncidentCategory.allCases.map(\.rawValue)
            case .active, .source, .since, .until, .seenSince, .road, .bbox, .near, .radius, .search: nil
            }
        }

        /// The value's syntax, for usage lines: `minLon,minLat,maxLon,maxLat`, `active|planned|…`.
        public var placeholder: String {
            if let choices { return choices.joined(separator: "|") }
            switch self {
            case .active, .status, .category: return ""
            case .source: return "name"
            case .since, .until, .seenSince: return "instant"
            case .road, .search: return "text"
            case .bbox: return "minLon,minLat,maxLon,maxLat"
            case .near: return "lat,lon"
            case .radius: return "distance"
            }
        }

        /// One line saying what the filter keeps.
        public var help: String {
            switch self {
            case .active:
                "Only incidents in force now: listed by their source, started, not suspended, not ended (--status active)."
            case .status: "Only incidents in this state now (repeatable): active, planned (starts later), suspended, ended (by the provider's end time), cleared (no longer listed)."
            case .source: "Only this source (repeatable)."
            case .category: "Only this category (repeatable)."
            case .since: "Started at or after this instant."
            case .until: "Started before this instant."
            case .seenSince: "Seen by a poll at or after this instant."
            case .road: "The road name or its canonical name (고속국도1호선) contains this text, or the text names that road (경부고속도로 also finds 경부선)."
            case .bbox: "Only incidents whose extent (line or points, else position) overlaps this WGS84 box."
            case .near: "Only incidents within the radius (great-circle distance) of this WGS84 point: of their line or points, else position."
            case .radius: "Radius for --near: 500m, 5km."
            case .search: "Every word occurs in the description or location (substring, Korean included, ASCII case-insensitive)."
            }
        }

        /// A value that parses (for `--help`, docs/analyst.md and an OpenAPI document); `true` for the flag.
        public var example: String {
            switch self {
            case .active: "true"
            case .status: IncidentStatus.active.rawValue
            case .source: "gits"
            case .category: IncidentCategory.accident.rawValue
            case .since: "2h"
            case .until: "2023-03-21T05:13:00Z"
            case .seenSince: "2023-03-21"
            case .road: "경부"
            case .bbox: "126.9,37.2,127.1,37.4"
            case .near: "37.2636,127.0286"
            case .radius: "10km"
            case .search: "사고"
            }
        }

        /// The value assumed when the parameter is absent, as text (`5km`); nil when none.
        public var defaultValue: String? {
            self == .radius ? "5km" : nil
        }

        /// What a value must be, for "'x' is not an instant".
        var what: String {
            switch self {
            case .active: "true (give active alone, or leave it out for every incident; status=planned,suspended,ended,cleared for those not in force)"
            case .status, .category: "one of \((choices ?? []).joined(separator: ", "))"
            case .source: "a source name"
            case .since, .until, .seenSince: "an instant"
            case .road, .search: "a text"
            case .bbox: "a box"
            case .near: "a point"
            case .radius: "a distance"
            }
        }
    }

    /// What parsing needs besides the text: the instant "now" (for `2h` ago and the states),
    /// how local times are read (a layout and a time zone), and the canonical road names.
    /// IncidentFeeds' `ParsingContext.standard(now:instantShowing:)` gives the CLI's.
    public struct ParsingContext: Sendable {
        public var now: UTCInstant
        /// The instant at which the caller's clocks show the wall-clock time
        /// `yyyy-MM-dd HH:mm:ss`; nil when the text is not one (or no instant shows it).
        public var wallClock: @Sendable (String) -> UTCInstant?
        /// The canonical road a road text names (`고속국도1호선` for `경부고속도로`); nil when none.
        public var canonicalRoad: @Sendable (String) -> String?

        public init(now: UTCInstant, wallClock: @escaping @Sendable (String) -> UTCInstant?,
                    canonicalRoad: @escaping @Sendable (String) -> String?) {
            self.now = now
            self.wallClock = wallClock
            self.canonicalRoad = canonicalRoad
        }
    }
}

/// A filter parameter that cannot be used as given: which one, and why (front-end neutral: the
/// CLI shows `--since: 'x' is not an instant …`, an HTTP server a 400 naming `since`).
public struct QueryParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The parameter's name (``IncidentFilter/Parameter/name``), or the unknown name given.
    public var parameter: String
    /// Why, without the parameter's name: `'yesterday' is not an instant (…)`.
    public var reason: String

    public init(parameter: String, reason: String) {
        self.parameter = parameter
        self.reason = reason
    }

    public var description: String { "\(parameter): \(reason)" }
}

extension IncidentQuery {
    /// The query the filter parameters `(name, values)` ask for, such as a command line's
    /// options or a URL's query parameters, at `context.now`, in the default order and without
    /// a limit. A repeatable parameter keeps every value; any other takes exactly one (a flag:
    /// `true` or empty; ``IncidentFilter/Parameter/Kind/flag``).
    /// - Throws: ``QueryParameterError`` naming the parameter for an unknown name, a value
    ///   that does not parse, a single-valued parameter given more than once, `active` with
    ///   `status`, or `radius` without `near`.
    public init(parameters: [(name: String, values: [String])], context: IncidentFilter.ParsingContext) throws {
        self.init(now: context.now)
        var given: [IncidentFilter.Parameter: [String]] = [:]
        for (name, values) in parameters {
            guard let parameter = IncidentFilter.Parameter(rawValue: name) else {
                throw QueryParameterError(parameter: name, reason: "not a filter (filters: "
                    + IncidentFilter.Parameter.allCases.map(\.name).joined(separator: ", ") + ")")
            }
            given[parameter, default: []] += values
        }
        for parameter in IncidentFilter.Parameter.allCases {
            guard let values = given[parameter], !values.isEmpty else { continue }
            if parameter.kind != .repeatable && values.count > 1 {
                throw QueryParameterError(parameter: parameter.name, reason: "given \(values.count) times; give it once")
            }
            do {
                try parameter.apply(values, to: &self, context)
            } catch let error as FilterValueError {
                throw QueryParameterError(parameter: parameter.name, reason: error.message)
            }
        }
        if given[.active] != nil && given[.status] != nil {
            throw QueryParameterError(parameter: IncidentFilter.Parameter.active.name,
                                      reason: "the same as status active; give one or the other")
        }
        if given[.radius] != nil && near == nil {
            throw QueryParameterError(parameter: IncidentFilter.Parameter.radius.name, reason: "needs near (a point lat,lon)")
        }
        // `since 2h until 7d` reads as a range but means after 2 hours ago and before 7 days ago.
        if let startedSince, let startedUntil, startedUntil <= startedSince {
            throw QueryParameterError(parameter: IncidentFilter.Parameter.until.name, reason: """
                \(startedUntil.rfc3339) is not after since (\(startedSince.rfc3339)): no start time is in that window \
                (a duration means that long ago: since 7d until 2h is the 7 days before the last 2 hours)
                """)
        }
    }
}

extension IncidentFilter.Parameter {
    /// Sets what `values` (checked: one unless repeatable) say on `query`.
    /// - Throws: ``FilterValueError``.
    fileprivate func apply(_ values: [String], to query: inout IncidentQuery, _ context: IncidentFilter.ParsingContext) throws {
        func each<Value>(_ convert: (String) throws -> Value?) throws -> [Value] {
            try values.map { text in
                guard let value = try convert(text) else { throw FilterValueError("'\(text)' is not \(what)") }
                return value
            }
        }
        func one<Value>(_ convert: (String) throws -> Value?) throws -> Value {
            try each(convert)[0]
        }
        func text(_ raw: String) -> String? { raw.nonEmptyTrimmed?.nfc }
        func instant(_ raw: String) throws -> UTCInstant {
            try FilterValues.instant(raw, now: context.now, wallClock: context.wallClock)
        }
        switch self {
        case .active:
            query.activeOnly = try one { ["", "true"].contains($0) ? true : nil }
        case .status: query.statuses = try each(IncidentStatus.init(rawValue:))
        case .source: query.sources = try each(text)
        case .category: query.categories = try each(IncidentCategory.init(rawValue:))
        case .since: query.startedSince = try one(instant)
        case .until: query.startedUntil = try one(instant)
        case .seenSince: query.seenSince = try one(instant)
        case .road:
            // Stored text is NFC: decomposed Hangul (as some clipboards give it) finds what it looks like.
            let road = try one(text)
            query.roadContains = road
            query.roadReference = context.canonicalRoad(road)
        case .bbox: query.boundingBox = try one(FilterValues.boundingBox)
        case .near: query.near = try one(FilterValues.point)
        case .radius: query.radiusMeters = try one(FilterValues.distance)
        case .search: query.search = try one(text)
        }
    }
}

/// A value that is not what a setting takes; the message says what is accepted.
public struct FilterValueError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The value syntaxes of the filters (and of settings that share them: durations, instants).
public enum FilterValues {
    /// A duration: a positive whole number followed by `s`, `m`, `h` or `d` (`90s`, `15m`, `2h`,
    /// `7d`), at most ``maxDurationSeconds``. Returns seconds.
    /// - Parameter zero: why zero is refused, said when the number is 0.
    /// - Throws: ``FilterValueError`` saying what is accepted, or why zero is not.
    public static func duration(_ text: String, zero: String = "a duration must be longer than zero") throws -> Int64 {
        guard let (digits, factor) = durationParts(text) else {
            throw FilterValueError("'\(text)' is not a duration (a whole number followed by s, m, h or d: 90s, 15m, 2h, 7d)")
        }
        // A duration ends up added to or taken from an instant: past a century the instant
        // could not be written as an RFC 3339 time.
        guard let count = Int64(digits), count <= maxDurationSeconds / factor else {
            throw FilterValueError("'\(text)' is too long: at most \(maxDurationSeconds / 86_400)d (100 years)")
        }
        guard count > 0 else {
            throw FilterValueError("'\(text)' is not allowed: \(zero); give a positive duration such as 90s or 15m")
        }
        return count * factor
    }

    /// The longest duration ``duration(_:zero:)`` accepts: 36,500 days.
    public static let maxDurationSeconds: Int64 = 36_500 * 86_400

    /// `text` as a duration is written: ASCII digits, then `s`, `m`, `h` or `d` (the unit's
    /// seconds); nil for anything else.
    private static func durationParts(_ text: String) -> (digits: Substring, factor: Int64)? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let digits = text.dropLast()
        guard let unit = text.last, let factor = units[unit], !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        return (digits, factor)
    }

    /// An instant: RFC 3339 (`2023-03-21T05:13:00Z`), a date (`2023-03-21`, midnight), a local
    /// time `2023-03-21 14:13` or `2023-03-21 14:13:00`, or a duration ago (`2h`, `7d`) before
    /// `now`. Dates and local times are read by `wallClock` as `yyyy-MM-dd HH:mm:ss` (in the
    /// caller's time zone).
    /// - Throws: ``FilterValueError``.
    public static func instant(_ text: String, now: UTCInstant, wallClock: (String) -> UTCInstant?) throws -> UTCInstant {
        if let instant = UTCInstant(rfc3339: text) { return instant }
        if durationParts(text) != nil {
            return now.adding(seconds: -(try duration(text)))  // a duration ago; one too long says so
        }
        let normalized: String
        switch text.count {
        case 10: normalized = text + " 00:00:00"
        case 16: normalized = text + ":00"
        default: normalized = text
        }
        if let instant = wallClock(normalized) { return instant }
        throw FilterValueError("'\(text)' is not an instant (2023-03-21T05:13:00Z, 2023-03-21, a local time \"2023-03-21 14:13\", or a duration ago such as 2h)")
    }

    /// `a,b,...` as exactly `count` decimal numbers.
    static func numbers(_ text: String, count: Int, what: String) throws -> [Double] {
        // Decimal only: Double("0x10") is 16 and Double("nan") is NaN, neither a coordinate.
        let decimal = Set("0123456789.-+eE")
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { part -> Double? in
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            return trimmed.allSatisfy(decimal.contains) ? Double(trimmed) : nil
        }
        guard parts.count == count, parts.allSatisfy({ $0?.isFinite == true }) else {
            throw FilterValueError("'\(text)' is not \(what)")
        }
        return parts.compactMap { $0 }
    }

    /// `minLon,minLat,maxLon,maxLat` in WGS84 degrees.
    /// - Throws: ``FilterValueError``.
    public static func boundingBox(_ text: String) throws -> BoundingBox {
        let n = try numbers(text, count: 4, what: "minLon,minLat,maxLon,maxLat (e.g. 126.9,37.2,127.1,37.4)")
        guard let box = BoundingBox(minLongitude: n[0], minLatitude: n[1], maxLongitude: n[2], maxLatitude: n[3]) else {
            // Latitude first (the order of --near) is the likely slip: name the box it would be.
            if BoundingBox(minLongitude: n[1], minLatitude: n[0], maxLongitude: n[3], maxLatitude: n[2]) != nil {
                throw FilterValueError("'\(text)' is not a WGS84 box (minLon,minLat,maxLon,maxLat: longitude first); "
                                       + "did you mean \(swapped(text, pairs: 2))?")
            }
            throw FilterValueError("'\(text)' is not a WGS84 box with min < max (minLon,minLat,maxLon,maxLat)")
        }
        return box
    }

    /// `LAT,LON` in WGS84 degrees.
    /// - Throws: ``FilterValueError``.
    public static func point(_ text: String) throws -> Coordinate {
        let n = try numbers(text, count: 2, what: "LAT,LON (e.g. 37.2636,127.0286)")
        guard let point = Coordinate(latitude: n[0], longitude: n[1]) else {
            // Longitude first (the order of --bbox and GeoJSON) is the likely slip.
            if Coordinate(latitude: n[1], longitude: n[0]) != nil {
                throw FilterValueError("'\(text)' is outside WGS84 ranges (LAT,LON: latitude -90…90 first); did you mean \(swapped(text, pairs: 1))?")
            }
            throw FilterValueError("'\(text)' is outside WGS84 ranges (latitude -90…90, longitude -180…180)")
        }
        return point
    }

    /// `text`'s comma-separated numbers with each pair's two swapped, as written:
    /// `127.40,36.40` → `36.40,127.40`.
    static func swapped(_ text: String, pairs: Int) -> String {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        return (0..<pairs).flatMap { [parts[2 * $0 + 1], parts[2 * $0]] }.joined(separator: ",")
    }

    /// A distance: a positive number with `m` or `km` (`500m`, `5km`, `2.5km`). Returns meters.
    /// - Throws: ``FilterValueError``.
    public static func distance(_ text: String) throws -> Double {
        let lower = text.lowercased()
        let (number, factor): (Substring, Double) = lower.hasSuffix("km") ? (lower.dropLast(2), 1000)
            : lower.hasSuffix("m") ? (lower.dropLast(1), 1) : ("", 0)
        guard let value = Double(number), value.isFinite, value > 0 else {
            throw FilterValueError("'\(text)' is not a distance (a number with m or km: 500m, 5km)")
        }
        return value * factor
    }
}
