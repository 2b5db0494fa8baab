import Foundation
import IncidentCore

/// A zone of the tz database (IANA, e.g. `America/Vancouver`) in which a provider writes
/// wall-clock dates and times without an offset (Open511 `recurring_schedules`), with the
/// daylight-saving rules of that zone from the system's tz database (Debian `tzdata`).
public struct ProviderZone: Sendable, Equatable {
    /// The tz database name, e.g. `America/Vancouver`, or `UTC`.
    public let identifier: String
    private let zone: TimeZone

    /// UTC.
    public static let utc = ProviderZone(identifier: "UTC", zone: TimeZone(secondsFromGMT: 0) ?? .current)

    private init(identifier: String, zone: TimeZone) {
        self.identifier = identifier
        self.zone = zone
    }

    /// The zone named `identifier` (`UTC`, or a tz database name such as `America/Toronto`);
    /// nil when the tz database does not know it.
    public init?(identifier: String) {
        if identifier == "UTC" {
            self = .utc
            return
        }
        guard identifier.contains("/"), let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(identifier: identifier, zone: zone)
    }

    /// Seconds east of UTC in force at `instant`.
    public func offsetSeconds(at instant: UTCInstant) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant.secondsSince1970)))
    }

    /// The instant at which clocks in this zone show `wall`, a wall-clock time whose fields are
    /// written as if at UTC (`2023-06-05T09:00:00Z` for 09:00 on 5 June).
    ///
    /// A time shown twice (the hour repeated when daylight saving time ends) is read as its
    /// first occurrence; a time never shown (skipped when it starts) is moved forward by the
    /// gap (`02:30` on the spring-forward day reads as `03:30` of the new offset).
    public func instant(showing wall: UTCInstant) -> UTCInstant {
        let before = offsetSeconds(at: wall)
        let guess = wall.adding(seconds: -Int64(before))
        let after = offsetSeconds(at: guess)
        guard after != before else { return guess }
        let retry = wall.adding(seconds: -Int64(after))
        return offsetSeconds(at: retry) == after ? retry : guess
    }

    public static func == (lhs: ProviderZone, rhs: ProviderZone) -> Bool { lhs.identifier == rhs.identifier }
}

extension ProviderOption where Value == String {
    /// A `timeZone` option: the tz database zone of a provider's wall-clock times.
    public static func timeZone(default defaultValue: String = "UTC", help: String) -> ProviderOption {
        ProviderOption("timeZone", default: defaultValue, help: help, accepted: "a tz database name (`America/Vancouver`) or `UTC`") { name in
            ProviderZone(identifier: name) == nil
                ? "must be UTC or a zone of the tz database such as America/Vancouver (see /usr/share/zoneinfo)" : nil
        }
    }
}
