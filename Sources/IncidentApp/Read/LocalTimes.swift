import IncidentCore

extension DisplayZone {
    /// `instant` as RFC 3339 text in this zone, to the second, with the offset in force then:
    /// `2023-12-31T23:10:00Z` in UTC, `2024-01-01T08:10:00+09:00` in KST.
    func rfc3339(_ instant: UTCInstant) -> String {
        let offset = offsetSeconds(at: instant)
        guard offset != 0 else { return instant.rfc3339 }
        return String(instant.adding(seconds: Int64(offset)).rfc3339.dropLast()) + Self.offsetLabel(offset)
    }

    /// `instant` moved by the offset in force then: its RFC 3339 fields are the local
    /// wall-clock time (written as `2024-01-01 08:10:00`, the form spreadsheets read as a date
    /// and time, by ``OutputBuffer/writeRFC3339(_:wallClock:)``).
    func local(_ instant: UTCInstant) -> UTCInstant {
        instant.adding(seconds: Int64(offsetSeconds(at: instant)))
    }
}
