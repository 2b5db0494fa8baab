import IncidentCore
import Testing

@Suite("UTC instants")
struct UTCInstantTests {
    @Test("RFC 3339 parsing with offsets and fractions", arguments: [
        ("2022-12-01T10:15:00-08:00", "2022-12-01T18:15:00Z"),
        ("2025-11-27T06:24:59.094Z", "2025-11-27T06:24:59Z"),
        ("2023-05-31t13:17:00z", "2023-05-31T13:17:00Z"),
        ("2023-01-01T00:30:00+09:00", "2022-12-31T15:30:00Z"),
    ])
    func rfc3339(text: String, utc: String) {
        #expect(UTCInstant(rfc3339: text)?.rfc3339 == utc)
    }

    @Test("RFC 3339 rejects malformed text", arguments: [
        "2023-03-21T05:13:00", "2023-03-21T05:13:00+0900", "2023-03-21T05:13:00Zjunk", "2023-03-21T05:13:00.Z",
    ])
    func rfc3339Rejects(text: String) {
        #expect(UTCInstant(rfc3339: text) == nil)
    }

    @Test("text values are trimmed and empty becomes nil")
    func trimming() {
        #expect(" 강변북로\n".nonEmptyTrimmed == "강변북로")
        #expect(" \t\r\n".nonEmptyTrimmed == nil)
        #expect(Optional<String>.none?.nonEmptyTrimmed == nil)
        #expect("a b".nonEmptyTrimmed == "a b")
    }
}
