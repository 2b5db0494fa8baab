import Foundation
import IncidentCore
import Synchronization
@testable import IncidentPostgres
@testable import IncidentSQLite
import TestSupport
import Testing

/// Every row of every exported table, as arrays of values (small stores).
struct Exported: Equatable {
    var incidents: [IncidentRecord] = []
    var revisions: [RevisionRecord] = []
    var runs: [IngestRun] = []
    var rejections: [RejectionRecord] = []
    var quota: [QuotaState] = []

    init(_ store: any StoreExport) throws {
        try store.exportIncidents { incidents.append($0) }
        try store.exportRevisions { revisions.append($0) }
        try store.exportRuns { runs.append($0) }
        try store.exportRejections { rejections.append($0) }
        quota = try store.exportQuotaStates()
    }
}

/// One FNV-1a 64 digest of every field of each row, per table (large stores: 8 bytes a row).
struct ExportDigests: Equatable {
    var tables: [String: [Int64]] = [:]

    init(_ store: any StoreExport) throws {
        var incidents: [Int64] = [], revisions: [Int64] = [], runs: [Int64] = [], rejections: [Int64] = []
        try store.exportIncidents { record in
            var h = FNV1a64()
            Self.combine(record.stored.incident, into: &h)
            for instant in [record.stored.firstSeenAt, record.stored.lastSeenAt, record.stored.clearedAt] {
                h.combine(bits: instant.map { UInt64(bitPattern: $0.secondsSince1970) })
            }
            for number in [record.stored.id, Int64(record.stored.revision), record.contentHash, record.firstSeenRunID, record.lastSeenRunID] {
                h.combine(bits: UInt64(bitPattern: number))
            }
            incidents.append(h.signed)
        }
        try store.exportRevisions { record in
            var h = FNV1a64()
            Self.combine(record.revision.incident, into: &h)
            for number in [record.incidentID, Int64(record.revision.revision), record.contentHash, record.revision.supersededAt.secondsSince1970] {
                h.combine(bits: UInt64(bitPattern: number))
            }
            h.combine(bits: record.revision.clearedAt.map { UInt64(bitPattern: $0.secondsSince1970) })
            revisions.append(h.signed)
        }
        // Few rows: every field as Swift prints it.
        func digest(_ value: Any) -> Int64 {
            var h = FNV1a64()
            h.combine(String(reflecting: value).utf8)
            return h.signed
        }
        try store.exportRuns { runs.append(digest($0)) }
        try store.exportRejections { rejections.append(digest($0)) }
        tables = ["incidents": incidents, "revisions": revisions, "runs": runs, "rejections": rejections,
                  "quota": try store.exportQuotaStates().map(digest)]
    }

    /// Identity and every content field.
    static func combine(_ incident: Incident, into h: inout FNV1a64) {
        h.combine(field: incident.source)
        h.combine(field: incident.externalID)
        for field in IncidentField.content { h.combine(value: field.value(incident), of: field) }
    }

    /// `table: first different row index` for each table that differs.
    func differences(from other: ExportDigests) -> [String] {
        tables.keys.sorted().compactMap { table -> String? in
            let (a, b) = (tables[table] ?? [], other.tables[table] ?? [])
            guard a != b else { return nil }
            let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            return "\(table): \(a.count) vs \(b.count) rows, first difference at row \(index)"
        }
    }
}

@Suite("Copying an SQLite store into PostgreSQL")
struct CopyTests {
    /// An SQLite store with a bit of everything: revisions, a reopening, rejected records,
    /// failed runs, a quota pause.
    static func filledSQLite(_ path: String) throws -> SQLiteStore {
        let store = try SQLiteStore(path: path, clock: .fixed(t0))
        try poll(store, live("A", "B", "C"), at: t0)
        try poll(store, [.incident(incident("A", description: "changed")), .incident(incident("B")),
                         .rejected(RejectedRecord(externalID: "C", position: "items[2]", reason: "bad\ttime", excerpt: "<x>\n\\N</x>"))], at: t1)
        try poll(store, live("A", "B"), at: t2)  // C cleared
        try poll(store, live("A", "B", "C"), at: t2.adding(seconds: 60), origin: .file(path: "/data/replay.xml", complete: true))
        try store.recordRun(IngestRun(source: "its", startedAt: t2, finishedAt: t2, status: .failed, error: "code 22", resumesAt: t2.adding(seconds: 3600),
                                      host: "host-a"))
        return store
    }

    @Test("every row arrives with its id; the counts are verified; the sequences continue after the copied ids; a non-empty target is refused")
    func small() throws {
        let directory = try TestPaths.temporaryDirectory("copy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try Self.filledSQLite(directory.appendingPathComponent("incidents.sqlite").path)
        try TestServer.withDatabase { name in
            let postgres = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t2))
            // The copy drops the two tables' indexes and builds them after the load: the same ones.
            func indexes() throws -> [String] {
                try postgres.withConnection { connection in
                    let result = try connection.query("""
                        SELECT pg_get_indexdef(indexrelid) FROM pg_index
                        WHERE indrelid IN ('incidents'::regclass, 'incident_revisions'::regclass) ORDER BY 1
                        """, context: "reading the index definitions")
                    return (0..<result.rowCount).compactMap { result.string($0, 0) }
                }
            }
            let migrated = try indexes()
            #expect(migrated.count >= 14 && migrated.contains { $0.contains("USING gin (description gin_trgm_ops)") }, "\(migrated)")
            let counts = try postgres.copy(from: sqlite)
            #expect(try indexes() == migrated)
            #expect(counts == StoreCounts(incidents: 3, revisions: 3, runs: 5, rejectedRecords: 1, quotaStates: 1))
            #expect(try Exported(postgres) == (try Exported(sqlite)))
            #expect(try postgres.quotaResumesAt(source: "its") == t2.adding(seconds: 3600))
            // The transition log is rebuilt from the copied rows (as the migration rebuilds it);
            // for these live polls and a newer replay it is the log SQLite wrote as it polled.
            func transitions(_ store: any ChangeFeedReader) throws -> [String] {
                try store.changes(after: 0, limit: 100).map {
                    "\($0.transition.kind) \($0.transition.externalID ?? "-") \($0.transition.at.rfc3339) run \($0.transition.runID ?? 0)"
                }
            }
            let logged = try transitions(sqlite)
            #expect(logged.count == 8)
            #expect(try transitions(postgres) == logged)
            #expect(throws: StoreCopyError.targetNotEmpty(counts)) { try postgres.copy(from: sqlite) }
            // New rows get ids after the copied ones, and the copied run ids still mark the incidents.
            let run = try poll(postgres, live("A", "B", "C", "D"), at: t2.adding(seconds: 120))
            #expect(run.id == 6)
            #expect(run.counts == IngestCounts(fetched: 4, inserted: 1, unchanged: 3))
            #expect(try allRows(postgres).map(\.id) == [1, 2, 3, 4])
        }
    }

    @Test("a source whose counts do not match the rows it sent (it changed during the copy): the copy is undone")
    func mismatch() throws {
        /// An export that reports one incident more than it sends.
        struct Lying: StoreExport {
            let base: SQLiteStore
            func exportCounts() throws -> StoreCounts { var c = try base.exportCounts(); c.incidents += 1; return c }
            func exportIncidents(_ row: (IncidentRecord) throws -> Void) throws { try base.exportIncidents(row) }
            func exportRevisions(_ row: (RevisionRecord) throws -> Void) throws { try base.exportRevisions(row) }
            func exportRuns(_ row: (IngestRun) throws -> Void) throws { try base.exportRuns(row) }
            func exportRejections(_ row: (RejectionRecord) throws -> Void) throws { try base.exportRejections(row) }
            func exportQuotaStates() throws -> [QuotaState] { try base.exportQuotaStates() }
        }
        let directory = try TestPaths.temporaryDirectory("copy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try Self.filledSQLite(directory.appendingPathComponent("incidents.sqlite").path)
        try TestServer.withDatabase { name in
            let postgres = try PostgresStore(try TestServer.location(database: name), clock: .fixed(t2))
            let sent = StoreCounts(incidents: 3, revisions: 3, runs: 5, rejectedRecords: 1, quotaStates: 1)
            var claimed = sent
            claimed.incidents += 1
            #expect(throws: StoreCopyError.countMismatch(source: claimed, copied: sent)) { try postgres.copy(from: Lying(base: sqlite)) }
            #expect(try postgres.exportCounts() == StoreCounts())
        }
    }

    /// `incidents list --format ndjson` with `filters` of each database, run side by side as a
    /// user would run them.
    static func ndjson(_ databases: [String], _ filters: [String]) throws -> [(Int32, Data)] {
        let processes = try databases.map {
            try RunningProcess(Executables.url("incidents"), ["list", "--format", "ndjson", "--database", $0] + filters)
        }
        return processes.map { let result = $0.wait(timeout: 900); return (result.status, Data(result.stdout.utf8)) }
    }

    /// Both digests at once, on two threads (most of this test's time on a debug build).
    static func digests(_ first: any StoreExport & Sendable, _ second: any StoreExport & Sendable) throws -> (ExportDigests, ExportDigests) {
        let results = Mutex<[Int: Swift.Result<ExportDigests, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let digest = Swift.Result { try ExportDigests(index == 0 ? first : second) }
            results.withLock { $0[index] = digest }
        }
        let both = results.withLock { $0 }
        return (try both[0]!.get(), try both[1]!.get())
    }

    @Test("a 300,000-incident database from the GITS generator: every row of every table, and listings, are equal",
          .timeLimit(.minutes(20)))
    func large() throws {
        let directory = try TestPaths.temporaryDirectory("copy-large")
        defer { try? FileManager.default.removeItem(at: directory) }
        let generator = TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/bench/gen_gits_feed.py").path
        let database = directory.appendingPathComponent("incidents.sqlite").path
        // 300,000 incidents, then 30,000 of them changed (30,000 revisions); both feeds made at once.
        let feeds = [(300_000, 1), (30_000, 2)].map { count, seed in
            (directory.appendingPathComponent("feed-\(seed).xml").path, count, seed)
        }
        let generators = try feeds.map { feed, count, seed in
            try RunningProcess(URL(fileURLWithPath: "/usr/bin/python3"), [generator, String(count), feed, "--seed", String(seed)])
        }
        for generate in generators.map({ $0.wait(timeout: 300) }) { try #require(generate.status == 0, "\(generate.stderr)") }
        // Fetched a minute apart, in this order (a file's time is otherwise its modification
        // time, and the smaller feed is written first).
        let fetched = [Date().addingTimeInterval(-120), Date().addingTimeInterval(-60)].map { ISO8601DateFormatter().string(from: $0) }
        for ((feed, _, _), asOf) in zip(feeds, fetched) {
            let ingest = try RunningProcess(Executables.url("incident-scheduler"),
                                            ["ingest", "--source", "gits", "--file", feed, "--as-of", asOf, "--database", database]).wait(timeout: 900)
            try #require(ingest.status == 0, "\(ingest.stderr)")
        }
        let sqlite = try SQLiteStore(path: database, clock: .fixed(t2))
        try poll(sqlite, [.rejected(RejectedRecord(externalID: "202300000001", position: "itemList at line 9", reason: "a test"))], at: t2)
        try sqlite.recordRun(IngestRun(source: "gits", startedAt: t2, finishedAt: t2, status: .failed, error: "code 22", resumesAt: t2))
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let postgres = try PostgresStore(location, clock: .fixed(t2))
            let counts = try postgres.copy(from: sqlite)
            #expect(counts == StoreCounts(incidents: 300_000, revisions: 30_000, runs: 4, rejectedRecords: 1, quotaStates: 1))
            let (fromPostgres, fromSQLite) = try Self.digests(postgres, sqlite)
            #expect(fromPostgres.differences(from: fromSQLite) == [])
            var components = try TestServer.uri()
            components.path = "/" + name
            // What the query CLI prints (a debug build prints 300,000 rows in about a minute, so
            // listings of 5,000 rows; every row was compared above).
            for filters in [["--order", "source", "--limit", "5000"], ["--search", "후속 정체", "--limit", "5000"],
                            ["--near", "37.3,127.0", "--radius", "3km", "--order", "distance"]] {
                let listed = try Self.ndjson([database, try #require(components.string)], filters)
                let (fromSQLite, fromPostgres) = (listed[0], listed[1])
                #expect(fromSQLite.0 == 0)
                #expect(fromPostgres.0 == 0)
                #expect(fromSQLite.1.count > 100_000, "\(filters)")
                #expect(fromPostgres.1 == fromSQLite.1, "\(filters)")
            }
        }
    }
}
