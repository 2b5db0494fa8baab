import Foundation
import IncidentCore

/// The query parameters of `/collections/incidents/items` (and `/stats`) as an
/// ``IncidentQuery``: OGC API – Features' `datetime` (an instant: what `list --at` lists; an
/// interval: in force at some time of it) and `limit`, the keyset cursor
/// `after`/`before`, and every filter of the catalogue (``IncidentFilter/Parameter``: `bbox`,
/// `road`, `status`, `near`…), parsed by ``IncidentQuery/init(parameters:context:)`` as the
/// CLI's options are, so a parameter means what its option means.
///
/// Every problem is a ``UsageError`` (the server answers 400): an unknown parameter (OGC API –
/// Features Part 1, /req/core/query-param-unknown), one given twice that is taken once, a value
/// that is not one, a value over ``maxValueBytes``.
struct ServerFilters {
    var query: IncidentQuery
    /// Features per page, 1…``maxLimit`` (a larger `limit` is cut to it, as OGC API – Features
    /// /rec/core/fc-limit-max asks, rather than refused).
    var limit: Int
    /// The keyset cursor: the page starts after this id (`after`) or ends before it (`before`).
    var after: Int64?
    var before: Int64?

    /// `limit` when none is given (OGC API – Features' example default).
    static let defaultLimit = 100
    /// The largest page, in features (documented in `/api`).
    static let maxLimit = 10_000
    /// The longest value of a parameter, in bytes: more is no filter anyone means.
    static let maxValueBytes = 1_000

    /// OGC API – Features' own parameters besides the filters (`bbox` is the catalogue's), and `f`.
    static let ogcParameters: Set<String> = ["bbox-crs", "datetime", "limit", "after", "before", "f"]

    /// Parses `parameters` (name, value; a name without `=` has a nil value).
    /// - Parameter allowed: the OGC parameters this route takes (`/stats` takes none but `f`).
    /// - Throws: ``UsageError``.
    init(_ parameters: [(name: String, value: String?)], now: UTCInstant, allowed: Set<String> = ogcParameters) throws {
        var filters: [(name: String, values: [String])] = []
        var own: [String: String] = [:]
        for (name, value) in parameters {
            guard name.utf8.count <= 64, (value?.utf8.count ?? 0) <= Self.maxValueBytes else {
                throw UsageError("parameter \(Self.shown(name)): longer than \(Self.maxValueBytes) bytes")
            }
            guard !name.contains("\u{FFFD}"), !(value ?? "").contains("\u{FFFD}"), !name.contains("\0"), !(value ?? "").contains("\0") else {
                throw UsageError("parameter \(Self.shown(name)): not UTF-8 text, or holds a NUL")
            }
            if allowed.contains(name) {
                guard own[name] == nil else { throw UsageError("parameter \(name): given more than once") }
                own[name] = value ?? ""
                continue
            }
            guard let parameter = IncidentFilter.Parameter(rawValue: name) else {
                let known = allowed.sorted() + IncidentFilter.Parameter.allCases.map(\.name)
                throw UsageError("unknown parameter \(Self.shown(name)) (parameters: \(known.joined(separator: ", ")))")
            }
            switch parameter.kind {
            case .flag, .value:
                // `active` alone is `active=`: the catalogue says which values a flag takes.
                filters.append((name, [value ?? ""]))
            case .repeatable:
                // `status=active&status=planned` or `status=active,planned`.
                filters.append((name, (value ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            }
        }
        do {
            query = try IncidentQuery(parameters: filters, context: .standard(now: now))
        } catch let error as QueryParameterError {
            throw UsageError("parameter \(Self.shown(error.parameter)): \(error.reason)")
        }
        if let crs = own["bbox-crs"], crs != Self.crs84 {
            throw UsageError("parameter bbox-crs: '\(Self.shown(crs))' is not \(Self.crs84), the only CRS here")
        }
        if let text = own["datetime"] {
            // An instant means what `list --at` means (docs/analyst.md, "Serve it"); an interval, in force during it.
            let interval = try Self.named("datetime") { try Self.interval(text) }
            if let instant = interval.from, !text.contains("/") {
                var listed = query
                try Self.named("datetime") { try ListAtMoment.list(at: instant, &listed, asked: "an instant", statesNow: "status and active") }
                query = listed
            } else {
                query.inForce = interval
            }
        }
        limit = try own["limit"].map { try Self.pageSize("limit", $0, maximum: Self.maxLimit) } ?? Self.defaultLimit
        after = try own["after"].map { try Self.whole("after", $0, atLeast: 0) }.map(Int64.init)
        before = try own["before"].map { try Self.whole("before", $0, atLeast: 1) }.map(Int64.init)
        if after != nil && before != nil { throw UsageError("parameters after and before: give one or the other") }
    }

    /// WGS84 longitude/latitude, the only CRS of the collection.
    static let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

    /// A page size: digits only (no sign, no spaces, no exponent), at least 1; a larger one
    /// than `maximum`, however long, is cut to it rather than refused (OGC API – Features
    /// /rec/core/fc-limit-max; `/changes` and `/runs` alike).
    static func pageSize(_ name: String, _ text: String, maximum: Int) throws -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), text.utf8.contains(where: { $0 != 48 }) else {
            throw UsageError("parameter \(name): '\(shown(text))' is not a whole number of at least 1")
        }
        let digits = text.drop { $0 == "0" }
        return digits.utf8.count > 18 ? maximum : min(Int(digits) ?? maximum, maximum)
    }

    /// A whole number of at least `minimum`: digits only (no sign, no spaces, no exponent);
    /// one too large for 64 bits is refused.
    private static func whole(_ name: String, _ text: String, atLeast minimum: Int) throws -> Int {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text), value >= minimum else {
            throw UsageError("parameter \(name): '\(shown(text))' is not a whole number of at least \(minimum)")
        }
        return value
    }

    /// OGC API – Features `datetime`: an RFC 3339 date-time, or an interval `start/end` whose
    /// open end is `..` or empty (`2024-01-01T00:00:00Z/..`). A start after the end is refused.
    static func interval(_ text: String) throws -> IncidentQuery.TimeInterval {
        func instant(_ part: Substring) throws -> UTCInstant? {
            if part.isEmpty || part == ".." { return nil }
            guard let value = UTCInstant(rfc3339: String(part)) else {
                throw UsageError("'\(shown(String(part)))' is not an RFC 3339 date-time (2024-01-01T08:00:00Z)")
            }
            return value
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard let at = try instant(parts[0]) else { throw UsageError("an instant or an interval start/end is needed") }
            return IncidentQuery.TimeInterval(from: at, until: at)
        case 2:
            let (from, until) = (try instant(parts[0]), try instant(parts[1]))
            if let from, let until, from > until { throw UsageError("the interval's start is after its end") }
            return IncidentQuery.TimeInterval(from: from, until: until)
        default:
            throw UsageError("'\(shown(text))' is not an instant or an interval start/end")
        }
    }

    private static func named<T>(_ name: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as UsageError {
            throw UsageError("parameter \(name): \(error.message)")
        }
    }

    /// `text` as it may be quoted in a problem: at most 80 characters, controls as `?`.
    static func shown(_ text: String) -> String {
        let cut = text.unicodeScalars.prefix(80).map { $0.properties.generalCategory == .control ? "?" : Character($0) }
        return String(cut) + (text.unicodeScalars.count > 80 ? "…" : "")
    }
}
