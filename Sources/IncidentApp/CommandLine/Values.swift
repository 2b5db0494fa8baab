import Foundation
import IncidentCore

/// Parsers for the value types that options and the configuration file share, so a duration or
/// an instant is spelled the same way everywhere.
public enum ValueParsers {
    /// A duration: a positive whole number followed by `s`, `m`, `h` or `d` (`90s`, `15m`, `2h`,
    /// `7d`). Returns seconds.
    /// - Throws: ``UsageError`` saying what is accepted.
    public static func duration(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let factor = units[unit], let count = Int64(text.dropLast()), count > 0,
              count <= Int64.max / factor / 1000
        else {
            throw UsageError("'\(text)' is not a duration (a whole number followed by s, m, h or d: 90s, 15m, 2h, 7d)")
        }
        return count * factor
    }

    /// Formats seconds the way ``duration(_:)`` reads them (largest exact unit).
    public static func durationText(_ seconds: Int64) -> String {
        for (unit, factor) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % factor == 0 && seconds >= factor {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
    }
}

extension ValueParsers {
    /// A time zone as a fixed offset in seconds east of UTC: `UTC`/`Z`, `KST` (+09:00),
    /// `±HH:MM`, or an IANA name such as `Asia/Seoul` (its offset now).
    public static func timeZone(_ text: String) throws -> Int {
        switch text.uppercased() {
        case "UTC", "Z", "GMT": return 0
        case "KST": return UTCInstant.koreaUTCOffsetSeconds
        default: break
        }
        let bytes = Array(text.utf8)
        if bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"), bytes[3] == UInt8(ascii: ":"),
           let hours = Int(String(text.dropFirst().prefix(2))), let minutes = Int(String(text.suffix(2))),
           hours <= 14, minutes < 60 {
            return (hours * 3600 + minutes * 60) * (bytes[0] == UInt8(ascii: "-") ? -1 : 1)
        }
        if text.contains("/"), let zone = TimeZone(identifier: text) {
            return zone.secondsFromGMT()
        }
        throw UsageError("'\(text)' is not a time zone (UTC, KST, +09:00, or a name such as Asia/Seoul)")
    }

    /// An instant: RFC 3339 (`2023-03-21T05:13:00Z`), a date (`2023-03-21`, midnight), a local
    /// time `2023-03-21 14:13` or `2023-03-21 14:13:00`, or a duration ago (`2h`, `7d`). Dates
    /// and local times are read in the time zone `utcOffsetSeconds` (`--tz`, default UTC).
    public static func instant(_ text: String, now: UTCInstant, utcOffsetSeconds: Int) throws -> UTCInstant {
        if let instant = UTCInstant(rfc3339: text) { return instant }
        if let ago = try? duration(text) { return now.adding(seconds: -ago) }
        let normalized: String
        switch text.count {
        case 10: normalized = text + " 00:00:00"
        case 16: normalized = text + ":00"
        default: normalized = text
        }
        if let instant = UTCInstant(local: normalized, layout: .dashed, utcOffsetSeconds: utcOffsetSeconds) { return instant }
        throw UsageError("'\(text)' is not an instant (2023-03-21T05:13:00Z, 2023-03-21, \"2023-03-21 14:13\" with --tz, or a duration ago such as 2h)")
    }

    /// `a,b,...` as exactly `count` decimal numbers.
    static func numbers(_ text: String, count: Int, what: String) throws -> [Double] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == count, parts.allSatisfy({ $0?.isFinite == true }) else {
            throw UsageError("'\(text)' is not \(what)")
        }
        return parts.compactMap { $0 }
    }

    /// `minLon,minLat,maxLon,maxLat` in WGS84 degrees.
    public static func boundingBox(_ text: String) throws -> BoundingBox {
        let n = try numbers(text, count: 4, what: "minLon,minLat,maxLon,maxLat (e.g. 126.9,37.2,127.1,37.4)")
        guard let box = BoundingBox(minLongitude: n[0], minLatitude: n[1], maxLongitude: n[2], maxLatitude: n[3]) else {
            throw UsageError("'\(text)' is not a WGS84 box with min < max (minLon,minLat,maxLon,maxLat)")
        }
        return box
    }

    /// `LAT,LON` in WGS84 degrees.
    public static func point(_ text: String) throws -> Coordinate {
        let n = try numbers(text, count: 2, what: "LAT,LON (e.g. 37.2636,127.0286)")
        guard let point = Coordinate(latitude: n[0], longitude: n[1]) else {
            throw UsageError("'\(text)' is outside WGS84 ranges (latitude -90…90, longitude -180…180)")
        }
        return point
    }

    /// A distance: a positive number with `m` or `km` (`500m`, `5km`, `2.5km`). Returns meters.
    public static func distance(_ text: String) throws -> Double {
        let lower = text.lowercased()
        let (number, factor): (Substring, Double) = lower.hasSuffix("km") ? (lower.dropLast(2), 1000)
            : lower.hasSuffix("m") ? (lower.dropLast(1), 1) : ("", 0)
        guard let value = Double(number), value.isFinite, value > 0 else {
            throw UsageError("'\(text)' is not a distance (a number with m or km: 500m, 5km)")
        }
        return value * factor
    }
}
