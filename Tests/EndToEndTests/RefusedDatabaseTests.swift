import Foundation
import TestSupport
import Testing

/// A database this binary refuses (issue 19, point 5) is left byte for byte as it was by every
/// command of both executables: no switch to WAL mode, no `-wal`, `-shm`, `.migrating` or
/// `.lock` file beside it, and the command fails saying why.
@Suite("End to end: a refused database is never modified")
struct RefusedDatabaseTests {
    static let feed = TestPaths.fixture("gits/incidents_3.xml").path

    /// How the database came to be refused: `sql` run on a database holding one poll (by the
    /// `sqlite3` shell, which leaves it in rollback-journal mode), and the start of the reason.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String?
        var reason: String
        var testDescription: String { name }
    }

    static let refusals = [
        Refusal(name: "a newer schema", sql: "INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', 'x', '2030-01-01T00:00:00Z');",
                reason: "the database schema is version 9999, newer than this binary knows"),
        Refusal(name: "an edited migration", sql: "UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1;",
                reason: "migration 0001"),
        Refusal(name: "not a database", sql: nil, reason: "the incidents database"),
    ]

    @Test("every command against a refused database fails and leaves its directory byte for byte as it was", arguments: refusals)
    func untouched(refusal: Refusal) async throws {
        let ws = try Workspace()
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [ResponseSpec(bodyFile: Self.feed)]])
        if let sql = refusal.sql {
            let seeded = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.feed, "--database", ws.database])
            try #require(seeded.status == 0, "\(seeded.stderr)")
            let changed = try await shell("sqlite3 \(shellQuoted(ws.database)) \(shellQuoted("PRAGMA journal_mode = DELETE; " + sql))")
            try #require(changed.status == 0, "\(changed.stderr)")
            for name in try FileManager.default.contentsOfDirectory(atPath: ws.directory.path) where name != "incidents.sqlite" {
                try FileManager.default.removeItem(at: ws.directory.appendingPathComponent(name))
            }
        } else {
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: ws.database))
        }
        let before = try Self.contents(of: ws.directory)
        #expect(before.keys.sorted() == ["incidents.sqlite"])
        // Outside the database's directory: what the commands may write.
        let elsewhere = try TestPaths.temporaryDirectory("refused-config")
        let config = elsewhere.appendingPathComponent("config.json").path
        try Data(#"""
            {"database": "\#(ws.database)", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K",
             "baseURL": "\#(server.url("/gits/").absoluteString)", "interval": "1m", "retry": {"maxRetries": 0}}]}
            """#.utf8).write(to: URL(fileURLWithPath: config))
        let environment = ["K": "refused+key="]
        let commands: [(String, [String])] = [
            ("incident-scheduler", ["migrate", "--database", ws.database]),
            ("incident-scheduler", ["migrate", "--status", "--database", ws.database]),
            ("incident-scheduler", ["run", "--once", "--config", config]),
            ("incident-scheduler", ["run", "--loop", "--config", config]),
            ("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.feed, "--database", ws.database]),
            ("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.feed, "--dry-run", "--database", ws.database]),
            ("incident-scheduler", ["prune", "--older-than", "1d", "--database", ws.database]),
            ("incident-scheduler", ["status", "--config", config]),
            ("incident-scheduler", ["sources", "--clear-quota", "gits", "--config", config]),
            ("incidents", ["list", "--database", ws.database]),
            ("incidents", ["list", "--search", "사고", "--database", ws.database]),
            ("incidents", ["stats", "--database", ws.database]),
            ("incidents", ["show", "1", "--database", ws.database]),
            ("incidents", ["runs", "--database", ws.database]),
            ("incidents", ["map", "--output", elsewhere.appendingPathComponent("map.html").path, "--database", ws.database]),
        ]
        for (tool, arguments) in commands {
            let result = try await run(tool, arguments, environment: environment, timeout: 30)
            let command = "\(tool) \(arguments.first ?? "")"
            #expect(result.status != 0 && result.status != 137, "\(command) exited \(result.status): \(result.stderr.suffix(500))")
            #expect(result.stderr.contains(refusal.reason), "\(command): \(result.stderr.suffix(500))")
            let after = try Self.contents(of: ws.directory)
            #expect(after.keys.sorted() == before.keys.sorted(), "\(command) left \(after.keys.sorted())")
            #expect(after == before, "\(command) changed the database")
        }
        #expect(try await server.requests().isEmpty)
    }

    /// Every file in `directory` with its bytes.
    static func contents(of directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }
}
