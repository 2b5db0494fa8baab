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

    /// How filters are read in this zone (``IncidentFilter/ParsingContext/standard(now:instantShowing:)``).
    func filterContext(now: UTCInstant) -> IncidentFilter.ParsingContext {
        .standard(now: now) { [self] wall in instant(showing: wall) }
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

    /// An instant (``FilterValues/instant(_:now:wallClock:)``): dates and local times are
    /// read in `zone` (`--tz`, default UTC), with the offset in force then.
    static func instant(_ text: String, now: UTCInstant, zone: DisplayZone) throws -> UTCInstant {
        try usage { try FilterValues.instant(text, now: now, wallClock: zone.filterContext(now: now).wallClock) }
    }
}
