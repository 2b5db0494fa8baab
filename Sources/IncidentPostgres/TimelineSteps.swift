import IncidentCore

extension PostgresStore: TimelineCounter {
    /// One statement over the listed ranges (migration 0011) that overlap the window, as
    /// SQLite's: each range, cut to the window and to its incident's provider's end, becomes the
    /// range of buckets it touches; an incident's ranges are joined (ordered by their first
    /// bucket, each counts only from the bucket after the last one its incident's earlier ones
    /// reached), and each adds one at its first bucket and takes one off after its last. Without
    /// filters or grouping no incident row is read: the provider's ends come from the partial
    /// index `incidents_by_end` (migration 0013). With `--near`, the incidents within the radius
    /// are those ``forEachIncident(matching:_:)`` finds (the distance is exact there).
    public func timelineSteps(matching query: IncidentQuery, by field: IncidentGrouping?, buckets: TimelineBuckets) throws -> [TimelineStep] {
        let key: String = switch field {
        case nil: "NULL::text"
        case .source: "source"
        case .category: "category"
        case .road: "coalesce(road, '')"
        default: throw QueryError("a timeline counts by category, source or road, not \(field?.rawValue ?? "")")
        }
        var arguments: [String: PostgresValue] = [
            "since": .integer(buckets.since), "until": .integer(buckets.until),
            "since_at": .instant(UTCInstant(secondsSince1970: buckets.since)), "until_at": .instant(UTCInstant(secondsSince1970: buckets.until)),
        ]
        // As SQLite's: with filters or a grouping, each range's incident is read by its id and
        // checked; without, only the provider's ends before the window's end, from their index.
        let cut: String
        let end = "least(spans.e, CAST(:until AS bigint), coalesce(floor(extract(epoch FROM ended_at))::bigint, CAST(:until AS bigint)))"
        if query.filters.isEmpty && field == nil {
            cut = """
                cut AS (
                    SELECT spans.incident AS id, \(key) AS key, greatest(spans.s, CAST(:since AS bigint)) AS s, \(end) AS e
                    FROM spans LEFT JOIN (SELECT id, ended_at FROM incidents WHERE ended_at IS NOT NULL AND ended_at < :until_at) AS ended
                        ON ended.id = spans.incident)
                """
        } else {
            let clause: String
            if query.near != nil {
                // The distance is exact where the listing reads the rows.
                var all = query
                (all.limit, all.order) = (nil, .id)
                var ids: [Int64] = []
                try forEachIncident(matching: all) { ids.append($0.id) }
                arguments["ids"] = .text("{" + ids.map(String.init).joined(separator: ",") + "}")
                clause = " WHERE id = ANY(CAST(:ids AS bigint[]))"
            } else {
                let filter = try Filter(query)
                arguments.merge(filter.arguments) { $1 }
                clause = filter.clause
            }
            // Each range's incident by its id (OFFSET 0 keeps the planner from joining every
            // incident the filters select, which a window of an hour does not need).
            let conditions = clause.isEmpty ? "" : " AND " + clause.dropFirst(" WHERE ".count)
            cut = """
                cut AS (
                    SELECT spans.incident AS id, counted.key, greatest(spans.s, CAST(:since AS bigint)) AS s, \(end) AS e
                    FROM spans CROSS JOIN LATERAL (SELECT \(key) AS key, ended_at FROM incidents
                        WHERE incidents.id = spans.incident\(conditions) OFFSET 0) AS counted)
                """
        }
        let first = buckets.indexSQL(of: "s", epoch: 0), last = buckets.indexSQL(of: "e - 1", epoch: 0)
        let sql = """
            WITH spans AS (
                SELECT incident_id AS incident, floor(extract(epoch FROM lower(listed)))::bigint AS s, floor(extract(epoch FROM upper(listed)))::bigint AS e
                FROM incident_listed_intervals WHERE NOT upper_inf(listed) AND listed && tstzrange(:since_at, :until_at)
                UNION ALL SELECT incident_id, floor(extract(epoch FROM lower(listed)))::bigint, CAST(:until AS bigint)
                FROM incident_listed_intervals WHERE upper_inf(listed) AND lower(listed) < :until_at),
            \(cut),
            ranges AS (SELECT id, key, \(first) AS first, \(last) AS last FROM cut WHERE s < e),
            joined AS (
                SELECT key, first, last, max(last) OVER (PARTITION BY id ORDER BY first, last ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
                FROM ranges)
            SELECT bucket, key, sum(change)::bigint FROM (
                SELECT greatest(first, coalesce(before + 1, first)) AS bucket, key, 1 AS change FROM joined WHERE coalesce(before, -1) < last
                UNION ALL SELECT last + 1, key, -1 FROM joined WHERE coalesce(before, -1) < last) AS steps
            GROUP BY bucket, key
            """
        return try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "counting a timeline") {
                // As the statistics' count: no JIT (seconds of compiling a statement that runs once), room for the sort.
                try connection.execute("SET LOCAL jit = off; SET LOCAL work_mem = '64MB'", context: "counting a timeline")
                let result = try connection.query(sql, named: arguments, context: "counting a timeline")
                return (0..<result.rowCount).map { row in
                    TimelineStep(bucket: result.int(row, 0) ?? 0, key: field == nil ? nil : result.string(row, 1) ?? "", change: result.int(row, 2) ?? 0)
                }
            }
        }
    }
}
