import IncidentCore
@testable import IncidentFeeds
import Testing

@Suite("Provider local times (Korea)")
struct LocalTimeTests {
    static let kst = UTCInstant.koreaUTCOffsetSeconds

    @Test("Korea local times convert to UTC, across day, month, year and leap-day boundaries", arguments: [
        ("2023-03-21 14:13:00", "2023-03-21T05:13:00Z"),
        ("2023-01-01 03:00:00", "2022-12-31T18:00:00Z"),
        ("2023-03-01 08:59:59", "2023-02-28T23:59:59Z"),
        ("2024-03-01 00:00:00", "2024-02-29T15:00:00Z"),
        ("2023-01-05 09:00:00", "2023-01-05T00:00:00Z"),
        ("1970-01-01 09:00:00", "1970-01-01T00:00:00Z"),
        ("1969-12-31 23:59:59", "1969-12-31T14:59:59Z"),
    ])
    func dashed(local: String, utc: String) throws {
        let instant = try #require(UTCInstant(local: local, layout: .dashed, utcOffsetSeconds: Self.kst))
        #expect(instant.rfc3339 == utc)
        #expect(UTCInstant(rfc3339: utc) == instant)
    }

    @Test("compact ITS layout")
    func compact() {
        #expect(UTCInstant(local: "20221220093317", layout: .compact, utcOffsetSeconds: Self.kst)?.rfc3339
                == "2022-12-20T00:33:17Z")
    }

    @Test("accepts the variants providers send: fractions, a T, no seconds, an explicit zone, compact forms", arguments: [
        ("2023-03-21 14:13:00.0", "2023-03-21T05:13:00Z"),      // java.sql.Timestamp.toString()
        ("2023-03-21 14:13:00.000", "2023-03-21T05:13:00Z"),
        ("2023-03-21 14:13:59.999999", "2023-03-21T05:13:59Z"), // truncated, never rounded up
        ("2023-03-21T14:13:00", "2023-03-21T05:13:00Z"),
        ("2023-03-21 14:13", "2023-03-21T05:13:00Z"),
        ("2023-03-21T14:13", "2023-03-21T05:13:00Z"),
        ("  2023-03-21  14:13:00  ", "2023-03-21T05:13:00Z"),
        ("2023-03-21 14:13:00+09:00", "2023-03-21T05:13:00Z"),
        ("2023-03-21 05:13:00Z", "2023-03-21T05:13:00Z"),
        ("2023-03-21T14:13:00+0900", "2023-03-21T05:13:00Z"),
        ("2023-03-21 01:13:00-04:00", "2023-03-21T05:13:00Z"),
        ("20221220093317", "2022-12-20T00:33:17Z"),
        ("202212200933", "2022-12-20T00:33:00Z"),
        ("20221220093317.0", "2022-12-20T00:33:17Z"),
    ])
    func variants(local: String, utc: String) {
        #expect(UTCInstant(local: local, layout: .dashed, utcOffsetSeconds: Self.kst)?.rfc3339 == utc)
        #expect(UTCInstant(local: local, layout: .compact, utcOffsetSeconds: Self.kst)?.rfc3339 == utc)
    }

    @Test("rejects a date alone, fields out of range and other text", arguments: [
        "", "2023-03-21", "2023-13-01 00:00:00", "2023-02-29 00:00:00", "2023-03-21 24:00:00",
        "2023-03-21 14:13:0x", "２０２３-03-21 14:13:00", "2023-03-21 14:13:00.", "2023-03-21 14", "20221220",
        "2023-03-21 14:13:00 KST", "2023-03-21 14:13:00+24:00", "2023/03/21 14:13:00", "2023-03-21 14:60",
        "202212200933171", "2023-03-21 14:13:00junk",
    ])
    func rejects(text: String) {
        #expect(UTCInstant(local: text, layout: .dashed, utcOffsetSeconds: Self.kst) == nil)
    }

    @Test("ISO 8601 as the international standards write it", arguments: [
        ("2023-05-31T13:17Z", 0, "2023-05-31T13:17:00Z"),
        ("2022-12-01T10:15:00-08:00", 0, "2022-12-01T18:15:00Z"),
        ("2026-04-02T12:03:00.001346644Z", 0, "2026-04-02T12:03:00Z"),
        ("2025-11-27T06:24:59.094Z", 0, "2025-11-27T06:24:59Z"),
        ("2021-04-26T15:19", 0, "2021-04-26T15:19:00Z"),
        ("2021-04-26T15:19", -7 * 3600, "2021-04-26T22:19:00Z"),
        ("2023-05-31", 2 * 3600, "2023-05-30T22:00:00Z"),
        ("2023-05-31t13:17:00z", 0, "2023-05-31T13:17:00Z"),
    ])
    func iso8601(text: String, offset: Int, utc: String) {
        #expect(UTCInstant(iso8601: text, utcOffsetSeconds: offset)?.rfc3339 == utc)
    }

    @Test("ISO 8601 rejects", arguments: ["2023-05-31T", "2023-05", "31.05.2023", "2023-05-31T25:00Z", "2023-05-31/"])
    func iso8601Rejects(text: String) {
        #expect(UTCInstant(iso8601: text, utcOffsetSeconds: 0) == nil)
    }
}
