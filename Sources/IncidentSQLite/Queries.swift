import Foundation
import IncidentCore

extension SQLiteStore: IncidentReader, ListingRowReader {
    /// The lifecycle columns selected with the content columns.
    static let lifecycleColumns = "id, source, external_id, revision, first_seen_at, last_seen_at, cleared_at"

    /// Reads in one snapshot (a read transaction): the road names and search estimates that
    /// shape the statement are those of the rows it reads.
    public func forEachIncident(matching query: IncidentQuery, _ row: (StoredIncident) throws -> Void) throws {
        var decode: StoredRow?
        try eachListed(query) { statement in
            if decode == nil { decode = try StoredRow(statement, columns: columns) }
            try row(decode!.stored(statement))
        }
    }

    /// The rows of ``forEachIncident(matching:_:)`` as its statement holds them.
    public func forEachListingRow(matching query: IncidentQuery, _ row: (any ListingRow) throws -> Void) throws {
        try eachListed(query, row)
    }

    /// Steps the statement of a listing in one snapshot, calling `row` at each row.
    private func eachListed(_ query: IncidentQuery, _ row: (Statement) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                let (sql, arguments, _) = try listing(query, db: db)
                let statement = try db.prepare(sql)
                try statement.bind(arguments)
                while try statement.step() { try row(statement) }
            }
        }
    }

    /// The SELECT of a listing, its arguments, and the index that drives it.
    func listing(_ query: IncidentQuery, db: Database) throws -> (sql: String, arguments: [String: SQLiteValue], driver: String) {
        var selection = try Selection(query, reading: .ordered(limit: query.limit), db: db)
        if let ids = try Self.firstListed(query, selection, db: db) {
            (selection.conditions, selection.arguments) = (["id IN (\(ids.map(String.init).joined(separator: ", ")))"], [:])
        }
        var sql = "SELECT \(Self.lifecycleColumns), \(columns.list) FROM \(selection.from)\(selection.whereClause) ORDER BY "
            + Selection.orderClause(query.order, near: query.near)
        if let limit = query.limit {
            sql += " LIMIT :limit"
            selection.arguments["limit"] = .integer(Int64(limit))
        }
        return (sql, selection.arguments, selection.driver)
    }

    /// A page of `list --at T` in start order with no other filter (the server's `datetime`
    /// instant too): the ids of the page, found reading about the rows it lists, or nil when
    /// the listing's own statement is to run. The incidents listed at T are those of the
    /// intervals containing T (tens of thousands at 1,000,000 incidents): for the open ones
    /// (most of them), the first in the page's order come from their indexes in start order
    /// (0016, 0017) alone; the ended ones (a few thousand) have their starts read from the
    /// index of starts by id (0017); only the first of all in the order are read whole and
    /// checked (``PollTransitions/seenAndNotEnded(at:)``). Reading every candidate's row cost
    /// 2.8 s at p95 on the history bench (issue 22), every candidate's start from
    /// `incidents_active` 0.6 s; the ended ones' starts from their rows and the open ones from
    /// their index in start order from the top, 1,000 to 1,450 pages at each moment (p95 336 ms,
    /// max 2.0 s where they were not in memory), now about 250. Should more than half of the
    /// first candidates fail the check, the listing's own statement runs.
    static func firstListed(_ query: IncidentQuery, _ selection: Selection, db: Database) throws -> [Int64]? {
        guard let instant = query.listedAt, let limit = query.limit, query.filters.isEmpty, !query.activeOnly,
              query.inForce == nil, query.afterID == nil, query.beforeID == nil,
              [.started, .startedAscending].contains(query.order), selection.driver == "incident_listed_intervals" else { return nil }
        let seconds: SQLiteValue = .integer(PollTransitions.intervalSeconds(instant))
        var ids: [Int64] = []
        try db.query(firstListedSQL(query.order), ["listed_at": .text(instant.rfc3339), "listed_seconds": seconds,
                                                   "first": .integer(Int64(2 * limit)), "limit": .integer(Int64(limit))]) {
            ids.append($0.int64(at: 0) ?? 0)
        }
        if ids.count == limit { return ids }
        let candidates = try db.scalarInt("SELECT count(*) FROM (\(PollTransitions.listedIntervals(containing: ":listed_seconds")) LIMIT :first)",
                                          ["listed_seconds": seconds, "first": .integer(Int64(2 * limit))]) ?? 0
        // Every candidate checked, or a page short of the check.
        return candidates < 2 * limit ? ids : nil
    }

    /// The statement of ``firstListed(_:_:db:)``: the ids of the first `:limit` incidents listed
    /// at `:listed_at` (`:listed_seconds`) among the first `:first` candidates in `order`.
    ///
    /// The open intervals listed by T in three parts, each read in the order's index from where
    /// it starts to its first `:first` (of which the first `:first` of all are among): those
    /// started by T, from T down in `incident_listed_open_by_started` (skipping only the
    /// intervals listed after T of incidents started before it, not every one listed after T);
    /// those started after T, which were listed before their start, from
    /// `incident_listed_open_ahead` (0017, only such intervals: a start after T ≥ the
    /// interval's own start); those without a start. The ended ones' starts from
    /// `incidents_started_by_id` (0017), not from the incidents' rows.
    static func firstListedSQL(_ order: IncidentOrder) -> String {
        let order = Selection.orderClause(order, near: nil)
        let open = "SELECT * FROM (SELECT incident_id AS id, started_at FROM incident_listed_open INDEXED BY"
        return """
            WITH ended(id) AS MATERIALIZED (
                SELECT incident_id FROM incident_listed_intervals WHERE listed_from <= :listed_seconds AND listed_until > :listed_seconds),
            starts(id, started_at) AS (
                SELECT id, started_at FROM incidents INDEXED BY incidents_started_by_id WHERE id IN ended
                UNION ALL \(open) incident_listed_open_by_started
                    WHERE started_at <= :listed_at AND listed_from <= :listed_seconds ORDER BY \(order) LIMIT :first)
                UNION ALL \(open) incident_listed_open_ahead
                    WHERE \(listedAhead) AND started_at > :listed_at AND listed_from <= :listed_seconds ORDER BY \(order) LIMIT :first)
                UNION ALL \(open) incident_listed_open_by_started
                    WHERE started_at IS NULL AND listed_from <= :listed_seconds ORDER BY \(order) LIMIT :first))
            SELECT id FROM incidents WHERE \(PollTransitions.seenAndNotEnded(at: ":listed_at"))
                AND id IN (SELECT id FROM starts ORDER BY \(order) LIMIT :first)
            ORDER BY \(order) LIMIT :limit
            """
    }

    /// An open interval listed before its incident's start: the condition of the partial index
    /// `incident_listed_open_ahead` (0017), word for word so that SQLite can use it. Implied by
    /// a start after T for an interval listed by T: T is a whole second, the interval's start
    /// (``PollTransitions/intervalSeconds(_:)``) at or before it, and RFC 3339 UTC text compares
    /// in time order.
    static let listedAhead = "started_at > strftime('%Y-%m-%dT%H:%M:%SZ', listed_from + 1577836800, 'unixepoch')"

    public func history(ofIncident id: Int64) throws -> IncidentHistory? {
        try withDatabase { db in
            try db.readTransaction {
                let row = try db.prepare("SELECT \(Self.lifecycleColumns), \(columns.list) FROM incidents WHERE id = :id")
                try row.bind(["id": .integer(id)])
                guard try row.step() else { return nil }
                let stored = try StoredRow(row, columns: columns).stored(row)
                let history = try db.prepare("""
                    SELECT revision, \(columns.list), cleared_at, superseded_at
                    FROM incident_revisions WHERE incident_id = :id ORDER BY revision
                    """)
                try history.bind(["id": .integer(id)])
                let decoder = try columns.decoder(for: history)
                let (revision, clearedAt, supersededAt) = (try history.column("revision"), try history.column("cleared_at"),
                                                           try history.column("superseded_at"))
                var revisions: [IncidentRevision] = []
                while try history.step() {
                    revisions.append(IncidentRevision(
                        revision: history.int(at: revision) ?? 0,
                        incident: Incident(source: stored.incident.source, externalID: stored.incident.externalID,
                                           values: decoder.values(history), fields: columns.fields),
                        clearedAt: history.instant(at: clearedAt),
                        supersededAt: history.instant(at: supersededAt) ?? UTCInstant(secondsSince1970: 0)))
                }
                var rejections: [StoredRejection] = []
                try db.query("""
                    SELECT \(RejectionRow.columns) FROM rejected_records
                    WHERE source = :source AND external_id = :external_id ORDER BY id DESC LIMIT 20
                    """, ["source": .text(stored.incident.source), "external_id": .text(stored.incident.externalID)]) {
                    rejections.append(try RejectionRow.decode($0))
                }
                return IncidentHistory(current: stored, revisions: revisions, rejections: rejections)
            }
        }
    }

    /// Counts by source, category, road (the 20 most frequent) and hour of start, read in one
    /// snapshot. Without filters, from `incident_counts` and the active-set index (no row is
    /// read); with filters, by grouping the selected rows on the same keys.
    public func statistics(matching query: IncidentQuery, utcOffsetSeconds: Int) throws -> IncidentStatistics {
        try withDatabase { db in
            try db.readTransaction {
                let selection = try Selection(query, reading: .unordered, db: db)
                var groups: [String: [String: Int]] = [:]
                var stats = IncidentStatistics()
                var arguments = selection.arguments
                arguments["now"] = .text(query.now.rfc3339)
                if selection.conditions.isEmpty {
                    try db.query("SELECT dimension, key, incidents FROM incident_counts") { row in
                        groups[row.string(at: 0) ?? "", default: [:]][row.string(at: 1) ?? ""] = row.int(at: 2) ?? 0
                    }
                    stats.total = groups["source", default: [:]].values.reduce(0, +)
                    try db.query(Self.listedCounts, ["now": .text(query.now.rfc3339)]) { row in
                        stats.cleared = stats.total - (row.int(at: 0) ?? 0)
                        (stats.active, stats.planned, stats.suspended) = (row.int(at: 1) ?? 0, row.int(at: 2) ?? 0, row.int(at: 3) ?? 0)
                    }
                } else {
                    let keys = DerivedIndexes.countedKeys
                    try db.query(Self.groupedCounts(selection), arguments) { row in
                        let count = row.int(at: Int32(keys.count)) ?? 0
                        stats.total += count
                        stats.active += row.int(at: Int32(keys.count + 1)) ?? 0
                        stats.planned += row.int(at: Int32(keys.count + 2)) ?? 0
                        stats.suspended += row.int(at: Int32(keys.count + 3)) ?? 0
                        stats.cleared += row.int(at: Int32(keys.count + 4)) ?? 0
                        for (index, key) in keys.enumerated() {
                            groups[key.dimension, default: [:]][row.string(at: Int32(index)) ?? "", default: 0] += count
                        }
                    }
                }
                stats.group(sources: groups["source", default: [:]], categories: groups["category", default: [:]],
                            roads: groups["road", default: [:]], startMinutes: groups["start_minute", default: [:]],
                            utcOffsetSeconds: utcOffsetSeconds)
                return stats
            }
        }
    }

    /// The incidents no complete poll cleared, and how many of them are active, planned and
    /// suspended at `:now` (``Selection/status``), from the active-set index alone.
    static let listedCounts = """
        SELECT count(*), coalesce(sum(status = 'active'), 0), coalesce(sum(status = 'planned'), 0), coalesce(sum(status = 'suspended'), 0)
        FROM (SELECT \(Selection.status) AS status FROM incidents INDEXED BY incidents_active WHERE cleared_at IS NULL)
        """

    /// One pass over the selected rows, grouped on every counted key at once: the keys, then
    /// the count, the active, planned, suspended and cleared among them.
    static func groupedCounts(_ selection: Selection) -> String {
        let keys = DerivedIndexes.countedKeys
        return """
            SELECT \(keys.map(\.key).joined(separator: ", ")), count(*), sum(status = 'active'), sum(status = 'planned'),
                   sum(status = 'suspended'), sum(status = 'cleared')
            FROM (SELECT *, \(Selection.status) AS status FROM \(selection.from)\(selection.whereClause))
            GROUP BY \(keys.indices.map { String($0 + 1) }.joined(separator: ", "))
            """
    }

    public func runs(source: String?, limit: Int, failuresFirst: Bool) throws -> [IngestRun] {
        try withDatabase { db in
            var sql = "SELECT \(RunRow.columns) FROM ingest_runs"
            var arguments: [String: SQLiteValue] = ["limit": .integer(Int64(limit))]
            if let source {
                sql += " WHERE source = :source"
                arguments["source"] = .text(source)
            }
            sql += " ORDER BY " + (failuresFirst ? "status IN ('succeeded', 'incomplete'), " : "") + "id DESC LIMIT :limit"
            var runs: [IngestRun] = []
            try db.query(sql, arguments) { runs.append(try RunRow.decode($0)) }
            return runs
        }
    }

    public func rejections(runID: Int64) throws -> [StoredRejection] {
        try withDatabase { db in
            var rejections: [StoredRejection] = []
            try db.query("SELECT \(RejectionRow.columns) FROM rejected_records WHERE run_id = :run ORDER BY id",
                         ["run": .integer(runID)]) { rejections.append(try RejectionRow.decode($0)) }
            return rejections
        }
    }

    public func sourceSummaries() throws -> [SourceSummary] {
        try withDatabase { db in
            try db.readTransaction {
                var summaries: [String: SourceSummary] = [:]
                try db.query("\(RunLogSQL.latestRuns) SELECT \(RunRow.columns) FROM ingest_runs WHERE id IN (SELECT last_id FROM latest)") { row in
                    let run = try RunRow.decode(row)
                    summaries[run.source] = SourceSummary(source: run.source, lastRun: run)
                }
                try db.query(RunLogSQL.sinceLastSuccess) { row in
                    guard let source = row.string(at: 0) else { return }
                    summaries[source, default: SourceSummary(source: source)].lastSuccessAt = row.instant(at: 1)
                    summaries[source, default: SourceSummary(source: source)].consecutiveFailures = row.int(at: 2) ?? 0
                    summaries[source, default: SourceSummary(source: source)].failingSince = row.instant(at: 3)
                    summaries[source, default: SourceSummary(source: source)].staleRuns = row.int(at: 4) ?? 0
                }
                try db.query("SELECT source, exhausted_until FROM source_state WHERE exhausted_until IS NOT NULL") { row in
                    guard let source = row.string(at: 0) else { return }
                    summaries[source, default: SourceSummary(source: source)].quotaExhaustedUntil = row.instant(at: 1)
                }
                return summaries.values.sorted { $0.source < $1.source }
            }
        }
    }

    public func activeIncidentCounts(at now: UTCInstant) throws -> [String: Int] {
        try withDatabase { db in
            var counts: [String: Int] = [:]
            // StoredIncident.status(at:) == .active, in SQL, as in Selection. Through the active
            // set's index: grouping by source, SQLite read every incident in the order of the
            // (source, external_id) index.
            try db.query("""
                SELECT source, count(*) FROM incidents INDEXED BY incidents_active
                WHERE cleared_at IS NULL AND \(Selection.status) = 'active' GROUP BY source
                """, ["now": .text(now.rfc3339)]) { row in
                if let source = row.string(at: 0) { counts[source] = row.int(at: 1) ?? 0 }
            }
            return counts
        }
    }
}

/// Decodes incidents from a statement that selected the lifecycle and content columns,
/// with the column indexes resolved once (``StoredRowDecoder``).
struct StoredRow {
    let decoder: StoredRowDecoder

    init(_ statement: Statement, columns: ContentColumns) throws {
        decoder = try StoredRowDecoder(fields: columns.fields, column: statement.column)
    }

    func stored(_ s: Statement) -> StoredIncident {
        decoder.stored(s)
    }
}

enum RejectionRow {
    static let columns = "run_id, source, external_id, position, reason, excerpt, rejected_at"

    static func decode(_ s: Statement) throws -> StoredRejection {
        func text(_ name: String) throws -> String? { s.string(at: try s.column(name)) }
        return StoredRejection(
            runID: try s.int64(at: s.column("run_id")) ?? 0, source: try text("source") ?? "",
            rejectedAt: try s.instant(at: s.column("rejected_at")) ?? UTCInstant(secondsSince1970: 0),
            record: RejectedRecord(externalID: try text("external_id"), position: try text("position") ?? "",
                                   reason: try text("reason") ?? "", excerpt: try text("excerpt")))
    }
}
