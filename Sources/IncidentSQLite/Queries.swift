import Foundation
import IncidentCore

extension SQLiteStore: IncidentReader {
    /// The lifecycle columns selected with the content columns.
    static let lifecycleColumns = "id, source, external_id, revision, first_seen_at, last_seen_at, cleared_at"

    public func forEachIncident(matching query: IncidentQuery, _ row: (StoredIncident) throws -> Void) throws {
        if query.search != nil { refreshSearchIndex() }
        try withDatabase { db in
            var (clause, arguments) = try whereClause(query, db: db)
            var sql = "SELECT \(Self.lifecycleColumns), \(columns.list) FROM incidents\(clause) ORDER BY " + Self.orderClause(query.order)
            if let limit = query.limit {
                sql += " LIMIT :limit"
                arguments["limit"] = .integer(Int64(limit))
            }
            let statement = try db.prepare(sql)
            try statement.bind(arguments)
            let decode = try StoredRow(statement, columns: columns)
            while try statement.step() { try row(decode.stored(statement)) }
        }
    }

    /// The WHERE clause (with a leading space, or empty) and its named arguments for `query`.
    func whereClause(_ query: IncidentQuery, db: Database) throws -> (String, [String: SQLiteValue]) {
        var conditions: [String] = []
        var arguments: [String: SQLiteValue] = [:]
        /// `(:name0, :name1, …)` bound to `values`.
        func list(_ name: String, _ values: [String]) -> String {
            for (index, value) in values.enumerated() { arguments["\(name)\(index)"] = .text(value) }
            return "(" + values.indices.map { ":\(name)\($0)" }.joined(separator: ", ") + ")"
        }
        if query.activeOnly {
            // StoredIncident.isActive(at:), in SQL.
            conditions.append("cleared_at IS NULL AND (ended_at IS NULL OR ended_at > :now)")
            arguments["now"] = .text(query.now.rfc3339)
        }
        if !query.sources.isEmpty {
            conditions.append("source IN " + list("source", query.sources))
        }
        if !query.categories.isEmpty {
            conditions.append("category IN " + list("category", query.categories.map(\.rawValue)))
        }
        if let since = query.startedSince {
            conditions.append("started_at >= :since")
            arguments["since"] = .text(since.rfc3339)
        }
        if let until = query.startedUntil {
            conditions.append("started_at < :until")
            arguments["until"] = .text(until.rfc3339)
        }
        if let seen = query.seenSince {
            conditions.append("last_seen_at >= :seen_since")
            arguments["seen_since"] = .text(seen.rfc3339)
        }
        if let road = query.roadContains {
            conditions.append("instr(road, :road) > 0")
            arguments["road"] = .text(road.nfc)
        }
        for (name, box) in [("bbox", query.boundingBox), ("near", query.near.map { BoundingBox.around($0, meters: query.radiusMeters) })] {
            guard let box else { continue }
            conditions.append("latitude BETWEEN :\(name)_min_lat AND :\(name)_max_lat AND longitude BETWEEN :\(name)_min_lon AND :\(name)_max_lon")
            arguments["\(name)_min_lat"] = .real(box.minLatitude)
            arguments["\(name)_max_lat"] = .real(box.maxLatitude)
            arguments["\(name)_min_lon"] = .real(box.minLongitude)
            arguments["\(name)_max_lon"] = .real(box.maxLongitude)
        }
        if let search = query.search {
            let indexedThrough = try db.scalarInt("SELECT indexed_through FROM search_index_state") ?? 0
            for (index, term) in search.nfc.split(whereSeparator: \.isWhitespace).map(String.init).enumerated() {
                // Each term must occur in the description or the location (LIKE: ASCII letters
                // match either case). Terms of 3+ characters first narrow the rows through the
                // trigram index; rows the index has not reached yet are checked directly.
                let pattern = "%" + term.replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
                arguments["term\(index)"] = .text(pattern)
                var condition = "(description LIKE :term\(index) ESCAPE '\\' OR location LIKE :term\(index) ESCAPE '\\')"
                if let match = Self.trigramQuery(term) {
                    arguments["match\(index)"] = .text(match)
                    arguments["indexed_through"] = .integer(indexedThrough)
                    condition = "(id > :indexed_through OR id IN (SELECT rowid FROM incidents_search WHERE incidents_search MATCH :match\(index))) AND "
                        + condition
                }
                conditions.append(condition)
            }
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// An FTS5 query that every row containing `term` matches: its 3-code-point windows
    /// ANDed (the trigram tokenizer works on Unicode code points, not on user-perceived
    /// characters; the index keeps no positions, so a multi-token phrase cannot be asked for;
    /// the LIKE that follows checks the exact substring). Nil for terms shorter than a trigram.
    static func trigramQuery(_ term: String) -> String? {
        let characters = Array(term.unicodeScalars).map(String.init)
        guard characters.count >= 3 else { return nil }
        // Windows that do not overlap, plus the last one, are enough to narrow the candidates.
        var starts = Array(stride(from: 0, through: characters.count - 3, by: 3))
        if starts.last != characters.count - 3 { starts.append(characters.count - 3) }
        return starts.map { start in
            "\"" + characters[start..<start + 3].joined().replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: " AND ")
    }

    static func orderClause(_ order: IncidentOrder) -> String {
        switch order {
        case .started, .distance: return "started_at DESC NULLS LAST, id DESC"
        case .startedAscending: return "started_at ASC NULLS LAST, id ASC"
        case .lastSeen: return "last_seen_at DESC, id DESC"
        case .source: return "source, external_id"
        }
    }

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
    /// snapshot.
    public func statistics(matching query: IncidentQuery, utcOffsetSeconds: Int) throws -> IncidentStatistics {
        if query.search != nil { refreshSearchIndex() }
        return try withDatabase { db in
            try db.readTransaction {
                let (clause, arguments) = try whereClause(query, db: db)
                func groups(_ expression: String, orderByKey: Bool = false, limit: Int? = nil) throws -> [(String, Int)] {
                    var sql = "SELECT \(expression) AS k, count(*) AS n FROM incidents\(clause) GROUP BY k ORDER BY "
                        + (orderByKey ? "k" : "n DESC, k")
                    if let limit { sql += " LIMIT \(limit)" }
                    var out: [(String, Int)] = []
                    try db.query(sql, arguments) { out.append(($0.string(at: 0) ?? "-", $0.int(at: 1) ?? 0)) }
                    return out
                }
                var stats = IncidentStatistics()
                var totalsArguments = arguments
                totalsArguments["now"] = .text(query.now.rfc3339)
                try db.query("""
                    SELECT count(*) AS total,
                           coalesce(sum(cleared_at IS NULL AND (ended_at IS NULL OR ended_at > :now)), 0) AS active,
                           coalesce(sum(cleared_at IS NOT NULL), 0) AS cleared
                    FROM incidents\(clause)
                    """, totalsArguments) { row in
                    stats.total = row.int(at: 0) ?? 0
                    stats.active = row.int(at: 1) ?? 0
                    stats.cleared = row.int(at: 2) ?? 0
                }
                stats.bySource = try groups("source")
                stats.byCategory = try groups("category")
                stats.byRoad = try groups("coalesce(road, '-')", limit: 20)
                stats.byHour = try groups("coalesce(strftime('%H', started_at, '\(utcOffsetSeconds) seconds'), '-')", orderByKey: true)
                return stats
            }
        }
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
                try db.query("""
                    SELECT \(RunRow.columns) FROM ingest_runs
                    WHERE id IN (SELECT max(id) FROM ingest_runs GROUP BY source)
                    """) { row in
                    let run = try RunRow.decode(row)
                    summaries[run.source] = SourceSummary(source: run.source, lastRun: run)
                }
                try db.query("""
                    SELECT source, max(finished_at) AS last_success FROM ingest_runs
                    WHERE status IN ('succeeded', 'incomplete') GROUP BY source
                    """) { row in
                    guard let source = row.string(at: 0) else { return }
                    summaries[source, default: SourceSummary(source: source)].lastSuccessAt = row.instant(at: 1)
                }
                try db.query("""
                    SELECT r.source, count(*), min(r.started_at) FROM ingest_runs r
                    WHERE r.status IN ('failed', 'cancelled')
                      AND r.id > coalesce((SELECT max(s.id) FROM ingest_runs s
                                           WHERE s.source = r.source AND s.status IN ('succeeded', 'incomplete')), 0)
                    GROUP BY r.source
                    """) { row in
                    guard let source = row.string(at: 0) else { return }
                    summaries[source, default: SourceSummary(source: source)].consecutiveFailures = row.int(at: 1) ?? 0
                    summaries[source, default: SourceSummary(source: source)].failingSince = row.instant(at: 2)
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
            // StoredIncident.isActive(at:), in SQL, as in whereClause.
            try db.query("""
                SELECT source, count(*) FROM incidents
                WHERE cleared_at IS NULL AND (ended_at IS NULL OR ended_at > :now) GROUP BY source
                """, ["now": .text(now.rfc3339)]) { row in
                if let source = row.string(at: 0) { counts[source] = row.int(at: 1) ?? 0 }
            }
            return counts
        }
    }

    /// Brings the search index up to date with the incidents added since it was last updated,
    /// in one bulk statement (a few seconds per million rows), on its own read-write
    /// connection. Gives up at once when another process holds the write lock or the file is
    /// read-only: searches are complete without it, only slower.
    func refreshSearchIndex() {
        guard db.path != ":memory:",
              let writer = try? Database(path: db.path, mode: .readWrite, busyTimeout: 0) else { return }
        _ = try? writer.writeTransaction {
            try writer.execute("""
                INSERT INTO incidents_search (rowid, description, location)
                    SELECT id, description, location FROM incidents
                    WHERE id > (SELECT indexed_through FROM search_index_state) ORDER BY id;
                UPDATE search_index_state SET indexed_through = (SELECT coalesce(max(id), 0) FROM incidents);
                """)
        }
    }
}

/// Decodes incidents from a statement that selected the lifecycle and content columns,
/// with the column indexes resolved once.
struct StoredRow {
    let decoder: ContentColumns.Decoder
    let id, source, externalID, revision, firstSeenAt, lastSeenAt, clearedAt: Int32

    init(_ statement: Statement, columns: ContentColumns) throws {
        decoder = try columns.decoder(for: statement)
        (id, source, externalID, revision) = (try statement.column("id"), try statement.column("source"),
                                              try statement.column("external_id"), try statement.column("revision"))
        (firstSeenAt, lastSeenAt, clearedAt) = (try statement.column("first_seen_at"), try statement.column("last_seen_at"),
                                                try statement.column("cleared_at"))
    }

    func stored(_ s: Statement) -> StoredIncident {
        StoredIncident(
            id: s.int64(at: id) ?? 0,
            incident: Incident(source: s.string(at: source) ?? "", externalID: s.string(at: externalID) ?? "",
                               values: decoder.values(s), fields: decoder.fields),
            firstSeenAt: s.instant(at: firstSeenAt) ?? UTCInstant(secondsSince1970: 0),
            lastSeenAt: s.instant(at: lastSeenAt) ?? UTCInstant(secondsSince1970: 0),
            clearedAt: s.instant(at: clearedAt), revision: s.int(at: revision) ?? 1)
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
