import Foundation
import IncidentCore
import IncidentFeeds

/// Parsers for the value types that options and the configuration file share, so a duration or
/// an instant is spelled the same way everywhere.
enum ValueParsers {
    /// A duration: ``FilterValues/duration(_:zero:)``. Returns seconds.
    /// - Parameter zero: why zero is refused for this setting (`--deadline`: "a run given no
    ///   time would cancel every source before it starts"); said when the number is 0.
    /// - Throws: ``UsageError`` saying what is accepted, or why zero is not.
    static func duration(_ text: String, zero: String = "a duration must be longer than zero") throws -> Int64 {
        try usage { try FilterValues.duration(text, zero: zero) }
    }

    /// The longest duration ``duration(_:zero:)`` accepts: 36,500 days.
    static let maxDurationSeconds = FilterValues.maxDurationSeconds

    /// `body`'s value, a ``FilterValueError`` becoming a ``UsageError`` with its message.
    static func usage<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as FilterValueError {
            throw UsageError(error.message)
        }
    }

    /// Formats seconds the way ``duration(_:)`` reads them (largest exact unit).
    static func durationText(_ seconds: Int64) -> String {
        for (unit, factor) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % factor == 0 && seconds >= factor {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
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

    /// An instant (``FilterValues/instant(_:now:wallClock:)``): dates and local times are
    /// read in `zone` (`--tz`, default UTC), with the offset in force then.
    static func instant(_ text: String, now: UTCInstant, zone: DisplayZone) throws -> UTCInstant {
        try usage { try FilterValues.instant(text, now: now, wallClock: zone.filterContext(now: now).wallClock) }
    }
}
