import Foundation
import IncidentCore
import IncidentFeeds

/// Parsers for the value types that options and the configuration file share, so a duration or
/// an instant is spelled the same way everywhere.
enum ValueParsers {
    /// A duration: a positive whole number followed by `s`, `m`, `h` or `d` (`90s`, `15m`, `2h`,
    /// `7d`). Returns seconds.
    /// - Parameter zero: why zero is refused for this setting (`--deadline`: "a run given no
    ///   time would cancel every source before it starts"); said when the number is 0.
    /// - Throws: ``UsageError`` saying what is accepted, or why zero is not.
    static func duration(_ text: String, zero: String = "a duration must be longer than zero") throws -> Int64 {
        guard let (digits, factor) = durationParts(text) else {
            throw UsageError("'\(text)' is not a duration (a whole number followed by s, m, h or d: 90s, 15m, 2h, 7d)")
        }
        // A duration ends up added to or taken from an instant: past a century the instant
        // could not be written as an RFC 3339 time.
        guard let count = Int64(digits), count <= maxDurationSeconds / factor else {
            throw UsageError("'\(text)' is too long: at most \(maxDurationSeconds / 86_400)d (100 years)")
        }
        guard count > 0 else {
            throw UsageError("'\(text)' is not allowed: \(zero); give a positive duration such as 90s or 15m")
        }
        return count * factor
    }

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

    /// The longest duration ``duration(_:zero:)`` accepts: 36,500 days.
    static let maxDurationSeconds: Int64 = 36_500 * 86_400

    /// Formats seconds the way ``duration(_:)`` reads them (largest exact unit).
    static func durationText(_ seconds: Int64) -> String {
        for (unit, factor) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % factor == 0 && seconds >= factor {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
    }
}

/// The time zone of `--tz`: local times given on the command line are read in it, and instants
/// are shown in it, each with the offset in force at that instant (a New York time in July is
/// shown at EDT, -04:00, one in January at EST, -05:00), from the system's tz database.
struct DisplayZone: Sendable, Equatable {
    let zone: TimeZone
    /// For column headers: `UTC`, a fixed offset (`+09:00`), or the zone's name.
    let label: String
    /// The offset in seconds east of UTC when it never changes (UTC, KST, `+09:00`); nil for a
    /// named zone, whose offset depends on the instant.
    let fixedOffsetSeconds: Int?

    /// UTC.
    static let utc = DisplayZone(fixedOffsetSeconds: 0)

    /// A zone at a fixed offset east of UTC.
    init(fixedOffsetSeconds seconds: Int) {
        zone = TimeZone(secondsFromGMT: seconds) ?? TimeZone(identifier: "UTC") ?? .current
        fixedOffsetSeconds = seconds
        label = Self.offsetLabel(seconds)
    }

    /// A zone of the tz database (`America/New_York`); nil when the name is unknown.
    init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
        fixedOffsetSeconds = nil
        label = identifier
    }

    /// Seconds east of UTC at `instant`.
    func offsetSeconds(at instant: UTCInstant) -> Int {
        fixedOffsetSeconds ?? zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant.secondsSince1970)))
    }

    /// `instant` as `2023-03-21 14:13` in this zone.
    func shortTime(_ instant: UTCInstant) -> String {
        let local = instant.adding(seconds: Int64(offsetSeconds(at: instant))).rfc3339
        return String(local.prefix(16)).replacingOccurrences(of: "T", with: " ")
    }

    /// The instant at which clocks in this zone show the wall-clock time `wall` (its fields read
    /// as if at UTC). A time that occurs twice (the hour repeated when daylight saving time
    /// ends) is read as its first occurrence; a time that does not exist (skipped when it
    /// starts) is moved forward by the gap (Foundation's `Calendar` rules).
    func instant(showing wall: UTCInstant) -> UTCInstant? {
        if let fixedOffsetSeconds { return wall.adding(seconds: -Int64(fixedOffsetSeconds)) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(secondsFromGMT: 0) ?? zone
        let fields = utc.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: TimeInterval(wall.secondsSince1970)))
        var local = Calendar(identifier: .gregorian)
        local.timeZone = zone
        return local.date(from: fields).map { UTCInstant(secondsSince1970: Int64($0.timeIntervalSince1970.rounded(.down))) }
    }

    /// `UTC`, or `+09:00` / `-05:00`.
    static func offsetLabel(_ seconds: Int) -> String {
        guard seconds != 0 else { return "UTC" }
        let sign = seconds < 0 ? "-" : "+"
        return String(format: "%@%02d:%02d", sign, abs(seconds) / 3600, abs(seconds) / 60 % 60)
    }
}

extension ValueParsers {
    /// A time zone: `UTC`/`Z`/`GMT`, `KST` (+09:00, Korea has no daylight saving time),
    /// `±HH:MM`, or a name of the tz database such as `Asia/Seoul` or `America/New_York`.
    static func timeZone(_ text: String) throws -> DisplayZone {
        switch text.uppercased() {
        case "UTC", "Z", "GMT": return .utc
        case "KST": return DisplayZone(fixedOffsetSeconds: UTCInstant.koreaUTCOffsetSeconds)
        default: break
        }
        let bytes = Array(text.utf8)
        if bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"), bytes[3] == UInt8(ascii: ":"),
           let hours = Int(String(text.dropFirst().prefix(2))), let minutes = Int(String(text.suffix(2))),
           hours <= 14, minutes < 60 {
            return DisplayZone(fixedOffsetSeconds: (hours * 3600 + minutes * 60) * (bytes[0] == UInt8(ascii: "-") ? -1 : 1))
        }
        if text.contains("/"), let zone = DisplayZone(identifier: text) {
            return zone
        }
        throw UsageError("'\(text)' is not a time zone (UTC, KST, +09:00, or a name such as Asia/Seoul)")
    }

    /// An instant: RFC 3339 (`2023-03-21T05:13:00Z`), a date (`2023-03-21`, midnight), a local
    /// time `2023-03-21 14:13` or `2023-03-21 14:13:00`, or a duration ago (`2h`, `7d`). Dates
    /// and local times are read in `zone` (`--tz`, default UTC), with the offset in force then.
    static func instant(_ text: String, now: UTCInstant, zone: DisplayZone) throws -> UTCInstant {
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
        // The wall-clock fields, checked by the strict layout parser, then placed in the zone.
        if let wall = UTCInstant(local: normalized, layout: .dashed, utcOffsetSeconds: 0), let instant = zone.instant(showing: wall) {
            return instant
        }
        throw UsageError("'\(text)' is not an instant (2023-03-21T05:13:00Z, 2023-03-21, \"2023-03-21 14:13\" with --tz, or a duration ago such as 2h)")
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
            throw UsageError("'\(text)' is not \(what)")
        }
        return parts.compactMap { $0 }
    }

    /// `minLon,minLat,maxLon,maxLat` in WGS84 degrees.
    static func boundingBox(_ text: String) throws -> BoundingBox {
        let n = try numbers(text, count: 4, what: "minLon,minLat,maxLon,maxLat (e.g. 126.9,37.2,127.1,37.4)")
        guard let box = BoundingBox(minLongitude: n[0], minLatitude: n[1], maxLongitude: n[2], maxLatitude: n[3]) else {
            throw UsageError("'\(text)' is not a WGS84 box with min < max (minLon,minLat,maxLon,maxLat)")
        }
        return box
    }

    /// `LAT,LON` in WGS84 degrees.
    static func point(_ text: String) throws -> Coordinate {
        let n = try numbers(text, count: 2, what: "LAT,LON (e.g. 37.2636,127.0286)")
        guard let point = Coordinate(latitude: n[0], longitude: n[1]) else {
            throw UsageError("'\(text)' is outside WGS84 ranges (latitude -90…90, longitude -180…180)")
        }
        return point
    }

    /// A distance: a positive number with `m` or `km` (`500m`, `5km`, `2.5km`). Returns meters.
    static func distance(_ text: String) throws -> Double {
        let lower = text.lowercased()
        let (number, factor): (Substring, Double) = lower.hasSuffix("km") ? (lower.dropLast(2), 1000)
            : lower.hasSuffix("m") ? (lower.dropLast(1), 1) : ("", 0)
        guard let value = Double(number), value.isFinite, value > 0 else {
            throw UsageError("'\(text)' is not a distance (a number with m or km: 500m, 5km)")
        }
        return value * factor
    }
}
