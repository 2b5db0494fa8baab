import Foundation
import TestSupport
import Testing

/// `run --loop` on an SQLite file that is deleted or replaced under it (issue 24, point 5):
/// before each poll the scheduler checks that the database path and its lock file still name
/// the files it has open. Polls are counted on the feed server's side, each loop under its own
/// path prefix, and the runs are read from the file at the database's path afterwards. Files are
/// deleted while the server holds the answer to a poll (``ResponseSpec/holdUntil``): that poll
/// began before, and no later one can begin until it ends (a source's polls never overlap), so
/// the count of requests at the deletion is exact however late the test runs.
@Suite("End to end: the database file under a running loop", .serialized)
struct StoreFileEndToEndTests {
    /// Every 3 s: a file changed right after a poll's log line is checked before the next poll,
    /// with room for a loaded machine (a poll's own time shortens the wait).
    static let interval = "3s"

    static let feed = ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)

    /// Serves the feed under `/a/`, `/b/` and `/backup/`; the third answer under `/a/` waits for the gate `held`.
    static func server() async throws -> LoopbackServer {
        var held = feed
        held.holdUntil = "held"
        return try await LoopbackServer.start(routes: ["/a/getIncidentInfo": [feed, feed, held, feed], "/b/getIncidentInfo": [feed],
                                                       "/backup/getIncidentInfo": [feed]])
    }

    /// Waits until the loop's third poll is waiting for its answer; false after 20 s.
    static func thirdPollHeld(_ server: LoopbackServer) async throws -> Bool {
        try await eventually { try await requests(server, "a") == 3 }
    }

    /// A configuration polling the one source `gits` under `/prefix/`.
    static func config(_ ws: Workspace, _ server: LoopbackServer, prefix: String) throws -> String {
        try ws.write("config-\(prefix).json", """
            {"sources": [{"name": "gits", "provider": "gits", "keyEnv": "FILE_KEY",
              "baseURL": "\(server.url("/\(prefix)/").absoluteString)", "interval": "\(interval)"}]}
            """)
    }

    static func loop(_ config: String, _ database: String) throws -> RunningProcess {
        try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", config, "--database", database],
                           environment: ["FILE_KEY": "k"])
    }

    /// Waits until `process` has logged `count` finished polls; false after 20 s.
    static func finishedPolls(_ process: RunningProcess, atLeast count: Int) async throws -> Bool {
        try await eventually { process.stderrSoFar.components(separatedBy: "event=ingest.finished").count - 1 >= count }
    }

    static func requests(_ server: LoopbackServer, _ prefix: String) async throws -> Int {
        try await server.requests(path: "/\(prefix)/getIncidentInfo").count
    }

    /// The runs in the file at `database` now, by status.
    static func runs(_ database: String) async throws -> [String] {
        let result = try await run("incidents", ["runs", "--database", database, "--limit", "1000", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        return rows.compactMap { $0["status"] as? String }
    }

    @Test("the database and its lock file deleted: the loop stops before its next poll (exit 66, database.deleted) and makes no new file")
    func deleted() async throws {
        let server = try await Self.server()
        let ws = try Workspace()
        let loop = try Self.loop(try Self.config(ws, server, prefix: "a"), ws.database)
        #expect(try await Self.thirdPollHeld(server), "\(loop.stderrSoFar)")
        for file in [ws.database, ws.database + ".lock"] { try FileManager.default.removeItem(atPath: file) }
        try await server.release(gate: "held")

        let result = await loop.finished(timeout: 15)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("event=database.deleted"), "\(result.stderr)")
        #expect(result.stderr.contains("was deleted while this scheduler ran"))
        // The poll in flight ended; no poll began after the deletion, and none was stored anywhere.
        #expect(result.stderr.components(separatedBy: "event=ingest.finished").count - 1 == 3, "\(result.stderr)")
        #expect(try await Self.requests(server, "a") == 3)
        #expect(!FileManager.default.fileExists(atPath: ws.database), "no new database made unasked")
    }

    @Test("the database and its lock file deleted and a second loop started: the first stops before its next poll; every later poll is the second's, stored in the new file")
    func secondLoop() async throws {
        let server = try await Self.server()
        let ws = try Workspace()
        let first = try Self.loop(try Self.config(ws, server, prefix: "a"), ws.database)
        #expect(try await Self.thirdPollHeld(server), "\(first.stderrSoFar)")
        for file in [ws.database, ws.database + ".lock"] { try FileManager.default.removeItem(atPath: file) }
        let second = try Self.loop(try Self.config(ws, server, prefix: "b"), ws.database)
        try await server.release(gate: "held")

        let stopped = await first.finished(timeout: 15)
        // Which it finds depends on whether the second had made its files by the first's next
        // check: its lock taken (75), or no database yet (66). Either way it polls no more.
        #expect([66, 75].contains(stopped.status), "\(stopped.stderr)")
        #expect(stopped.stderr.contains(stopped.status == 75 ? "event=scheduler.lock_lost" : "event=database.deleted"), "\(stopped.stderr)")
        #expect(try await Self.requests(server, "a") == 3)

        #expect(try await Self.finishedPolls(second, atLeast: 2), "\(second.stderrSoFar)")
        second.send(SIGTERM)
        #expect(await second.finished(timeout: 30).status == 0)
        let runs = try await Self.runs(ws.database)
        #expect(runs.filter { $0 == "succeeded" }.count == (try await Self.requests(server, "b")), "\(runs)")
        #expect(runs.allSatisfy { ["succeeded", "cancelled"].contains($0) }, "\(runs)")
    }

    @Test("the lock file alone deleted: the loop locks the new one before its next poll (scheduler.lock_retaken) and a second loop is refused (75)")
    func lockDeleted() async throws {
        let server = try await Self.server()
        let ws = try Workspace()
        let loop = try Self.loop(try Self.config(ws, server, prefix: "a"), ws.database)
        #expect(try await Self.finishedPolls(loop, atLeast: 1), "\(loop.stderrSoFar)")
        try FileManager.default.removeItem(atPath: ws.database + ".lock")
        #expect(try await Self.finishedPolls(loop, atLeast: 2), "\(loop.stderrSoFar)")
        #expect(loop.stderrSoFar.contains("event=scheduler.lock_retaken"), "\(loop.stderrSoFar)")
        let second = await (try Self.loop(try Self.config(ws, server, prefix: "b"), ws.database)).finished(timeout: 30)
        #expect(second.status == 75, "\(second.stderr)")
        #expect(try await Self.requests(server, "b") == 0)
        loop.send(SIGTERM)
        #expect(await loop.finished(timeout: 30).status == 0)
    }

    @Test("a backup moved over the database: reopened before the next poll (database.reopened), every later poll is stored in it")
    func replaced() async throws {
        let server = try await Self.server()
        let ws = try Workspace()
        let backup = ws.directory.appendingPathComponent("backup.sqlite").path
        let made = try await run("incident-scheduler", ["run", "--once", "--config", try Self.config(ws, server, prefix: "backup"),
                                                         "--database", backup], environment: ["FILE_KEY": "k"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try await Self.runs(backup) == ["succeeded"])

        let loop = try Self.loop(try Self.config(ws, server, prefix: "a"), ws.database)
        #expect(try await Self.thirdPollHeld(server), "\(loop.stderrSoFar)")
        #expect(rename(backup, ws.database) == 0)
        try await server.release(gate: "held")
        #expect(try await Self.finishedPolls(loop, atLeast: 5), "\(loop.stderrSoFar)")
        loop.send(SIGTERM)
        let result = await loop.finished(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "event=database.reopened").count == 2, "once: \(result.stderr)")

        // The restored file holds its own run and every poll begun after the move, nothing else
        // (the third, in flight at the move, went to the file it began with).
        let polledAfter = try await Self.requests(server, "a") - 3
        #expect(polledAfter >= 2)
        // Newest first; SIGTERM may cancel the last poll after its request (recorded cancelled,
        // nothing of it stored), as at load 28.
        let runs = try await Self.runs(ws.database)
        #expect(runs.count == 1 + polledAfter, "\(runs), \(polledAfter) polls after the move")
        #expect(runs.dropFirst().allSatisfy { $0 == "succeeded" } && ["succeeded", "cancelled"].contains(runs.first ?? ""), "\(runs)")
        #expect(try await ws.listJSON().count == 3)
    }
}
