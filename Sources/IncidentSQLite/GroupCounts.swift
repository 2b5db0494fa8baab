import IncidentCore

extension SQLiteStore {
    /// `stats --by FIELD [--per day|hour]` as one `GROUP BY` over the rows the query selects
    /// (``Selection``, as for `statistics`: the same conditions as `list`, `--near` by exact
    /// distance), in one snapshot. Local times are `started_at` shifted by `utcOffsetSeconds`
    /// with SQLite's `strftime` modifier. Keys and order as
    /// ``GroupCounter/count(_:matching:by:per:utcOffset:)``, which the tests compare it with.
    public func groupCounts(matching query: IncidentQuery, by field: IncidentGrouping, per bucket: TimeBucket?,
                            utcOffsetSeconds: Int) throws -> [GroupCount] {
        try withDatabase { db in
            try db.readTransaction {
                let selection = try Selection(query, reading: .unordered, db: db)
                var arguments = selection.arguments
                let shift = "'\(utcOffsetSeconds) seconds'"
                func local(_ format: String) -> String { "coalesce(strftime('\(format)', started_at, \(shift)), '')" }
                let key: String
                switch field {
                case .source: key = "source"
                case .category: key = "category"
                case .road: key = "coalesce(road, '')"
                case .providerCategory: key = "coalesce(provider_category, '')"
                case .restriction: key = "coalesce(restriction, '')"
                case .status:
                    key = Selection.status
                    arguments["now"] = .text(query.now.rfc3339)
                case .hour: key = local("%H")
                case .day: key = local("%Y-%m-%d")
                }
                let bucketColumn: String = switch bucket {
                case nil: "NULL"
                case .day: local("%Y-%m-%d")
                case .hour: local("%Y-%m-%d %H")
                }
                let sql = "SELECT \(bucketColumn) AS b, \(key) AS k, count(*) AS n FROM \(selection.from)\(selection.whereClause) GROUP BY b, k"
                var counts: [GroupCount] = []
                try db.query(sql, arguments) { row in
                    counts.append(GroupCount(bucket: row.string(at: 0), key: row.string(at: 1) ?? "", count: row.int(at: 2) ?? 0))
                }
                return GroupCounter.sorted(counts, by: field)
            }
        }
    }
}
