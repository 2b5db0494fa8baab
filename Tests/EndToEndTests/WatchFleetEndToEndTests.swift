import Foundation
import TestSupport
import Testing

/// Watches delivered by three scheduler hosts sharing one PostgreSQL database (issue 22 item 5;
/// MultiHostEndToEndTests' ``SchedulerFleet`` for the hosts): the position is in the database
/// and one host at a time holds a watch, so each transition is delivered once, whichever host
/// delivers it, through a receiver that fails, times out and recovers, and through the kill -9
/// of the delivering host between the delivery and its record.
@Suite("End to end: watches delivered by three scheduler hosts on one PostgreSQL database")
struct WatchFleetEndToEndTests {
    static let gits = TestPaths.fixture("gits/incidents_3.xml").path
    static let later = TestPaths.fixture("gits/incidents_2_later.xml").path

    /// How the receiver answers its requests to /hook, in the order they come.
    enum Answer: Equatable {
        case refused  // 503
        case tooLate  // 200 after the watch's timeout: the scheduler cut it
        case accepted  // 200
        case held  // 200 once the gate opens: the host that sent it is killed before
    }
    static let answers: [Answer] = [.refused, .tooLate, .accepted, .accepted, .held, .accepted]

    static func spec(_ answer: Answer) -> ResponseSpec {
        switch answer {
        case .refused: .status(503)
        case .tooLate: ResponseSpec(status: 200, delay: 11)
        case .accepted: .status(200)
        case .held: ResponseSpec(status: 200, holdUntil: "killed")
        }
    }

    /// `ingest --file` into the configuration's database.
    static func ingest(_ file: String, _ config: String, at instant: String, complete: Bool) async throws {
        let result = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", file, "--config", config,
                                                          "--as-of", instant] + (complete ? ["--complete"] : []))
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Waits until the watch's position is the change feed's last cursor (up to 40 s: a dead
    /// host's claim is waited out), and returns it.
    static func caughtUp(_ database: PostgresDatabase) async throws -> Int {
        var last = -1
        let reached = try await eventually(timeout: 40) {
            last = Int(try await database.query("SELECT last_cursor FROM change_feed").first?.first ?? "") ?? -1
            return try await database.query("SELECT cursor FROM watch_positions") == [[String(last)]]
        }
        #expect(reached, "the watch did not reach cursor \(last)")
        return last
    }

    @Test("three hosts, a receiver that fails (503), times out and recovers, and kill -9 of the delivering host while the receiver holds its POST: every transition accepted exactly once, the held one repeated with its cursor, every signature verifies")
    func threeHosts() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": Self.answers.map(Self.spec)])
        defer { server.stop() }
        let ws = try Workspace()
        try await PostgresDatabase.with { database in
            let config = try ws.write("config.json", #"""
                {"database": "\#(database.uri)", "lease": "5s",
                 "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/down/").absoluteString)", "interval": "1h", "retry": {"maxRetries": 0}}],
                 "watches": [{"name": "all", "from": "start", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET",
                              "timeout": "10s", "retry": {"baseDelay": 0.05, "maxRetries": 5}}]}
                """#)
            // Three appearances before the hosts start (cursors 1 to 3).
            try await Self.ingest(Self.gits, config, at: "2024-03-01T01:00:00Z", complete: false)
            let fleet = try SchedulerFleet(hosts: ["host-a", "host-b", "host-c"], ["run", "--loop", "--config", config],
                                           environment: ["K": "k", "HOOK_SECRET": WatchEndToEndTests.secret])
            defer { fleet.kill() }

            // The fifth request is held: the host holding the watch then is killed. The watch's
            // 10 s timeout keeps that POST under way while a starved test looks for its host (with
            // 2 s it had timed out, and the claim was gone, by the time the test asked).
            let held = try await eventually(timeout: 30) { try await server.requests(path: "/hook").count == 5 }
            try #require(held, "the receiver did not get five requests")
            let victim = try #require(try await database.query("SELECT holder_host FROM watch_positions WHERE expires_at > now()").first?.first)
            fleet.kill(victim)
            try await server.release(gate: "killed")

            // More transitions while the others wait out the dead host's claim.
            try await Self.ingest(Self.later, config, at: "2024-03-01T02:00:00Z", complete: true)
            let taken = try await Self.caughtUp(database)
            #expect(taken > 3, "the watch was not taken over")
            // And more once a living host delivers: from the end of the ingest (after its commit)
            // to the receiver's first request of them, on the server's clock.
            let asked = monotonicNow()
            try await Self.ingest(Self.gits, config, at: "2024-03-01T03:00:00Z", complete: true)
            let committed = monotonicNow()
            let last = try await Self.caughtUp(database)
            #expect(last > taken, "the third ingest logged nothing")
            await fleet.stopCleanly()

            let all = try await database.query("SELECT cursor FROM incident_transitions ORDER BY cursor").map { Int($0[0]) ?? -1 }
            #expect(all.last == last)
            let posts = try await server.requests(path: "/hook")
            var cursors: [Int] = []
            for post in posts {
                #expect(post.headers["x-incidents-watch"] == "all")
                cursors.append(try await WatchEndToEndTests.verified(post).cursor)
            }
            let answers = cursors.indices.map { $0 < Self.answers.count ? Self.answers[$0] : .accepted }
            // 1: refused, cut (too late), accepted; 2; 3: held for the killed host, then again.
            #expect(Array(cursors.prefix(6)) == [1, 1, 1, 2, 3, 3], "\(cursors)")
            let accepted = zip(cursors, answers).filter { $0.1 == .accepted }.map(\.0)
            #expect(accepted == all, "each transition accepted once, in order: \(accepted) of \(all)")
            if posts.count >= 6 {
                // The same transition; the incident in it is as stored when each was sent (the
                // second ingest may have revised it in between).
                let (held, repeated) = (try await WatchEndToEndTests.verified(posts[4]).object, try await WatchEndToEndTests.verified(posts[5]).object)
                for member in ["cursor", "kind", "at", "source", "external_id", "run_id"] {
                    #expect("\(held[member] ?? "-")" == "\(repeated[member] ?? "-")", "the repeat is the same transition: \(member)")
                }
            }
            let holder = try await database.query("SELECT holder_host FROM watch_positions").first?.first ?? ""
            #expect(holder != victim && ["host-a", "host-b", "host-c"].contains(holder), "the last delivery was by a living host: \(holder)")
            // Not asserted (a loaded machine stretches it): the commit lies between the two times.
            if let first = posts.first(where: { (Int($0.headers["x-incidents-cursor"] ?? "") ?? 0) > taken }) {
                print("watch fleet: first delivery of an ingest's transitions \(String(format: "%.3f", first.time - committed)) s after the ingest ended, "
                      + "\(String(format: "%.3f", first.time - asked)) s after it started")
            }
        }
    }
}
