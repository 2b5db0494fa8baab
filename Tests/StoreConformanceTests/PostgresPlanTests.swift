import Foundation
import IncidentCore
@testable import IncidentPostgres
import TestSupport
import Testing

/// Every statement a poll, a prune and a status/metrics refresh runs on PostgreSQL, observed as
/// it runs (``Connection/statementObserver``, so a statement added later is checked without
/// being listed here) and, there, inside its transaction with its temporary tables and its
/// bound parameters, run once under `EXPLAIN (ANALYZE)` in a savepoint that is rolled back:
/// none may read more rows of a table that grows with the history than the poll could explain
/// (issue 23, PostgreSQL's part of PollPlanTests). The database holds 20,000 cleared incidents,
/// runs, revisions and rejected records of the polled source, analyzed as autovacuum would;
/// a plan that reads them whole (a Seq Scan, or an index range over every incident of the
/// source) reads at least 10,000 rows, the fixture's polls about ten.
@Suite("PostgreSQL poll, prune and status plans: nothing grows with the history (issue 23)")
struct PostgresPlanTests {
    /// The tables whose size grows with the history: the incidents, their revisions, the runs,
    /// the records set aside, the transition log and its listed intervals.
    static let historyTables: Set<String> = ["incidents", "incident_revisions", "ingest_runs", "rejected_records",
                                             "incident_transitions", "incident_listed_intervals"]
    /// The most rows a plan node may read of one of them here: the fixture's polls list about
    /// ten incidents and the prunes delete batches of 100; the history is 20,000 of each. A
    /// larger poll may read ``historyReadsPerRecord`` rows per staged record.
    static let rowBound = 1000
    /// The rows of a history table a poll may read for each of its records: its incident, and
    /// that incident's own entries in the log (a replay recomputes the ends of its ranges from
    /// them: an appearance, a clear, the replay's reopening and its clear).
    static let historyReadsPerRecord = 5
    static let historySize = 20_000
    /// A poll's staging tables: temporary, without statistics, so the planner guesses their
    /// sizes and may read one again for every row of another (a join from `poll_rows` once
    /// rescanned the staged ids for each incident: 28 s for a 30,000-record file, issue 23).
    static let stagingTables = ["poll_rows", "poll_plan", "poll_transitions", "poll_count_changes"]
    /// The most rows a plan node may read of a staging table, as a multiple of the rows it holds
    /// when the statement starts: a scan reads them once; a rescan per row of another table
    /// reads them as many times as that table has rows.
    static let stagedReadFactor = 3

    /// The statements run while observing, and the plan nodes that read too much.
    final class Observed: @unchecked Sendable {  // used on the calling thread only
        var statements: [String] = []
        var failures: [String] = []
    }

    /// Runs `body` with every statement of `store` explained where it runs.
    static func observing(_ store: PostgresStore, tables: Set<String> = historyTables, _ body: () throws -> Void) throws -> Observed {
        let observed = Observed()
        store.pool.statementObserver = { connection, sql, parameters in
            let statement = sql.trimmingCharacters(in: .whitespacesAndNewlines)
            guard ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(where: { statement.uppercased().hasPrefix($0) }) else { return }
            observed.statements.append(statement)
            do {
                try connection.execute("SAVEPOINT plan_check", context: "a plan check")
                defer { _ = try? connection.execute("ROLLBACK TO SAVEPOINT plan_check; RELEASE SAVEPOINT plan_check", context: "a plan check") }
                let staged = try Self.stagedRows(connection)
                let plan = try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters, context: "a plan check")
                let bound = max(rowBound, historyReadsPerRecord * (staged["poll_rows"] ?? 0))
                let scans = try Self.historyScans(plan.string(0, 0) ?? "", tables: tables, bound: bound)
                    + Self.stagedScans(plan.string(0, 0) ?? "", staged: staged)
                observed.failures += scans.map { "\($0) in: \(statement)" }
            } catch {
                observed.failures.append("EXPLAIN failed (\(error)) for: \(statement)")
            }
        }
        defer { store.pool.statementObserver = nil }
        try body()
        return observed
    }

    /// A plan node of EXPLAIN (ANALYZE, FORMAT JSON) that reads a table, and the rows it read:
    /// rows returned plus rows removed by a filter or a recheck, over all loops (EXPLAIN
    /// reports both per loop).
    struct PlanRead {
        let node: [String: Any]
        let relation: String
        let rows: Int
        let loops: Int
    }

    /// Every node of the plan `json` that reads a table, at any depth.
    static func reads(_ json: String) throws -> [PlanRead] {
        let top = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        var found: [PlanRead] = []
        func visit(_ node: [String: Any]) {
            if let relation = node["Relation Name"] as? String {
                func number(_ key: String) -> Double { (node[key] as? NSNumber)?.doubleValue ?? 0 }
                let loops = max(1, number("Actual Loops"))
                let rows = (number("Actual Rows") + number("Rows Removed by Filter") + number("Rows Removed by Index Recheck")) * loops
                found.append(PlanRead(node: node, relation: relation, rows: Int(rows), loops: Int(loops)))
            }
            for child in node["Plans"] as? [[String: Any]] ?? [] { visit(child) }
        }
        for entry in top { if let plan = entry["Plan"] as? [String: Any] { visit(plan) } }
        return found
    }

    /// The plan nodes of `json` that read more than `bound` rows of a history table (``reads(_:)``).
    static func historyScans(_ json: String, tables: Set<String> = historyTables, bound: Int = rowBound) throws -> [String] {
        try reads(json).filter { tables.contains($0.relation) && $0.rows > bound }.map { read in
            let index = (read.node["Index Name"] as? String).map { " using \($0)" } ?? ""
            let conditions = ["Index Cond", "Filter"].compactMap { key in (read.node[key] as? String).map { "\(key): \($0)" } }
            return "\(read.node["Node Type"] ?? "?") on \(read.relation)\(index) read \(read.rows) rows (\(conditions.joined(separator: "; ")))"
        }
    }

    /// The rows each staging table of the connection's transaction holds (``stagingTables``
    /// that exist), counted where a statement is about to run.
    static func stagedRows(_ connection: Connection) throws -> [String: Int] {
        let result = try connection.query("""
            SELECT t, (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM pg_temp.' || t, false, true, '')))[1]::text
            FROM unnest(ARRAY['\(stagingTables.joined(separator: "', '"))']) t WHERE to_regclass('pg_temp.' || t) IS NOT NULL
            """, context: "a plan check")
        var rows: [String: Int] = [:]
        for row in 0..<result.rowCount {
            if let table = result.string(row, 0) { rows[table] = Int(result.string(row, 1) ?? "") ?? 0 }
        }
        return rows
    }

    /// The plan nodes of `json` that read a staging table more than ``stagedReadFactor`` times
    /// the rows `staged` gives it (at least once over; ``reads(_:)``).
    static func stagedScans(_ json: String, staged: [String: Int]) throws -> [String] {
        try reads(json).compactMap { read in
            guard let rows = staged[read.relation], read.rows > stagedReadFactor * max(rows, 1) else { return nil }
            return "\(read.node["Node Type"] ?? "?") on \(read.relation) read \(read.rows) rows in \(read.loops) loops, "
                + "\(stagedReadFactor) × its \(rows) staged rows at most"
        }
    }

    /// A PostgreSQL store whose history holds ``historySize`` cleared incidents of `gits` (with
    /// a revision each), as many runs of `gits` (alternately succeeded and failed, all before
    /// t0) and rejected records, and one run of a source polled no more (`archived`), analyzed.
    /// With `log`, also ``historySize`` / 10 active incidents of another source (`wzdx`), and the
    /// transition log of it all (each incident's appearance, and clear) with its listed intervals:
    /// the log's statements must read neither.
    static func withHistory(log: Bool = false, _ body: (PostgresStore) throws -> Void) throws {
        try TestServer.withDatabase { name in
            let store = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t0))
            let n = historySize
            try store.withConnection { connection in
                try connection.execute("""
                    INSERT INTO ingest_runs (source, started_at, finished_at, status, observed_at)
                    SELECT 'gits', t, t, CASE WHEN g % 2 = 0 THEN 'succeeded' ELSE 'failed' END, t
                    FROM generate_series(1, \(n)) g, LATERAL (SELECT timestamptz '2020-01-01' + g * interval '5 minutes' AS t) x;
                    INSERT INTO ingest_runs (id, source, started_at, finished_at, status, observed_at)
                    VALUES (0, 'archived', '2019-06-01T00:00:00Z', '2019-06-01T00:00:00Z', 'succeeded', '2019-06-01T00:00:00Z');
                    INSERT INTO incidents (source, external_id, category, description, road, location, latitude, longitude, started_at,
                                           content_hash, revision, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id, cleared_at)
                    SELECT 'gits', 'H' || g, 'accident', '[사고] 지난 사고 ' || g, '도로' || (g % 500), '구간 ' || g,
                           37 + (g % 1000) / 1000.0, 127 + (g % 997) / 1000.0, t, g, 2, t, t, g, g, t + interval '1 hour'
                    FROM generate_series(1, \(n)) g, LATERAL (SELECT timestamptz '2020-01-01' + g * interval '5 minutes' AS t) x;
                    INSERT INTO incident_revisions (incident_id, revision, category, description, content_hash, superseded_at)
                    SELECT id, 1, category, description, content_hash + 1, first_seen_at FROM incidents;
                    INSERT INTO rejected_records (run_id, source, external_id, position, reason, rejected_at)
                    SELECT id, source, 'R' || id, 'item 1', 'bad coordinate', started_at FROM ingest_runs;
                    """, context: "making the history")
                if log {
                    try connection.execute("""
                        INSERT INTO incidents (source, external_id, category, description, road, location, latitude, longitude, started_at,
                                               content_hash, revision, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id)
                        SELECT 'wzdx', 'W' || g, 'roadwork', '[공사] 다른 출처 ' || g, '도로' || (g % 500), '구간 ' || g,
                               36 + (g % 1000) / 1000.0, 127 + (g % 997) / 1000.0, t, g, 1, t, t, 0, 0
                        FROM generate_series(1, \(n / 10)) g, LATERAL (SELECT timestamptz '2020-01-01' + g * interval '5 minutes' AS t) x;
                        INSERT INTO incident_transitions (cursor, incident_id, source, external_id, run_id, kind, at)
                        SELECT row_number() OVER (ORDER BY at, id, kind), id, source, external_id, run_id, kind, at FROM (
                            SELECT id, source, external_id, first_seen_run_id AS run_id, 'appeared' AS kind, first_seen_at AS at FROM incidents
                            UNION ALL
                            SELECT id, source, external_id, last_seen_run_id, 'cleared', cleared_at FROM incidents WHERE cleared_at IS NOT NULL) e;
                        INSERT INTO incident_listed_intervals (opening, incident_id, listed)
                        SELECT o.cursor, o.incident_id, tstzrange(o.at, i.cleared_at, '[)')
                        FROM incident_transitions o JOIN incidents i ON i.id = o.incident_id WHERE o.kind = 'appeared';
                        UPDATE change_feed SET last_cursor = (SELECT max(cursor) FROM incident_transitions);
                        """, context: "making the history")
                    #expect(try connection.query("SELECT last_cursor FROM change_feed", context: "a test").int64(0, 0) == Int64(n * 2 + n / 10))
                }
                try PostgresCounts.recount(connection: connection)
                try connection.execute("ANALYZE", context: "making the history")
            }
            try body(store)
        }
    }

    /// Polls of every kind of record: inserted, unchanged, changed, reopened (an incident of the
    /// history), repeated, set aside with an id; an older replay; two answers of two pages (the
    /// first looks up the previous complete poll), the second clearing; a replayed file of an
    /// earlier time.
    static func polls(_ store: PostgresStore) throws {
        let holder = LeaseHolder(host: "plan-test", pid: 1)
        _ = try store.quotaResumesAt(source: "gits")
        _ = try store.claim(source: "gits", holder: holder, now: t0, leaseSeconds: 60, notStartedAfter: nil)
        _ = try store.renew(source: "gits", holder: holder, now: t0, leaseSeconds: 60)
        try poll(store, live("E0", "E1", "E2", "E3", "H7"), at: t0)
        var records = live("E0", "E1", "E4", "E0", "H7")
        records.append(.incident(incident("E2", description: "[공사] 바뀐 설명")))
        records.append(.rejected(RejectedRecord(externalID: "E3", position: "item 7", reason: "bad coordinate")))
        try poll(store, records, at: t1)
        try poll(store, [.incident(incident("E1", description: "[공사] 예전 설명"))], at: t0.adding(seconds: -600))
        for (minutes, cleared) in [(20, 1), (30, 3)] {
            let run = try poll(store, live("E0", "E1"), at: t1.adding(seconds: Int64(minutes) * 60), verdict: ResponseVerdict(pages: 2))
            #expect(run.counts.cleared == cleared, "\(run)")
        }
        // A replayed file of an earlier time, one record set aside: history at its own time,
        // from the ids it lists (not every incident of the source, issue 23).
        try poll(store, live("E1", "E4") + [.rejected(RejectedRecord(externalID: "H9", position: "item 3", reason: "a test"))],
                 at: t1.adding(seconds: 3600), origin: .file(path: "old.xml", complete: false), observedAt: t0.adding(seconds: -1200))
        try store.release(source: "gits", holder: holder)
        try store.recordRun(IngestRun(source: "its", startedAt: t2, finishedAt: t2, status: .failed, error: "quota",
                                      resumesAt: t2.adding(seconds: 3600)))
    }

    @Test("a poll of every kind of record: each statement reads the poll's rows, never the history, the transition log or another source's active incidents")
    func pollStatements() throws {
        try Self.withHistory(log: true) { store in
            #expect(try integer(store, "SELECT count(*) FROM incident_transitions") ?? 0 > Self.historySize * 2)
            let observed = try Self.observing(store) { try Self.polls(store) }
            #expect(observed.failures == [])
            #expect(observed.statements.contains { $0.hasPrefix("INSERT INTO poll_plan") })
            #expect(observed.statements.contains { $0.contains("UPDATE incidents SET cleared_at") })
            // The transition log's statements: the poll's collection, the clears it logs, the
            // cursors (change_feed), the append, the listed intervals (issue 22).
            for statement in ["INSERT INTO poll_transitions", "UPDATE change_feed", "INSERT INTO incident_transitions",
                              "INSERT INTO incident_listed_intervals", "UPDATE incident_listed_intervals"] {
                #expect(observed.statements.contains { $0.contains(statement) }, "no \(statement) observed")
            }
            #expect(observed.statements.contains { $0.contains("SELECT max(observed_at) FROM ingest_runs") })
            #expect(observed.statements.contains { $0.contains("SELECT id FROM poll_plan WHERE id IS NOT NULL") },
                    "the replayed file's history, from the ids it lists")
            #expect(observed.statements.contains { $0.contains("SELECT count(*), max(last_seen_at) FROM incidents") },
                    "the older replay's count of what a later poll listed (walk finding 24)")
            #expect(try integer(store, "SELECT count(*) FROM incidents WHERE cleared_at IS NULL AND source = 'gits'") == 2)
        }
    }

    @Test("a replayed file of 2,000 stored incidents: no statement reads the staged rows again for each incident (issue 23)")
    func replayStatements() throws {
        try Self.withHistory(log: true) { store in
            // The history's incidents, listed again by a file of an earlier time than their clears.
            let records = (1...2000).map { FeedRecord.incident(incident("H\($0)", description: "[사고] 지난 사고 \($0)")) }
            let observed = try Self.observing(store) {
                try poll(store, records, at: t1, origin: .file(path: "old.xml", complete: false), observedAt: UTCInstant(rfc3339: "2020-01-01T00:30:00Z")!)
            }
            #expect(observed.failures == [])
            #expect(observed.statements.contains { $0.contains("INSERT INTO poll_transitions") })
        }
    }

    @Test("prune, deleting and not: each batch is found through an index")
    func pruneStatements() throws {
        try Self.withHistory { store in
            let observed = try Self.observing(store) {
                // Nothing before the history; then the incidents cleared, and the runs finished,
                // in its first 1,000 minutes (187 and 199, in batches of 100), with the record
                // each run set aside.
                #expect(try store.prune(before: UTCInstant(rfc3339: "2019-12-31T00:00:00Z")!, batchSize: 100) == PruneCounts())
                let counts = try store.prune(before: UTCInstant(rfc3339: "2020-01-01T16:40:00Z")!, batchSize: 100)
                #expect(counts == PruneCounts(incidents: 187, revisions: 187, runs: 199, rejectedRecords: 199), "\(counts)")
            }
            #expect(observed.failures == [])
            #expect(observed.statements.contains { $0.hasPrefix("DELETE FROM ingest_runs") })
            #expect(observed.statements.contains { $0.contains("DELETE FROM incidents") })
        }
    }

    @Test("status and metrics: each source's last runs, and the active set, never every run or incident")
    func statusStatements() throws {
        try Self.withHistory { store in
            try Self.polls(store)
            let observed = try Self.observing(store) {
                let (summaries, active) = (try store.sourceSummaries(), try store.activeIncidentCounts(at: t2))
                #expect(summaries.map(\.source) == ["archived", "gits", "its"])
                #expect(active == ["gits": 2])
            }
            #expect(observed.failures == [])
            #expect(observed.statements.contains { $0.contains("FROM ingest_runs") })
        }
    }

    @Test("stats (and --by status) without filters: the counts of 0012 and the listed incidents that are not active, never every incident")
    func statsStatements() throws {
        try Self.withHistory { store in
            try Self.polls(store)
            try store.withConnection { connection in
                // Listed incidents of every status at t2: ended, suspended, planned by a future start and without one.
                try connection.execute("""
                    UPDATE incidents SET ended_at = '2023-03-21T05:30:00Z' WHERE external_id = 'E0';
                    UPDATE incidents SET validity = 'suspended' WHERE external_id = 'E1';
                    INSERT INTO incidents (source, external_id, category, started_at, validity, content_hash, first_seen_at, last_seen_at,
                                           first_seen_run_id, last_seen_run_id)
                    VALUES ('gits', 'P1', 'roadwork', '2023-03-22T00:00:00Z', NULL, 1, now(), now(), 1, 1),
                           ('gits', 'P2', 'roadwork', NULL, 'planned', 1, now(), now(), 1, 1),
                           ('gits', 'A1', 'roadwork', NULL, NULL, 1, now(), now(), 1, 1);
                    ANALYZE incidents;
                    """, context: "a test")
                try PostgresCounts.recount(connection: connection)
            }
            var stats = IncidentStatistics()
            var statuses: [GroupCount] = []
            let observed = try Self.observing(store) {
                stats = try store.statistics(matching: IncidentQuery(now: t2), utcOffsetSeconds: 32_400)
                statuses = try store.groupCounts(matching: IncidentQuery(now: t2), by: .status, per: nil, utcOffsetSeconds: 0)
            }
            #expect(statuses.map { "\($0.key) \($0.count)" } == ["cleared \(Self.historySize + 3)", "planned 2", "active 1", "ended 1", "suspended 1"])
            #expect(observed.failures == [])
            let expected: [Int] = [Self.historySize + 8, 1, 1, 2, Self.historySize + 3]
            #expect([stats.total, stats.active, stats.suspended, stats.planned, stats.cleared] == expected)
            #expect(stats.distinctRoads == 502 && stats.byHour.count == 25 && stats.byHour.first?.0 == "", "\(stats)")
            #expect(observed.statements.contains { $0.contains("FROM incident_counts") })
        }
    }

    /// The rows a plan (EXPLAIN (ANALYZE, FORMAT JSON)) reads from the table `incidents` itself:
    /// any scan's rows read (``reads(_:)``) but an index-only scan's. Its heap
    /// fetches follow the visibility map, not the plan: VACUUM cannot mark pages all-visible while
    /// another test's transaction is open on the shared server (189 fetches in a whole-suite run,
    /// 0 alone).
    static func tableReads(_ json: String) throws -> Int {
        try reads(json).filter { $0.relation == "incidents" && $0.node["Node Type"] as? String != "Index Only Scan" }
            .map(\.rows).reduce(0, +)
    }

    @Test("list --bbox, --near and --search with a limit read from the table only about the rows they list (issue 23)")
    func listingStatements() throws {
        try Self.withHistory { store in
            // Every incident in the search's words; the visibility map set, as autovacuum does.
            try store.withConnection { connection in
                try connection.execute("UPDATE incidents SET description = '[사고] 안양성남 지난 사고 ' || id", context: "a test")
                try connection.execute("VACUUM ANALYZE incidents", context: "a test")
            }
            var bbox = IncidentQuery(now: t2, limit: 20)
            bbox.boundingBox = BoundingBox(minLongitude: 127.0, minLatitude: 37.0, maxLongitude: 127.1, maxLatitude: 37.1)
            var near = IncidentQuery(now: t2, order: .distance, limit: 20)
            (near.near, near.radiusMeters) = (Coordinate(latitude: 37.05, longitude: 127.05), 5_000)
            var search = IncidentQuery(now: t2, limit: 20)
            search.search = "안양성남 지난 사고"
            for (label, query) in [("bbox", bbox), ("near", near), ("search", search)] {
                var (sql, arguments, _) = try store.listing(query)
                // Nearest first, the client stops reading after about the limit: 40 rows here.
                if query.near != nil { sql += " LIMIT 40" }
                let plan = try store.withConnection { connection in
                    try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, named: arguments, context: "a test").string(0, 0) ?? ""
                }
                #expect(try Self.tableReads(plan) <= 60, "\(label): \(plan)")
                // The box's candidates come from the covering extent index alone (0012).
                #expect(label != "bbox" || plan.contains("\"Index Only Scan\""), "\(plan)")
                #expect(try list(store, query).count == 20, "\(label)")
            }
        }
    }

    @Test("PostgreSQL 0012 on a database of the previous version: the counts of every incident, by source")
    func migration0012() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0 == "0012_incident_counts.sql" })
            // As the previous version's polls left them (this version's polls write the counts).
            try PostgresStore(location, clock: .fixed(t0), migrator: previous).withConnection { connection in
                try connection.execute("""
                    INSERT INTO incidents (source, external_id, category, road, started_at, ended_at, content_hash, first_seen_at, last_seen_at,
                                           first_seen_run_id, last_seen_run_id, cleared_at)
                    VALUES ('gits', 'E0', 'accident', '경부고속도로', '2023-03-21T05:13:00Z', NULL, 1, now(), now(), 1, 1, NULL),
                           ('gits', 'E1', 'accident', NULL, '2023-03-21T05:13:59Z', '2023-03-21T05:50:00Z', 1, now(), now(), 1, 1, NULL),
                           ('gits', 'E2', 'roadwork', '경부고속도로', NULL, NULL, 1, now(), now(), 1, 1, now()),
                           ('its', 'X0', 'accident', '경부고속도로', '2023-03-21T05:13:00Z', NULL, 1, now(), now(), 1, 1, NULL);
                    """, context: "a database of the previous version")
            }
            let store = try PostgresStore(location, clock: .fixed(t2))
            #expect(try store.migrationStates().first { $0.name == "0012_incident_counts.sql" }?.appliedAt == t2)
            #expect(try store.column("SELECT source || ' ' || dimension || ' ' || key || ' ' || incidents FROM incident_counts ORDER BY 1")
                    == ["gits category accident 2", "gits category roadwork 1", "gits listed  1", "gits listed with_end 1",
                        "gits road  1", "gits road 경부고속도로 2", "gits start_minute  1", "gits start_minute 05:13 2",
                        "its category accident 1", "its listed  1", "its road 경부고속도로 1", "its start_minute 05:13 1"])
            let stats = try store.statistics(matching: IncidentQuery(now: t2), utcOffsetSeconds: 0)
            let expected: [Int] = [4, 2, 1]  // E1 ended
            #expect([stats.total, stats.active, stats.cleared] == expected && stats.byHour.map(\.0) == ["", "05"])
        }
    }

    @Test("PostgreSQL 0014 on a database of the previous version: the active set by source is indexed; a complete poll clears and logs only its own source's unlisted incidents")
    func migration0014() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0.hasSuffix("_active_by_source.sql") })
            let old = try PostgresStore(location, clock: .fixed(t0), migrator: previous)
            _ = try poll(old, live("A", "B"), at: t0)
            _ = try poll(old, [.incident(incident("X", source: "its"))], at: t0, source: "its")
            let store = try PostgresStore(location, clock: .fixed(t1))
            #expect(try store.migrationStates().first { $0.name.hasSuffix("_active_by_source.sql") }?.appliedAt == t1)
            #expect(try store.column("SELECT indexdef FROM pg_indexes WHERE indexname = 'incidents_active_by_source'")
                    == ["CREATE INDEX incidents_active_by_source ON public.incidents USING btree (source) WHERE (cleared_at IS NULL)"])
            let run = try poll(store, live("A"), at: t1)
            #expect(run.counts.cleared == 1)
            #expect(try store.column("SELECT source || '/' || external_id || ' ' || (cleared_at IS NULL) FROM incidents ORDER BY 1")
                    == ["gits/A true", "gits/B false", "its/X true"])
            #expect(try store.column("SELECT kind || ' ' || external_id FROM incident_transitions ORDER BY cursor")
                    == ["appeared A", "appeared B", "appeared X", "cleared B"])
        }
    }

    @Test("the check fails on a statement that reads the history: a poll's logged clears without the index of 0014 read every source's active incidents")
    func detectsActiveOfEverySource() throws {
        try Self.withHistory(log: true) { store in
            try store.withConnection { try $0.execute("DROP INDEX incidents_active_by_source; ANALYZE incidents", context: "a test") }
            let observed = try Self.observing(store) { try Self.polls(store) }
            #expect(observed.failures.contains { $0.contains("on incidents") && $0.contains("INSERT INTO poll_transitions") },
                    "\(observed.failures)")
        }
    }

    @Test("the check fails on a statement that reads the staged rows again for each incident (the rescan kind, issue 23)")
    func detectsRescanOfStagedRows() throws {
        try Self.withHistory(log: true) { store in
            let observed = try store.withConnection { connection in
                try connection.transaction(context: "a test") {
                    try connection.execute("""
                        CREATE TEMP TABLE poll_rows (ord bigint, external_id text COLLATE "C") ON COMMIT DROP;
                        INSERT INTO poll_rows SELECT g, 'H' || g FROM generate_series(1, 50) g;
                        """, context: "a test")
                    // Per incident, a scan of the staged ids (as the join from `poll_rows` once ran,
                    // the ids on the inner side of a nested loop), and the same ids joined once.
                    let rescan = """
                        SELECT i.id FROM incidents i WHERE i.source = 'gits' AND i.id <= 200
                          AND (SELECT min(r.ord) FROM poll_rows r WHERE r.external_id = i.external_id) IS NOT NULL
                        """
                    let once = """
                        SELECT i.id FROM (SELECT DISTINCT external_id FROM poll_rows) r
                        CROSS JOIN LATERAL (SELECT id FROM incidents WHERE source = 'gits' AND external_id = r.external_id LIMIT 1) i
                        """
                    let staged = try Self.stagedRows(connection)
                    #expect(staged == ["poll_rows": 50])
                    return try [rescan, once].map { statement in
                        let plan = try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, context: "a test").string(0, 0) ?? ""
                        return try Self.stagedScans(plan, staged: staged)
                    }
                }
            }
            #expect(observed[0].count == 1 && observed[0].first?.contains("on poll_rows read") == true
                    && observed[0].first?.contains("rows in 200 loops") == true,
                    "\(observed[0])")
            #expect(observed[1] == [])
        }
    }

    @Test("the check fails on a statement that reads the history: prune without the index of 0006")
    func detects() throws {
        try Self.withHistory { store in
            try store.withConnection { try $0.execute("DROP INDEX incidents_by_cleared", context: "a test") }
            let observed = try Self.observing(store) {
                _ = try store.prune(before: UTCInstant(rfc3339: "2019-12-31T00:00:00Z")!, batchSize: 100)
            }
            #expect(observed.failures.contains { $0.contains("on incidents") && $0.contains("SELECT id FROM incidents WHERE cleared_at") },
                    "\(observed.failures)")
        }
    }

    @Test("list --at (the server's datetime instant): the ranges that contain the instant come from the GiST index of 0011, never every incident or entry of the log")
    func listedAtStatements() throws {
        try Self.withHistory { store in
            // The history's log and ranges, as the migrations rebuild them (20,000 appearances and clears).
            try store.withConnection { connection in
                try PollTransitionLog.rebuild(connection: connection)
                try connection.execute("ANALYZE", context: "a test")
            }
            #expect(try integer(store, "SELECT count(*) FROM incident_listed_intervals") == Self.historySize)
            try Self.polls(store)
            // The listing's condition, explained where it runs (a listing streams its rows, which the observer does not see).
            let instant = t1.adding(seconds: 60)
            let plan = try store.withConnection { connection in
                try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM incidents WHERE " + PollTransitionLog.listed(at: ":at")
                                     + " ORDER BY started_at DESC NULLS LAST, id DESC LIMIT 100", named: ["at": .instant(instant)],
                                     context: "a test").string(0, 0) ?? ""
            }
            #expect(try Self.historyScans(plan, tables: Self.historyTables.union(["incident_transitions", "incident_listed_intervals"])) == [])
            #expect(plan.contains("incident_listed_intervals_ended") && plan.contains("incident_listed_intervals_open"), "\(plan)")
            var query = IncidentQuery(now: t2, limit: 100)
            query.listedAt = instant
            let listed = try list(store, query).map(\.incident.externalID)
            // Listed by the poll at t1 (H7 of the history among them); no other incident of the history.
            #expect(Set(listed).isSuperset(of: ["E0", "E1", "E2", "E4", "H7"]) && listed.filter { $0.hasPrefix("H") } == ["H7"], "\(listed)")
        }
    }

    @Test("timeline: the ranges of the window come from the indexes of 0011, the provider's ends from 0013's, an incident by its id; never every incident or range")
    func timelineStatements() throws {
        try Self.withHistory { store in
            try store.withConnection { connection in
                try PollTransitionLog.rebuild(connection: connection)
                try connection.execute("ANALYZE", context: "a test")
            }
            try Self.polls(store)
            let (since, until) = (t0.adding(seconds: -3600), t1.adding(seconds: 3600))
            var counts: [[TimelineCount]] = []
            let observed = try Self.observing(store, tables: Self.historyTables.union(["incident_transitions", "incident_listed_intervals"])) {
                var accidents = IncidentQuery(now: until)
                accidents.categories = [.accident]
                for (query, field) in [(IncidentQuery(now: until), nil), (accidents, IncidentGrouping.road)] {
                    counts.append(try Timeline.count(store, matching: query, by: field, per: .hour, since: since, until: until) { _ in 0 })
                }
            }
            #expect(observed.statements.filter { $0.hasPrefix("WITH spans") }.count == 2, "\(observed.statements)")
            #expect(observed.statements.contains { $0.hasPrefix("WITH spans") && $0.contains("ended_at IS NOT NULL AND ended_at <") })
            #expect(observed.failures == [], "\(observed.failures)")
            // E0, E1, E2, E4 and H7 of the history listed from t0 or t1 (H7 reopened), in the hours around them.
            #expect(counts[0].map(\.count).max() ?? 0 >= 4, "\(counts[0])")
            #expect(counts[1].allSatisfy { $0.key != nil }, "\(counts[1])")
        }
    }

    @Test("PostgreSQL 0013 on a database of the previous version: the index of the provider's ends holds the incidents that have one, and a timeline cuts at them")
    func migration0013() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0 >= "0013" })
            try poll(PostgresStore(location, clock: .fixed(t0), migrator: previous), [.incident(incident("A")), .incident(incident("B", ended: t0.adding(seconds: 1800)))], at: t0)
            let store = try PostgresStore(location, clock: .fixed(t2))
            #expect(try store.migrationStates().first { $0.name == "0013_provider_end_index.sql" }?.appliedAt == t2)
            #expect(try store.column("SELECT indexdef FROM pg_indexes WHERE indexname = 'incidents_by_end'").count == 1)
            let counts = try Timeline.count(store, matching: IncidentQuery(now: t2), by: nil, per: .hour,
                                            since: t0, until: t0.adding(seconds: 7200)) { _ in 0 }
            #expect(counts.map(\.count) == [2, 1], "B ended half an hour after it was first listed")
        }
    }

    @Test("PostgreSQL 0011 on a database of the previous version: each appearance and reopening gets its range, to the first clear after it")
    func migration0011() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0.hasSuffix("_listed_intervals.sql") })
            try PostgresStore(location, clock: .fixed(t0), migrator: previous).withConnection { connection in
                try connection.execute(ListedIntervalFixture.sql(key: "cursor"), context: "a database of the previous version")
            }
            let store = try PostgresStore(location, clock: .fixed(t1))
            #expect(try store.migrationStates().first { $0.name.hasSuffix("_listed_intervals.sql") }?.appliedAt == t1)
            #expect(try store.column("""
                SELECT opening || ' ' || incident_id || ' ' || to_char(lower(listed) AT TIME ZONE 'UTC', 'HH24:MI:SS') || '–'
                       || coalesce(to_char(upper(listed) AT TIME ZONE 'UTC', 'HH24:MI:SS'), 'open')
                FROM incident_listed_intervals ORDER BY opening
                """) == ["1 1 10:00:00–10:10:00", "2 2 10:00:00–10:30:30", "4 1 10:20:00–open"])
        }
    }

    @Test("PostgreSQL 0009 on a database of the previous version: the runs stay, the index is there")
    func migration0009() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let previous = try PostgresMigrator.bundled(without: { $0 == "0009_history_independent_runs.sql" })
            try poll(try PostgresStore(location, clock: .fixed(t0), migrator: previous), live("E0"), at: t0)
            let store = try PostgresStore(location, clock: .fixed(t1))
            #expect(try store.migrationStates().first { $0.name == "0009_history_independent_runs.sql" }.map { [$0.name, $0.appliedAt?.rfc3339] }
                    == ["0009_history_independent_runs.sql", t1.rfc3339])
            #expect(try store.column("SELECT indexdef FROM pg_indexes WHERE indexname = 'ingest_runs_stored_by_source'")
                    == ["CREATE INDEX ingest_runs_stored_by_source ON public.ingest_runs USING btree (source, id) "
                        + "WHERE (status = ANY (ARRAY['succeeded'::text, 'incomplete'::text]))"])
            #expect(try store.sourceSummaries().map(\.lastSuccessAt) == [t0])
        }
    }
}
