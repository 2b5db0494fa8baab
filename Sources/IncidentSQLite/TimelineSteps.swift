import IncidentCore

extension SQLiteStore: TimelineCounter {
    /// One statement over the listed intervals (migration 0013) that overlap the window: each
    /// interval, cut to the window and to its incident's provider's end, becomes the range of
    /// buckets it touches; an incident's ranges are joined (ordered by their first bucket, each
    /// counts only from the bucket after the last one its incident's earlier ranges reached), and
    /// each adds one at its first bucket and takes one off after its last. Without filters or
    /// grouping no incident row is read: the provider's ends come from the partial index
    /// `incidents_by_end` (migration 0014).
    public func timelineSteps(matching query: IncidentQuery, by field: IncidentGrouping?, buckets: TimelineBuckets) throws -> [TimelineStep] {
        try withDatabase { db in
            try db.readTransaction {
                let (sql, arguments) = try Self.timelineSteps(query, field: field, buckets: buckets, db: db)
                var steps: [TimelineStep] = []
                try db.query(sql, arguments) { s in
                    steps.append(TimelineStep(bucket: s.int(at: 0) ?? 0, key: field == nil ? nil : s.string(at: 1) ?? "", change: s.int(at: 2) ?? 0))
                }
                return steps
            }
        }
    }

    /// The statement of ``timelineSteps(matching:by:buckets:)`` and its arguments. Times are
    /// the intervals' seconds (``PollTransitions/intervalSeconds(_:)``).
    static func timelineSteps(_ query: IncidentQuery, field: IncidentGrouping?, buckets: TimelineBuckets,
                              db: Database) throws -> (sql: String, arguments: [String: SQLiteValue]) {
        let epoch = PollTransitions.intervalEpoch
        var arguments: [String: SQLiteValue] = [
            "since": .integer(PollTransitions.intervalSeconds(UTCInstant(secondsSince1970: buckets.since))),
            "until": .integer(PollTransitions.intervalSeconds(UTCInstant(secondsSince1970: buckets.until))),
        ]
        let key: String = switch field {
        case nil: "NULL"
        case .source: "source"
        case .category: "category"
        case .road: "coalesce(road, '')"
        default: throw QueryError("a timeline counts by category, source or road, not \(field?.rawValue ?? "")")
        }
        // The incidents counted: with filters or a grouping, each interval's incident is read by
        // its id and checked (a window's intervals, not every incident the filters select);
        // without, only the provider's ends before the window's end matter, from their index.
        let cut: String
        if query.filters.isEmpty && field == nil {
            arguments["until_text"] = .text(UTCInstant(secondsSince1970: buckets.until).rfc3339)
            cut = """
                ended(id, at) AS MATERIALIZED (SELECT id, unixepoch(ended_at) - \(epoch) FROM incidents INDEXED BY incidents_by_end
                    WHERE ended_at IS NOT NULL AND ended_at < :until_text),
                cut(id, key, s, e) AS (
                    SELECT spans.incident, NULL, max(spans.s, :since), min(spans.e, :until, coalesce(ended.at, :until))
                    FROM spans LEFT JOIN ended ON ended.id = spans.incident)
                """
        } else {
            let selection = try Selection(query, reading: .unordered, db: db)
            arguments.merge(selection.arguments) { $1 }
            cut = """
                cut(id, key, s, e) AS (
                    SELECT spans.incident, \(key), max(spans.s, :since), min(spans.e, :until, coalesce(unixepoch(ended_at) - \(epoch), :until))
                    FROM spans JOIN incidents ON incidents.id = spans.incident\(selection.whereClause))
                """
        }
        let first = buckets.indexSQL(of: "s", epoch: epoch), last = buckets.indexSQL(of: "e - 1", epoch: epoch)
        let sql = """
            WITH spans(incident, s, e) AS (
                SELECT incident_id, listed_from, listed_until FROM incident_listed_intervals WHERE listed_from < :until AND listed_until > :since
                UNION ALL SELECT incident_id, listed_from, :until FROM incident_listed_open WHERE listed_from < :until),
            \(cut),
            ranges(id, key, first, last) AS (SELECT id, key, \(first), \(last) FROM cut WHERE s < e),
            joined(key, first, last, before) AS (
                SELECT key, first, last, max(last) OVER (PARTITION BY id ORDER BY first, last ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                FROM ranges)
            SELECT bucket, key, sum(change) FROM (
                SELECT max(first, coalesce(before + 1, first)) AS bucket, key, 1 AS change FROM joined WHERE coalesce(before, -1) < last
                UNION ALL SELECT last + 1, key, -1 FROM joined WHERE coalesce(before, -1) < last)
            GROUP BY bucket, key
            """
        return (sql, arguments)
    }
}
