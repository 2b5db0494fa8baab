import Foundation
import IncidentCore

/// The time zone in which a provider's times *without* a UTC offset are read, for the
/// international standards (DATEX II, Open511, WZDx) whose times normally carry one.
///
/// A time with `Z` or an offset is read as written, whatever the zone; a time without one
/// (`2021-04-26T15:19`, or a date alone) is a wall-clock time in the zone, converted with the
/// zone's offset *at that time* (daylight saving time included, from the system's tz database
/// through Foundation's `TimeZone`). A wall-clock time that does not exist (skipped when clocks
/// go forward) or exists twice (when they go back) is ambiguous in the source itself; it is
/// read with one of the two offsets around the change, the zone's offset at the instant the
/// wall-clock time gives when read as UTC, then corrected once (`2026-03-29T02:30` and
/// `2026-10-25T02:30` in `Europe/Amsterdam` are both read at +01:00).
public struct ProviderTimeZone: Sendable, Equatable {
    /// The zone, e.g. `Europe/Helsinki`.
    public let zone: TimeZone
    /// True for UTC: no conversion at all.
    private let isUTC: Bool

    /// The zone named `identifier` (an IANA name such as `Europe/Amsterdam`, or `UTC`); nil
    /// when the system does not know it.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(zone: zone)
    }

    private init(zone: TimeZone) {
        self.zone = zone
        isUTC = zone.secondsFromGMT() == 0 && zone.nextDaylightSavingTimeTransition == nil
    }

    /// UTC: times without an offset are UTC.
    public static let utc = ProviderTimeZone(zone: .gmt)

    /// An ISO 8601 time as ``UTCInstant/init(iso8601:utcOffsetSeconds:)`` reads it, with a
    /// missing offset taken from this zone; nil when the text is not such a time.
    public func instant(iso8601 text: String) -> UTCInstant? {
        guard let wallClock = UTCInstant(iso8601: text, utcOffsetSeconds: 0) else { return nil }
        if isUTC || Self.hasOffset(text) { return wallClock }
        // The offset of the zone at the wall-clock time read as UTC, then at the instant that
        // offset gives (see the type's documentation for the hour around a change).
        let guess = Date(timeIntervalSince1970: TimeInterval(wallClock.secondsSince1970))
        let first = zone.secondsFromGMT(for: guess)
        let offset = zone.secondsFromGMT(for: guess.addingTimeInterval(-TimeInterval(first)))
        return UTCInstant(secondsSince1970: wallClock.secondsSince1970 - Int64(offset))
    }

    /// Whether an ISO 8601 date-time names its offset: `Z`, `z`, `+` or `-` after the time
    /// separator (a date's own dashes come before it).
    static func hasOffset(_ text: String) -> Bool {
        var sawDigit = false
        var afterTime = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
            case UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " "):
                if sawDigit { afterTime = true }
            case UInt8(ascii: "Z"), UInt8(ascii: "z"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                if afterTime { return true }
            default:
                break
            }
        }
        return false
    }

    /// The `timeZone` option of a provider: an IANA zone name, checked against the system's
    /// tz database.
    public static func option(help: String) -> ProviderOption<String> {
        ProviderOption("timeZone", default: "UTC", help: help, accepted: "an IANA time zone name") { name in
            ProviderTimeZone(identifier: name) == nil
                ? "must be an IANA time zone name known to this system, e.g. Europe/Helsinki or UTC" : nil
        }
    }
}
