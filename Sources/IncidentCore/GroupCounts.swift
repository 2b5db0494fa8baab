/// What `incidents stats --by FIELD` groups incidents by.
public enum IncidentGrouping: String, CaseIterable, Sendable {
    case source
    case category
    case road
    /// The provider's own label (`provider_category`).
    case providerCategory = "provider-category"
    case restriction
    /// ``IncidentStatus`` at the query's `now`: active, planned, suspended, ended or cleared.
    case status
    /// Local hour of the day of `started_at`, `00`…`23`.
    case hour
    /// Local date of `started_at`, `2023-03-21`.
    case day

    /// Whether the groups are times of start (shown in time order) rather than values of a field
    /// (shown largest count first).
    public var isTime: Bool { self == .hour || self == .day }
}

/// The time buckets of `incidents stats --by FIELD --per day|hour`: each group is counted
/// separately per local date or per local hour of `started_at`.
public enum TimeBucket: String, CaseIterable, Sendable {
    /// `2023-03-21`.
    case day
    /// `2023-03-21 14` (the hour starting at 14:00 local time).
    case hour
}

/// One group's count.
public struct GroupCount: Hashable, Sendable {
    /// The local day or hour of start (``TimeBucket``) when counted per bucket, empty for
    /// incidents without a start; nil without buckets.
    /// An empty key or bucket means "none" (no stored text is empty): shown as `-` in a table,
    /// `null` in JSON, an empty field in CSV, so that a road named `-` stays its own group.
    public var bucket: String?
    /// The grouped value (``IncidentGrouping``); empty when the incident has none.
    public var key: String
    public var count: Int

    public init(bucket: String? = nil, key: String, count: Int) {
        self.bucket = bucket
        self.key = key
        self.count = count
    }
}

extension IncidentReader {
    /// The generic grouping: reads the matching incidents once and counts them (memory grows
    /// with the number of groups, not of incidents). Stores that can group in their query
    /// language implement the requirement themselves and must give the same result.
    public func groupCounts(matching query: IncidentQuery, by field: IncidentGrouping, per bucket: TimeBucket?,
                            utcOffsetSeconds: Int) throws -> [GroupCount] {
        try GroupCounter.count(self, matching: query, by: field, per: bucket) { _ in utcOffsetSeconds }
    }
}

/// Counting groups by reading every matching incident: the reference the stores' grouped
/// queries are tested against, and the way to count in a zone whose offset changes (daylight
/// saving time), which a store's fixed-offset arithmetic cannot do.
public enum GroupCounter {
    /// Counts the incidents matching `query` (its order and limit are ignored; `near` is exact,
    /// as in ``QueryIncidents/forEach(_:_:)``) by `field`, and per `bucket` when given. Local
    /// times are `started_at` plus `utcOffset(started_at)` seconds.
    ///
    /// Order: by bucket, then for ``IncidentGrouping/isTime`` fields by key, otherwise largest
    /// count first and then by key; texts in UTF-8 byte order (SQLite's BINARY collation), so
    /// the empty key (no value) comes first.
    /// - Throws: the reader's errors.
    public static func count(_ reader: any IncidentReader, matching query: IncidentQuery, by field: IncidentGrouping,
                             per bucket: TimeBucket?, utcOffset: (UTCInstant) -> Int) throws -> [GroupCount] {
        var all = query
        all.limit = nil
        all.order = .started
        var counts: [GroupKey: Int] = [:]
        try QueryIncidents(reader: reader).forEach(all) { stored in
            let local = stored.incident.startedAt.map { $0.adding(seconds: Int64(utcOffset($0))).rfc3339 }
            let key = GroupKey(bucket: bucket.map { localText(local, $0) }, key: value(stored, field, local: local, now: query.now))
            counts[key, default: 0] += 1
        }
        return sorted(counts.map { GroupCount(bucket: $0.key.bucket, key: $0.key.key, count: $0.value) }, by: field)
    }

    /// `counts` in the documented order of ``count(_:matching:by:per:utcOffset:)``.
    public static func sorted(_ counts: [GroupCount], by field: IncidentGrouping) -> [GroupCount] {
        func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        return counts.sorted { a, b in
            if a.bucket != b.bucket { return precedes(a.bucket ?? "", b.bucket ?? "") }
            if !field.isTime && a.count != b.count { return a.count > b.count }
            return precedes(a.key, b.key)
        }
    }

    private struct GroupKey: Hashable {
        var bucket: String?
        var key: String
    }

    /// The value of `field` for `stored`; `local` is its start as local RFC 3339 text.
    static func value(_ stored: StoredIncident, _ field: IncidentGrouping, local: String?, now: UTCInstant) -> String {
        let i = stored.incident
        switch field {
        case .source: return i.source
        case .category: return i.category.rawValue
        case .road: return i.road ?? ""
        case .providerCategory: return i.providerCategory ?? ""
        case .restriction: return i.restriction ?? ""
        case .status: return stored.status(at: now).rawValue
        case .hour: return local.map { String($0.dropFirst(11).prefix(2)) } ?? ""
        case .day: return local.map { String($0.prefix(10)) } ?? ""
        }
    }

    /// `2023-03-21` or `2023-03-21 14` from local RFC 3339 text; empty without a start.
    static func localText(_ local: String?, _ bucket: TimeBucket) -> String {
        guard let local else { return "" }
        switch bucket {
        case .day: return String(local.prefix(10))
        case .hour: return String(local.prefix(10)) + " " + String(local.dropFirst(11).prefix(2))
        }
    }
}
