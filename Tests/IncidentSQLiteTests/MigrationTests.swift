import Foundation
import IncidentCore
@testable import IncidentSQLite
import TestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    let now = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    func tables(_ db: Database) throws -> [String] {
        let s = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var names: [String] = []
        while try s.step() { names.append(s.string(at: 0) ?? "") }
        return names
    }

    @Test("the checksum is FNV-1a 64 of the SQL's UTF-8 bytes, as recorded in existing databases")
    func checksumValues() throws {
        // The published FNV-1a 64 test vectors, then a text with multi-byte characters.
        #expect(try Migration(name: "0001_a.sql", sql: "").checksum == "cbf29ce484222325")
        #expect(try Migration(name: "0001_a.sql", sql: "a").checksum == "af63dc4c8601ec8c")
        #expect(try Migration(name: "0001_a.sql", sql: "foobar").checksum == "85944171f73967e8")
        let korean = "-- 경부고속도로\nCREATE TABLE t (x);"
        var byByte: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in korean.utf8 { byByte = (byByte ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(byByte, radix: 16)
        #expect(try Migration(name: "0001_a.sql", sql: korean).checksum == String(repeating: "0", count: 16 - hex.count) + hex)
    }

    @Test("every Migrations/*.sql file is embedded, in order, and the bundle applies to a fresh database")
    func fresh() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: TestPaths.packageRoot.appendingPathComponent("Migrations").path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        let migrator = try Migrator.bundled()
        #expect(migrator.migrations.map(\.name) == files)
        #expect(migrator.migrations.map(\.version) == Array(1...files.count))
        let db = try Database(path: ":memory:")
        let applied = try migrator.migrate(db, now: now)
        #expect(applied.map(\.name) == files)
        #expect(Set(["incident_revisions", "incidents", "ingest_runs", "schema_migrations", "source_state",
                     "incidents_search", "incidents_bbox", "incident_counts"]).isSubset(of: try tables(db)))
        #expect(try migrator.migrate(db, now: now).isEmpty)
        try migrator.verifyUpToDate(db)
    }

    @Test("incremental: a database at version 1 gets only the later versions, each recorded with its checksum")
    func incremental() throws {
        let all = try Migrator.bundled()
        let later = Array(all.migrations.dropFirst())
        let db = try Database(path: ":memory:")
        try Migrator(migrations: [all.migrations[0]]).migrate(db, now: now)
        #expect(throws: MigrationError.pending(names: later.map(\.name))) { try all.verifyUpToDate(db) }
        let then = now.adding(seconds: 60)
        let applied = try all.migrate(db, now: then)
        #expect(applied.map(\.name) == later.map(\.name))
        let status = try all.status(db)
        #expect(status.map(\.appliedAt) == [now.rfc3339] + later.map { _ in then.rfc3339 })
        for migration in all.migrations {
            #expect(try db.scalarInt("SELECT count(*) FROM schema_migrations WHERE version = \(migration.version) AND checksum = '\(migration.checksum)'") == 1)
        }
    }

    @Test("0005 on a database of 0004: indexes what the lazy search index had not reached, boxes and counts every incident")
    func queryIndexesOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0005").appendingPathComponent("db.sqlite").path
        let all = try Migrator.bundled()
        do {
            let db = try Database(path: path)
            try Migrator(migrations: Array(all.migrations.prefix(4))).migrate(db, now: now)
            // The content columns as they were at 0004 (road_ref and geometry came with 0006, validity with 0008).
            let columns = ContentColumns(IncidentField.content.filter { !["road_ref", "geometry", "validity"].contains($0.columns[0]) })
            for (index, text) in ["[사고] 잠실대교 추돌", "[공사] 방음벽 보수", "[사고] 서해대교 다중추돌", "[기상] 강풍"].enumerated() {
                var stored = incident("E\(index)", description: text)
                stored.road = index == 3 ? nil : "경부고속도로"
                let values = columns.values(of: stored).values
                var arguments: [String: SQLiteValue] = ["source": .text("gits"), "external_id": .text(stored.externalID), "seen": .text(now.rfc3339)]
                for (field, value) in zip(columns.fields, values) {
                    switch value {
                    case .null: for column in field.columns { arguments[column] = .null }
                    case .text(let text): arguments[field.columns[0]] = .text(text)
                    case .instant(let instant): arguments[field.columns[0]] = .text(instant.rfc3339)
                    case .coordinate(let c): (arguments[field.columns[0]], arguments[field.columns[1]]) = (.real(c.latitude), .real(c.longitude))
                    case .geometry: Issue.record("no geometry at 0004")
                    }
                }
                try db.run("""
                    INSERT INTO incidents (source, external_id, \(columns.list), content_hash, first_seen_at, last_seen_at,
                        first_seen_run_id, last_seen_run_id)
                    VALUES (:source, :external_id, \(columns.parameters), 0, :seen, :seen, 1, 1)
                    """, arguments)
            }
            // The lazy scheme had indexed the first two incidents only.
            try db.execute("""
                INSERT INTO incidents_search (rowid, description, location) SELECT id, description, location FROM incidents WHERE id <= 2;
                UPDATE search_index_state SET indexed_through = 2;
                """)
        }
        let store = try SQLiteStore(path: path, clock: .fixed(now))
        #expect(try store.migrationStates().allSatisfy { $0.appliedAt != nil })
        try DerivedIndexTests.expectInStep(store, "migration 0005")
        var query = IncidentQuery(now: now)
        query.search = "서해대교"
        #expect(try store.incidents(matching: query).map(\.incident.externalID) == ["E2"])
        query.search = nil
        query.near = Coordinate(latitude: 37.27, longitude: 127.05)
        #expect(try store.incidents(matching: query).count == 4)
        let stats = try store.statistics(matching: IncidentQuery(now: now), utcOffsetSeconds: 0)
        #expect(stats.byRoad.map(\.0) == ["경부고속도로", ""] && stats.distinctRoads == 2)
        try store.withDatabase { (db: Database) throws in
            #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name IN ('search_index_state', 'incidents_search_update', 'incidents_search_delete')") == 0)
        }
    }

    @Test("0009 on a database of 0008: every run and every record set aside is kept; stale runs are allowed; deleting a run still removes its records")
    func publicationOrderOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0009").appendingPathComponent("db.sqlite").path
        let all = try Migrator.bundled()
        do {
            let db = try Database(path: path)
            try Migrator(migrations: Array(all.migrations.prefix(8))).migrate(db, now: now)
            try db.execute("""
                INSERT INTO ingest_runs (id, source, started_at, finished_at, status, fetched, rejected, warnings, host, observed_at)
                    VALUES (1, 'gits', '2024-01-01T00:00:00Z', '2024-01-01T00:00:01Z', 'incomplete', 3, 2, 'why', 'h1', '2024-01-01T00:00:00Z'),
                           (2, 'gits', '2024-01-01T00:05:00Z', '2024-01-01T00:05:01Z', 'succeeded', 1, 0, NULL, 'h1', '2024-01-01T00:05:00Z');
                INSERT INTO rejected_records (run_id, source, external_id, position, reason, excerpt, rejected_at)
                    VALUES (1, 'gits', 'A', 'itemList 1', 'bad date', 'regSeq=A', '2024-01-01T00:00:00Z'),
                           (1, 'gits', NULL, 'itemList 2', 'no id', NULL, '2024-01-01T00:00:00Z');
                INSERT INTO source_state (source, exhausted_until, exhausted_reason, updated_at) VALUES ('its', '2024-01-02T00:00:00Z', 'quota', '2024-01-01T00:00:00Z');
                """)
        }
        let store = try SQLiteStore(path: path, clock: .fixed(now))
        #expect(try store.migrationStates().allSatisfy { $0.appliedAt != nil })
        let runs = try store.runs(source: nil, limit: 10, failuresFirst: false)
        #expect(runs.map(\.id) == [2, 1])
        #expect(runs.map(\.status) == [.succeeded, .incomplete])
        #expect(runs[1].warnings == ["why"] && runs[1].counts.rejected == 2 && runs[1].host == "h1" && runs[1].publishedAt == nil)
        #expect(try store.rejections(runID: 1).map(\.record) == [
            RejectedRecord(externalID: "A", position: "itemList 1", reason: "bad date", excerpt: "regSeq=A"),
            RejectedRecord(externalID: nil, position: "itemList 2", reason: "no id"),
        ])
        #expect(try store.quotaResumesAt(source: "its") == UTCInstant(rfc3339: "2024-01-02T00:00:00Z"))
        try store.withDatabase { (db: Database) throws in
            try db.execute("INSERT INTO ingest_runs (source, started_at, status, published_at) VALUES ('gits', '2024-01-01T00:10:00Z', 'stale', '2024-01-01T00:09:00Z')")
            #expect(try db.scalarInt("SELECT count(*) FROM pragma_foreign_key_check") == 0)
            try db.execute("DELETE FROM ingest_runs WHERE id = 1")
            #expect(try db.scalarInt("SELECT count(*) FROM rejected_records") == 0, "the foreign key still cascades")
        }
    }

    @Test("0012 on a database of 0011: the change feed stays; watch_positions starts empty and registers a watch at its end")
    func watchPositionsOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0012").appendingPathComponent("db.sqlite").path
        let all = try Migrator.bundled()
        let previous = Migrator(migrations: all.migrations.filter { $0.name != "0012_watch_positions.sql" })
        _ = try SQLiteStore(path: path, clock: .fixed(t0), migrator: previous)
            .ingest(PollContext(source: "gits", startedAt: t0), ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        let store = try SQLiteStore(path: path, clock: .fixed(t1))
        #expect(try store.migrationStates().first { $0.name == "0012_watch_positions.sql" }.map { [$0.name, $0.appliedAt?.rfc3339] }
                == ["0012_watch_positions.sql", t1.rfc3339])
        #expect(try store.lastCursor() == 2)
        #expect(try store.watchPositions() == [])
        #expect(try store.registerWatches([("w", .end)]) == [WatchPosition(watch: "w", cursor: 2)])
    }

    @Test("0013 on a database of the previous version: each appearance and reopening of the log gets its interval to the first clear after it, in seconds since 2020")
    func listedIntervalsOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0013").appendingPathComponent("db.sqlite").path
        let all = try Migrator.bundled()
        do {
            let db = try Database(path: path)
            // 0016 counts hours from the intervals, 0017 indexes their table: they come after them.
            try Migrator(migrations: all.migrations.filter { migration in
                !["_listed_intervals.sql", "_listed_hours.sql", "_listed_starts.sql"].contains { migration.name.hasSuffix($0) } })
                .migrate(db, now: now)
            try db.execute(ListedIntervalFixture.sql(key: "id"))
        }
        let store = try SQLiteStore(path: path, clock: .fixed(now))
        #expect(try store.migrationStates().allSatisfy { $0.appliedAt != nil })
        func seconds(_ time: String) -> Int64 { UTCInstant(rfc3339: "2024-01-01T\(time)Z")!.secondsSince1970 - 1_577_836_800 }
        var (ended, opened): ([[Int64]], [[Int64]]) = ([], [])
        try store.withDatabase { (db: Database) throws in
            try db.query("SELECT id, listed_from, listed_until, incident_id FROM incident_listed_intervals ORDER BY id") { row in
                ended.append((0..<4).map { row.int64(at: $0) ?? -1 })
            }
            try db.query("SELECT id, listed_from, incident_id FROM incident_listed_open ORDER BY id") { row in
                opened.append((0..<3).map { row.int64(at: $0) ?? -1 })
            }
        }
        #expect(ended == [[1, seconds("10:00:00"), seconds("10:10:00"), 1], [2, seconds("10:00:00"), seconds("10:30:30"), 2]])
        #expect(opened == [[4, seconds("10:20:00"), 1]])
        func listed(_ time: String) throws -> [String] {
            var query = IncidentQuery(now: now, order: .source)
            query.listedAt = UTCInstant(rfc3339: "2024-01-01T\(time)Z")
            return try store.incidents(matching: query).map(\.incident.externalID)
        }
        #expect(try listed("10:05:00") == ["A", "B"])
        #expect(try listed("10:15:00") == ["B"])
        #expect(try listed("10:30:29") == ["A", "B"])
        #expect(try listed("10:30:30") == ["A"], "B was cleared at 10:30:30")
    }

    @Test("0014 on a database of the previous version: the index of the provider's ends holds the incidents that have one, and a timeline cuts at them")
    func providerEndIndexOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0014").appendingPathComponent("db.sqlite").path
        let all = try Migrator.bundled()
        let previous = Migrator(migrations: all.migrations.filter { $0.name != "0014_provider_end_index.sql" })
        let ended = now.adding(seconds: 1800)
        _ = try SQLiteStore(path: path, clock: .fixed(now), migrator: previous)
            .ingest(PollContext(source: "gits", startedAt: now), ListProducer(incidents: [incident("A"), incident("B", ended: ended)]).callAsFunction)
        let store = try SQLiteStore(path: path, clock: .fixed(now.adding(seconds: 7200)))
        #expect(try store.migrationStates().first { $0.name == "0014_provider_end_index.sql" }?.appliedAt == now.adding(seconds: 7200))
        try store.withDatabase { (db: Database) throws in
            #expect(try db.scalarInt("SELECT count(*) FROM incidents INDEXED BY incidents_by_end WHERE ended_at IS NOT NULL") == 1)
        }
        let counts = try Timeline.count(store, matching: IncidentQuery(now: now.adding(seconds: 7200)), by: nil, per: .hour,
                                        since: now, until: now.adding(seconds: 7200)) { _ in 0 }
        #expect(counts.map(\.count) == [2, 1], "B ended half an hour after it was first listed")
    }

    @Test("0015 on a database of the previous version: the active set by source is indexed; a complete poll clears and logs only its own source's unlisted incidents")
    func activeBySourceOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0015").appendingPathComponent("db.sqlite").path
        do {
            // Polled, then taken back to the previous version: the schema without the index
            // (this binary's polls need it), the migration not recorded.
            let store = try SQLiteStore(path: path, clock: .fixed(t0))
            _ = try store.ingest(PollContext(source: "gits", startedAt: t0), ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
            _ = try store.ingest(PollContext(source: "its", startedAt: t0), ListProducer(incidents: [incident("X", source: "its")]).callAsFunction)
            try store.withDatabase { (db: Database) throws in
                try db.execute("DROP INDEX incidents_active_by_source; DELETE FROM schema_migrations WHERE name LIKE '%_active_by_source.sql'")
            }
        }
        let store = try SQLiteStore(path: path, clock: .fixed(t1))
        #expect(try store.migrationStates().first { $0.name.hasSuffix("_active_by_source.sql") }?.appliedAt == t1)
        let indexed = try store.withDatabase { (db: Database) throws in
            try db.scalarInt("SELECT count(*) FROM incidents INDEXED BY incidents_active_by_source WHERE cleared_at IS NULL AND source = 'gits'")
        }
        #expect(indexed == 2)
        let run = try store.ingest(PollContext(source: "gits", startedAt: t1), ListProducer(incidents: [incident("A")]).callAsFunction)
        #expect(run.counts.cleared == 1)
        let stored = try store.incidents(matching: IncidentQuery(now: t1, order: .source))
            .map { "\($0.incident.source)/\($0.incident.externalID) \($0.clearedAt?.rfc3339 ?? "active")" }
        #expect(stored == ["gits/A active", "gits/B \(t1.rfc3339)", "its/X active"])
        let log = try store.changes(after: 0, limit: 10).map { "\($0.transition.kind.rawValue) \($0.transition.externalID ?? "?")" }
        #expect(log == ["appeared A", "appeared B", "appeared X", "cleared B"])
    }

    @Test("0016 on a database of the previous version: each past hour's count is built from the listed intervals (one incident once an hour, cut at its provider's end), and a timeline per hour reads them; the open intervals get their incident's start")
    func listedHoursOnExistingData() throws {
        let path = try TestPaths.temporaryDirectory("migrate-0016").appendingPathComponent("db.sqlite").path
        do {
            // Polled, then taken back to the previous version (this binary's polls keep the hours).
            let store = try SQLiteStore(path: path, clock: .fixed(now))
            let polls: [(Int64, [Incident])] = [(0, [incident("A"), incident("B"), incident("C", ended: now.adding(seconds: 3600 + 600))]),
                                                (1800, [incident("A"), incident("C", ended: now.adding(seconds: 3600 + 600))]),
                                                (3000, [incident("A"), incident("B"), incident("C", ended: now.adding(seconds: 3600 + 600))]),
                                                (5400, [incident("A")])]
            for (offset, listed) in polls {
                _ = try store.ingest(PollContext(source: "gits", startedAt: now.adding(seconds: offset)), ListProducer(incidents: listed).callAsFunction)
            }
            try store.withDatabase { (db: Database) throws in
                try db.execute("""
                    DROP TRIGGER listed_hours_after_provider_end; DROP TABLE listed_hours; DROP TRIGGER incident_listed_open_started;
                    DROP INDEX incident_listed_open_by_incident; DROP INDEX incident_listed_open_by_started; DROP INDEX incident_listed_open_ahead;
                    DROP INDEX incidents_started_by_id; DROP INDEX ingest_runs_by_source_started; ALTER TABLE incident_listed_open DROP COLUMN started_at;
                    DELETE FROM schema_migrations WHERE name LIKE '%_listed_hours.sql' OR name LIKE '%_listed_starts.sql'
                    """)
            }
        }
        let later = now.adding(seconds: 4 * 3600)
        let store = try SQLiteStore(path: path, clock: .fixed(later))
        #expect(try store.migrationStates().first { $0.name.hasSuffix("_listed_hours.sql") }?.appliedAt == later)
        let first = (now.secondsSince1970 - 1_577_836_800) / 3600
        var held: [[Int64]] = []
        try store.withDatabase { (db: Database) throws in
            try db.query("SELECT hour - \(first), listed FROM listed_hours WHERE hour < \(first + 4) ORDER BY hour") { s in
                held.append([s.int64(at: 0) ?? -1, s.int64(at: 1) ?? -1])
            }
        }
        // Hour 0: A, B (cleared at 0:30, listed again at 0:50: once), C; hour 1: A, B, and C until its end at 1:10; then A.
        #expect(held == [[0, 3], [1, 3], [2, 1], [3, 1]])
        let counts = try Timeline.count(store, matching: IncidentQuery(now: later), by: nil, per: .hour, since: now, until: later) { _ in 0 }
        #expect(counts.map(\.count) == [3, 3, 1, 1])
        // The open interval (A's) has its incident's start.
        let starts = try store.withDatabase { (db: Database) throws in
            try db.scalarInt("SELECT count(*) FROM incident_listed_open o JOIN incidents i ON i.id = o.incident_id WHERE o.started_at = i.started_at")
        }
        #expect(starts == 1)
        // 0017 ran again after it: the indexes of the starts a page of list --at reads.
        let indexes = try store.withDatabase { (db: Database) throws in
            try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('incidents_started_by_id', 'incident_listed_open_ahead', 'ingest_runs_by_source_started')")
        }
        #expect(indexes == 3)
        #expect(try store.migrationStates().first { $0.name.hasSuffix("_listed_starts.sql") }?.appliedAt == later)
    }

    @Test("a migration edited after it was applied is refused and nothing changes")
    func tampered() throws {
        let all = try Migrator.bundled()
        let db = try Database(path: ":memory:")
        try Migrator(migrations: [all.migrations[0]]).migrate(db, now: now)
        var edited = all.migrations
        edited[0].sql += "\nCREATE TABLE sneaky (x);"
        #expect {
            try Migrator(migrations: edited).migrate(db, now: now)
        } throws: { error in
            guard case MigrationError.checksumMismatch(let name, _, _) = error else { return false }
            return name == "0001_incidents.sql"
        }
        #expect(try !tables(db).contains("source_state"))
        #expect(try !tables(db).contains("sneaky"))
    }

    @Test("a database migrated by a newer binary is refused, not modified")
    func newer() throws {
        let all = try Migrator.bundled()
        let db = try Database(path: ":memory:")
        let future = try Migration(name: "0099_future.sql", sql: "CREATE TABLE future (x);")
        try Migrator(migrations: all.migrations + [future]).migrate(db, now: now)
        let before = try tables(db)
        #expect(throws: MigrationError.newerSchema(databaseVersion: 99, knownVersion: all.latestVersion)) {
            try all.migrate(db, now: now)
        }
        #expect(throws: MigrationError.newerSchema(databaseVersion: 99, knownVersion: all.latestVersion)) {
            try all.verifyUpToDate(db)
        }
        #expect(try tables(db) == before)
    }

    @Test("two connections opening a new file at once both succeed; each migration is applied once")
    func concurrentFirstOpen() async throws {
        let path = try TestPaths.temporaryDirectory("migrate").appendingPathComponent("db.sqlite").path
        let now = self.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    _ = try SQLiteStore(path: path, clock: .fixed(now))
                }
            }
            try await group.waitForAll()
        }
        let db = try Database(path: path, mode: .readOnly)
        #expect(try db.scalarInt("SELECT count(*) FROM schema_migrations") == Int64(try Migrator.bundled().migrations.count))
        let mode = try db.prepare("PRAGMA journal_mode")
        _ = try mode.step()
        #expect(mode.string(at: 0) == "wal")
    }

    @Test("a file that is not a database is a clear error")
    func notADatabase() throws {
        let url = try TestPaths.temporaryDirectory("garbage").appendingPathComponent("db.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: url)
        #expect {
            _ = try SQLiteStore(path: url.path, clock: .fixed(now))
        } throws: { error in
            (error as? SQLiteError)?.code.primary == .notADatabase
                && String(describing: error).contains("not an incidents database")
        }
    }
}

@Suite("Retention and quota state")
struct RetentionTests {
    @Test("prune deletes incidents cleared before the horizon, their revisions and transitions, and old runs, keeping each source's last run")
    func prune() throws {
        let store = try memoryStore()
        // t0: A and B; t1: B changes (a revision), A clears; t2: nothing listed, B clears.
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false,
                             ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        _ = try store.ingest(source: "gits", startedAt: t1, dryRun: false,
                             ListProducer(incidents: [incident("B", description: "changed")]).callAsFunction)
        _ = try store.ingest(source: "gits", startedAt: t2, dryRun: false, ListProducer(incidents: []).callAsFunction)
        _ = try store.ingest(source: "its", startedAt: t0, dryRun: false,
                             ListProducer(incidents: [incident("X", source: "its")]).callAsFunction)
        // Horizon between t1 and t2: A (cleared at t1) goes; B (cleared at t2) stays.
        let counts = try store.prune(before: t1.adding(seconds: 1), batchSize: 1)
        #expect(counts == PruneCounts(incidents: 1, revisions: 0, transitions: 2, runs: 2))
        #expect(try allRows(store).map(\.incident.externalID) == ["B", "X"])
        let later = try store.prune(before: t2.adding(seconds: 3600))
        #expect(later == PruneCounts(incidents: 1, revisions: 1, transitions: 3, runs: 0))
        #expect(try allRows(store).map(\.incident.externalID) == ["X"])
        #expect(try store.sourceSummaries().map(\.source) == ["gits", "its"])
    }

    @Test("a run with resumesAt marks the source exhausted until then")
    func quotaState() throws {
        let store = try memoryStore()
        #expect(try store.quotaResumesAt(source: "gits") == nil)
        try store.recordRun(IngestRun(source: "gits", startedAt: t0, finishedAt: t0, status: .failed,
                                      error: "quota", resumesAt: t2))
        #expect(try store.quotaResumesAt(source: "gits") == t2)
        #expect(try store.quotaResumesAt(source: "its") == nil)
    }
}
