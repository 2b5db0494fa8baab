extension IncidentStatistics {
    /// Fills ``bySource``, ``byCategory``, ``byRoad`` (the 20 most frequent), ``distinctRoads``
    /// and ``byHour`` from incidents counted by key, as both stores count them (SQLite's and
    /// PostgreSQL's `incident_counts`): `''` for an absent road or start (as ``GroupCount``);
    /// `startMinutes` by the UTC minute of the day of the start (`HH:MM`), made local hours
    /// `utcOffsetSeconds` east of UTC. Keys counted zero times are left out. Order: largest count
    /// first, then the key's UTF-8 bytes (SQLite's BINARY collation); hours by key.
    public mutating func group(sources: [String: Int], categories: [String: Int], roads: [String: Int],
                               startMinutes: [String: Int], utcOffsetSeconds: Int) {
        func largestFirst(_ counts: [String: Int]) -> [(String, Int)] {
            counts.filter { $0.value > 0 }.map { ($0.key, $0.value) }
                .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        }
        bySource = largestFirst(sources)
        byCategory = largestFirst(categories)
        let roadCounts = largestFirst(roads)
        byRoad = Array(roadCounts.prefix(20))
        distinctRoads = roadCounts.count
        var hours: [String: Int] = [:]
        for (minute, count) in startMinutes where count > 0 {
            hours[Self.hour(ofMinute: minute, utcOffsetSeconds: utcOffsetSeconds), default: 0] += count
        }
        byHour = hours.map { ($0.key, $0.value) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
    }

    /// The hour (`00`…`23`) at `utcOffsetSeconds` east of UTC of a UTC minute of the day
    /// (`HH:MM`, a key of `start_minute`); empty for an unknown start. Offsets are applied at
    /// minute resolution: every time zone in use today is a whole number of minutes from UTC.
    public static func hour(ofMinute key: String, utcOffsetSeconds: Int) -> String {
        let parts = key.split(separator: ":")
        guard parts.count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]) else { return "" }
        let local = ((hours * 3600 + minutes * 60 + utcOffsetSeconds) % 86_400 + 86_400) % 86_400
        let hour = local / 3600
        return hour < 10 ? "0\(hour)" : "\(hour)"
    }
}
