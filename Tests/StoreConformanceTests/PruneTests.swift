import Foundation
import IncidentCore
@testable import IncidentPostgres
@testable import IncidentSQLite
import Testing

/// `prune` and `prune --dry-run` (issue 20, point 9) on every store: the dry run counts, kind by
/// kind, exactly the rows the prune then deletes, and changes no row of any table.
@Suite("Prune and its dry run (every store)")
struct PruneTests {
    /// gits at t0: A, B, C and a record set aside (R1); at t1: B changed, C, another record set
    /// aside (R2), A not listed (cleared at t1); at t2: nothing listed (B and C cleared). its at
    /// t0: X, never cleared.
    static func history(_ store: any TestStore) throws {
        func setAside(_ id: String) -> FeedRecord { .rejected(RejectedRecord(externalID: id, position: "item 9", reason: "coord_x is not a number")) }
        try poll(store, live("A", "B", "C") + [setAside("R1")], at: t0)
        try poll(store, [.incident(incident("B", description: "[사고] 2차로 통제로 바뀜")), .incident(incident("C")), setAside("R2")], at: t1)
        try poll(store, [], at: t2)
        try poll(store, [.incident(incident("X", source: "its"))], at: t0, source: "its")
    }

    /// The tables whose rows a prune deletes, with the count of each.
    static var pruned: [(table: String, count: KeyPath<PruneCounts, Int>)] {
        [("incidents", \.incidents), ("incident_revisions", \.revisions), ("incident_transitions", \.transitions),
         ("ingest_runs", \.runs), ("rejected_records", \.rejectedRecords)]
    }

    /// Every row of every table of the store, as text, by table (SQLite: each column `quote`d,
    /// the full-text and R-tree tables and their shadow tables included; PostgreSQL: the row
    /// as a record).
    static func contents(_ store: any TestStore, _ kind: StoreKind) throws -> [String: [String]] {
        var contents: [String: [String]] = [:]
        switch kind {
        case .sqlite:
            for case let table? in try store.column("SELECT name FROM sqlite_master WHERE type = 'table'") {
                let columns = try store.column("SELECT name FROM pragma_table_info('\(table)')").compactMap { $0 }
                let row = columns.map { "quote(\"\($0)\")" }.joined(separator: " || ',' || ")
                contents[table] = try store.column("SELECT \(row) FROM \"\(table)\"").map { $0 ?? "NULL" }.sorted()
            }
        case .postgres:
            for case let table? in try store.column("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'") {
                contents[table] = try store.column("SELECT t::text FROM \"\(table)\" t").map { $0 ?? "NULL" }.sorted()
            }
        }
        return contents
    }

    static func rowCounts(_ store: any TestStore) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try pruned.map { ($0.table, try integer(store, "SELECT count(*) FROM \($0.table)") ?? -1) })
    }

    /// Counts what a prune at `horizon` would delete, checks that no row changed, then prunes
    /// in batches of one row (every batch loop runs) and checks that it reports, and deletes
    /// from each table, what the dry run said; returns the dry run's counts.
    static func dryRunThenPrune(_ store: any TestStore, _ kind: StoreKind, before horizon: UTCInstant,
                                sourceLocation: SourceLocation = #_sourceLocation) throws -> PruneCounts {
        let before = try contents(store, kind)
        #expect(before.count >= 8, "the tables read: \(before.keys.sorted())", sourceLocation: sourceLocation)
        let dryRun = try store.pruneCounts(before: horizon)
        #expect(try contents(store, kind) == before, "the dry run changed no row", sourceLocation: sourceLocation)
        let rows = try rowCounts(store)
        let counts: PruneCounts
        switch store {
        case let sqlite as SQLiteStore: counts = try sqlite.prune(before: horizon, batchSize: 1)
        case let postgres as PostgresStore: counts = try postgres.prune(before: horizon, batchSize: 1)
        default: counts = try store.prune(before: horizon)
        }
        #expect(counts == dryRun, "what the prune reports", sourceLocation: sourceLocation)
        let after = try rowCounts(store)
        for (table, count) in pruned {
            #expect((rows[table] ?? 0) - (after[table] ?? 0) == dryRun[keyPath: count], "rows deleted from \(table)", sourceLocation: sourceLocation)
        }
        #expect(try store.pruneCounts(before: horizon) == PruneCounts(), "nothing is left to prune", sourceLocation: sourceLocation)
        return dryRun
    }

    @Test("the dry run counts each kind the prune then reports and deletes, and changes no row; batches of one row prune the same",
          arguments: StoreKind.allCases)
    func dryRunThenPrune(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.history(store)
            // Before t1 + 1 s: A (appeared, cleared), and the two older runs of gits with the
            // records they set aside; gits' latest run and its's only run stay.
            let first = try Self.dryRunThenPrune(store, kind, before: t1.adding(seconds: 1))
            #expect(first == PruneCounts(incidents: 1, revisions: 0, transitions: 2, runs: 2, rejectedRecords: 2), "\(first)")
            // Then B (appeared, revised, cleared; one earlier version) and C (appeared, cleared).
            let second = try Self.dryRunThenPrune(store, kind, before: t2.adding(seconds: 1))
            #expect(second == PruneCounts(incidents: 2, revisions: 1, transitions: 5), "\(second)")
            #expect(try allRows(store).map(\.incident.externalID) == ["X"])
            // The entries of no incident (the records set aside) stay in the log, X's too.
            #expect(try store.column("SELECT kind FROM incident_transitions ORDER BY kind").compactMap { $0 } == ["appeared", "quarantined", "quarantined"])
        }
    }
}
