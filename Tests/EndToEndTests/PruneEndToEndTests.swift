import Foundation
import TestSupport
import Testing

/// `incident-scheduler prune --dry-run` (issue 20, point 9) on both stores, as an operator runs
/// it: with the configuration's `retention`, it prints what the prune then deletes, kind by kind,
/// and leaves the database as it was (SQLite: byte for byte; PostgreSQL: row for row).
@Suite("End to end: prune --dry-run")
struct PruneEndToEndTests {
    /// A database to prune, and how to read it: `sql` answered as text (sqlite3 or psql).
    struct Database {
        var setting: String
        var query: (String) async throws -> String
        /// SQLite: the bytes of the file and its log; PostgreSQL: every row of every table.
        var state: () async throws -> [String]
    }

    /// Three polls by `ingest --file`: GITS's three incidents 3 days ago; the same answer with
    /// 202401010001's coord_x unreadable (set aside) 50 hours ago; a complete answer of 36 hours
    /// ago without 202312310777 (cleared then). The first two runs are then made 3 days old.
    static func history(_ database: Database, in ws: Workspace) async throws {
        let original = try String(contentsOf: TestPaths.fixture("gits/incidents_3.xml"), encoding: .utf8)
        let unreadable = original.replacingOccurrences(of: "<coord_x>127.10471234</coord_x>", with: "<coord_x>127.1O471234</coord_x>")
        try #require(unreadable != original)
        let unreadableFile = try ws.write("unreadable.xml", unreadable)
        for (file, asOf, complete) in [(TestPaths.fixture("gits/incidents_3.xml").path, "3d", false), (unreadableFile, "50h", false),
                                       (TestPaths.fixture("gits/incidents_2_later.xml").path, "36h", true)] {
            let result = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", file, "--as-of", asOf, "--database", database.setting]
                                       + (complete ? ["--complete"] : []))
            try #require(result.status == 0, "\(result.stderr)")
        }
        _ = try await database.query("UPDATE ingest_runs SET finished_at = '2020-01-01T00:00:00Z' WHERE id IN (SELECT id FROM ingest_runs ORDER BY id LIMIT 2)")
    }

    static let tables = ["incidents", "incident_revisions", "incident_transitions", "ingest_runs", "rejected_records"]

    static func rowCounts(_ database: Database) async throws -> [Int] {
        let sql = "SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: ", ")
        return try await database.query(sql).split(whereSeparator: { "|\t\n".contains($0) }).map { Int($0) ?? -1 }
    }

    static func check(_ database: Database, in ws: Workspace) async throws {
        try await history(database, in: ws)
        let config = try ws.write("config.json", """
            {"database": "\(database.setting)", "retention": "1d", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K"}]}
            """)
        let before = try await database.state()
        let rows = try await rowCounts(database)
        let dryRun = try await run("incident-scheduler", ["prune", "--dry-run", "--config", config])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        // 202312310777 (appeared, cleared) and the two old runs, one with its record set aside.
        let expected = "1 incident, 0 revisions, 2 transitions, 2 runs and 1 quarantined record older than "
        #expect(dryRun.stdout.hasPrefix("would delete " + expected), "\(dryRun.stdout)")
        #expect(try await database.state() == before, "the dry run changed the database")
        #expect(try await rowCounts(database) == rows)

        let pruned = try await run("incident-scheduler", ["prune", "--config", config])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.hasPrefix("deleted " + expected), "\(pruned.stdout)")
        let after = try await rowCounts(database)
        #expect(zip(rows, after).map { $0 - $1 } == [1, 0, 2, 2, 1], "rows deleted from \(tables): before \(rows), after \(after)")
        let again = try await run("incident-scheduler", ["prune", "--dry-run", "--config", config])
        #expect(again.stdout.hasPrefix("would delete 0 incidents, 0 revisions, 0 transitions, 0 runs and 0 quarantined records older than "), "\(again.stdout)")

        let refused = try await run("incident-scheduler", ["prune", "--dry-run", "--vacuum", "--config", config])
        #expect(refused.status == 64 && refused.stderr.contains("--dry-run deletes nothing, so --vacuum would have nothing to give back"), "\(refused.stderr)")
    }

    @Test("SQLite: the dry run prints what the prune then deletes; the file and its log are unchanged byte for byte")
    func sqlite() async throws {
        let ws = try Workspace()
        let database = Database(setting: ws.database, query: { sql in
            let result = try await shell("sqlite3 \(shellQuoted(ws.database)) \(shellQuoted(sql))")
            try #require(result.status == 0, "sqlite3: \(result.stderr)")
            return result.stdout
        }, state: {
            ["", "-wal"].map { suffix in
                ((try? Data(contentsOf: URL(fileURLWithPath: ws.database + suffix))) ?? Data()).base64EncodedString()
            }
        })
        try await Self.check(database, in: ws)
    }

    @Test("PostgreSQL: the dry run prints what the prune then deletes; every row of every table is unchanged")
    func postgres() async throws {
        let ws = try Workspace()
        try await PostgresDatabase.with { server in
            let database = Database(setting: server.uri, query: { sql in
                try await server.query(sql).map { $0.joined(separator: "\t") }.joined(separator: "\n")
            }, state: {
                var rows: [String] = []
                for table in try await server.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1") {
                    rows += try await server.query("SELECT '\(table[0])', t::text FROM \"\(table[0])\" t ORDER BY 2").map { $0.joined(separator: " ") }
                }
                return rows
            })
            try await Self.check(database, in: ws)
        }
    }
}
