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
                guard query.filters.isEmpty, field == nil, let hours = Self.utcHours(buckets) else {
                    return try Self.countedSteps(query, field: field, buckets: buckets, db: db)
                }
                return try Self.hourSteps(query, buckets: buckets, firstHour: hours, db: db)
            }
        }
    }

    /// The first bucket's hour (migration 0016's: interval seconds / 3600) when every bucket is
    /// one UTC hour from 2020 on (a zone whose offset is whole hours), else nil. The last one
    /// ends at `until`: a day cut short by it is no longer than an hour.
    static func utcHours(_ buckets: TimelineBuckets) -> Int64? {
        guard let first = buckets.starts.first, let last = buckets.starts.last, buckets.until - last <= 3600,
              first >= PollTransitions.intervalEpoch, (first - PollTransitions.intervalEpoch) % 3600 == 0,
              buckets.starts.enumerated().allSatisfy({ $0.element == first + 3600 * Int64($0.offset) }) else { return nil }
        return (first - PollTransitions.intervalEpoch) / 3600
    }

    /// The steps of a timeline of UTC hours without filters or grouping: each whole hour of the
    /// window whose count `listed_hours` holds (migration 0016) from it; each run of the others
    /// (a partial first or last hour, the current hour, hours a change took out) counted by
    /// ``timelineSteps(_:field:buckets:db:)`` over that run.
    static func hourSteps(_ query: IncidentQuery, buckets: TimelineBuckets, firstHour: Int64, db: Database) throws -> [TimelineStep] {
        var held: [Int64: Int] = [:]
        try db.query("SELECT hour, listed FROM listed_hours WHERE hour >= :first AND hour < :end",
                     ["first": .integer(firstHour), "end": .integer(firstHour + Int64(buckets.starts.count))]) { s in
            held[s.int64(at: 0) ?? -1] = s.int(at: 1)
        }
        var steps: [TimelineStep] = []
        var run: Range<Int>?
        func countRun() throws {
            guard let counted = run else { return }
            run = nil
            let starts = Array(buckets.starts[counted])
            let part = TimelineBuckets(starts: starts, since: max(buckets.since, starts[0]), until: min(buckets.until, starts[starts.count - 1] + 3600))
            steps += try countedSteps(query, field: nil, buckets: part, db: db)
                .map { TimelineStep(bucket: $0.bucket + counted.lowerBound, key: nil, change: $0.change) }
        }
        for (b, start) in buckets.starts.enumerated() {
            if start >= buckets.since, start + 3600 <= buckets.until, let listed = held[firstHour + Int64(b)] {
                try countRun()
                steps += [TimelineStep(bucket: b, key: nil, change: listed), TimelineStep(bucket: b + 1, key: nil, change: -listed)]
            } else {
                run = (run?.lowerBound ?? b)..<(b + 1)
            }
        }
        try countRun()
        return steps
    }

    /// The steps counted from the listed intervals by one statement.
    static func countedSteps(_ query: IncidentQuery, field: IncidentGrouping?, buckets: TimelineBuckets, db: Database) throws -> [TimelineStep] {
        let (sql, arguments) = try Self.timelineSteps(query, field: field, buckets: buckets, db: db)
        var steps: [TimelineStep] = []
        try db.query(sql, arguments) { s in
            steps.append(TimelineStep(bucket: s.int(at: 0) ?? 0, key: field == nil ? nil : s.string(at: 1) ?? "", change: s.int(at: 2) ?? 0))
        }
        return steps
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
        let spans = """
            WITH spans(incident, s, e) AS (
                SELECT incident_id, listed_from, listed_until FROM incident_listed_intervals WHERE listed_from < :until AND listed_until > :since
                UNION ALL SELECT incident_id, listed_from, :until FROM incident_listed_open WHERE listed_from < :until),
            \(cut)
            """
        // One bucket (a partial hour at a window's end, a window within a day): its incidents,
        // each once, without ordering each incident's intervals (a fifth of the time with the
        // 50,000 open intervals of Scripts/bench --history).
        if buckets.starts.count == 1 {
            return (spans + """
                ,
                counted(key, n) AS MATERIALIZED (SELECT key, count(DISTINCT id) FROM cut WHERE s < e GROUP BY key)
                SELECT 0, key, n FROM counted UNION ALL SELECT 1, key, -n FROM counted
                """, arguments)
        }
        let first = buckets.indexSQL(of: "s", epoch: epoch), last = buckets.indexSQL(of: "e - 1", epoch: epoch)
        let sql = spans + """
            ,
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
