import Foundation
@testable import IncidentApp
import IncidentCore
import Testing

/// `--tz`: each instant shown, and each local time read, with the offset in force at that
/// instant (system tz database), across daylight saving time in both directions.
@Suite("Time zones")
struct TimeZoneTests {
    static let newYork = try! ValueParsers.timeZone("America/New_York")
    static let now = UTCInstant(rfc3339: "2024-06-01T00:00:00Z")!

    static func instant(_ text: String) -> UTCInstant { UTCInstant(rfc3339: text)! }

    @Test("instants are shown at their own offset: EST in winter, EDT in summer, on both sides of each change", arguments: [
        ("2024-01-15T17:00:00Z", "2024-01-15 12:00"),  // EST, -05:00
        ("2024-07-01T16:00:00Z", "2024-07-01 12:00"),  // EDT, -04:00
        ("2024-03-10T06:59:00Z", "2024-03-10 01:59"),  // the last minute of EST in spring
        ("2024-03-10T07:00:00Z", "2024-03-10 03:00"),  // clocks jump from 02:00 to 03:00
        ("2024-11-03T05:30:00Z", "2024-11-03 01:30"),  // 01:30 EDT, the first time
        ("2024-11-03T06:30:00Z", "2024-11-03 01:30"),  // 01:30 EST, the second time
        ("2024-11-03T07:00:00Z", "2024-11-03 02:00"),
    ])
    func shown(instant: String, local: String) {
        #expect(Self.newYork.shortTime(Self.instant(instant)) == local)
    }

    @Test("local times are read at the offset in force then; a repeated hour reads as its first time, a skipped one moves forward",
          arguments: [
        ("2024-01-15 12:00", "2024-01-15T17:00:00Z"),
        ("2024-07-01 12:00", "2024-07-01T16:00:00Z"),
        ("2024-07-01", "2024-07-01T04:00:00Z"),
        ("2024-01-15", "2024-01-15T05:00:00Z"),
        ("2024-03-10 01:59:59", "2024-03-10T06:59:59Z"),
        ("2024-03-10 03:00", "2024-03-10T07:00:00Z"),
        ("2024-03-10 02:30", "2024-03-10T07:30:00Z"),  // does not exist: moved forward by the hour skipped
        ("2024-11-03 00:59", "2024-11-03T04:59:00Z"),
        ("2024-11-03 01:30", "2024-11-03T05:30:00Z"),  // exists twice: the first (EDT)
        ("2024-11-03 02:00", "2024-11-03T07:00:00Z"),
    ])
    func read(local: String, utc: String) throws {
        #expect(try ValueParsers.instant(local, now: Self.now, zone: Self.newYork) == Self.instant(utc))
    }

    @Test("a southern zone changes the other way round in the same months", arguments: [
        ("2024-01-15 12:00", "2024-01-15T01:00:00Z"),  // Sydney summer, AEDT +11:00
        ("2024-07-01 12:00", "2024-07-01T02:00:00Z"),  // Sydney winter, AEST +10:00
    ])
    func southern(local: String, utc: String) throws {
        let sydney = try ValueParsers.timeZone("Australia/Sydney")
        #expect(try ValueParsers.instant(local, now: Self.now, zone: sydney) == Self.instant(utc))
        #expect(sydney.shortTime(Self.instant(utc)) == local)
        #expect(sydney.label == "Australia/Sydney" && sydney.fixedOffsetSeconds == nil)
    }

    @Test("fixed offsets and the names UTC and KST keep working, with their labels", arguments: [
        ("UTC", 0, "UTC"), ("Z", 0, "UTC"), ("KST", 32_400, "+09:00"), ("+09:00", 32_400, "+09:00"), ("-05:30", -19_800, "-05:30"),
    ])
    func fixed(text: String, offset: Int, label: String) throws {
        let zone = try ValueParsers.timeZone(text)
        #expect(zone.fixedOffsetSeconds == offset)
        #expect(zone.label == label)
        #expect(try ValueParsers.instant("2024-07-01 12:00", now: Self.now, zone: zone) == Self.instant("2024-07-01T12:00:00Z").adding(seconds: -Int64(offset)))
        #expect(zone.shortTime(Self.instant("2024-07-01T12:00:00Z").adding(seconds: -Int64(offset))) == "2024-07-01 12:00")
    }

    @Test("not a zone, not an instant", arguments: ["Mars/Olympus", "EST5EDT6", "+25:00", "09:00", ""])
    func badZones(text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.timeZone(text) }
    }

    @Test("bad local times are usage errors in any zone", arguments: ["2024-13-01", "2024-02-30 12:00", "2024-01-01 25:00", "yesterday"])
    func badInstants(text: String) {
        #expect(throws: UsageError.self) { try ValueParsers.instant(text, now: Self.now, zone: Self.newYork) }
    }
}
