import Foundation
import IncidentCore
import IncidentFeeds

/// The time zone of `--tz`: local times given on the command line are read in it, and instants
/// are shown in it, each with the offset in force at that instant (a New York time in July is
/// shown at EDT, -04:00, one in January at EST, -05:00), from the system's tz database.
struct DisplayZone: Sendable, Equatable {
    /// The zone of the tz database; nil for a fixed offset.
    private let named: TimeZone?
    /// For column headers: `UTC`, a fixed offset (`+09:00`), or the zone's name.
    let label: String
    /// The offset in seconds east of UTC when it never changes (UTC, KST, `+09:00`); nil for a
    /// named zone, whose offset depends on the instant.
    let fixedOffsetSeconds: Int?

    /// UTC.
    static let utc = DisplayZone(fixedOffsetSeconds: 0)

    /// A zone at a fixed offset east of UTC.
    init(fixedOffsetSeconds seconds: Int) {
        named = nil
        fixedOffsetSeconds = seconds
        label = Self.offsetLabel(seconds)
    }

    /// A zone of the tz database (`America/New_York`); nil when the name is unknown.
    init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        named = zone
        fixedOffsetSeconds = nil
        label = identifier
    }

    /// The zone as Foundation's. A fixed offset's is made when asked for, which is rarely
    /// (its offset is ``fixedOffsetSeconds``): the first `TimeZone` of a process sets up
    /// Foundation's zone cache, 0.4 M instructions of every query's start (issue 23, "start fast").
    var zone: TimeZone {
        named ?? TimeZone(secondsFromGMT: fixedOffsetSeconds ?? 0) ?? TimeZone(identifier: "UTC") ?? .current
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
