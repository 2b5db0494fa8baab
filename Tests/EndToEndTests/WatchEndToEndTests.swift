import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// Watches (issue 22 item 5): `incident-scheduler run` delivers the change feed to each watch's
/// webhook on loopback (or command) after its poll round, signed, from the position the
/// database keeps.
/// The transitions are written by real polls of the store (complete and incomplete answers); the
/// run's own source fails at once (nothing of it is logged), so what is delivered is exactly what
/// the test wrote.
@Suite("End to end: watches", .serialized)
struct WatchEndToEndTests {
    static let secret = "hook-secret+w22="
    /// Suwon; "near" incidents lie about 300 m from it, "far" ones in Seoul, 35 km away.
    static let center = "37.2636,127.0286"

    static func instant(_ text: String) -> UTCInstant { UTCInstant(rfc3339: "2024-03-01T\(text):00Z")! }

    static func incident(_ id: String, near: Bool, category: IncidentCategory = .accident) -> Incident {
        Incident(source: "gits", externalID: id, category: category, description: "사고 \(id)", road: "경부고속도로",
                 coordinate: near ? Coordinate(latitude: 37.2660, longitude: 127.0300) : Coordinate(latitude: 37.5665, longitude: 126.9780),
                 startedAt: instant("00:00"))
    }

    /// One poll of source gits at `time` that lists `incidents`, complete unless `incomplete`.
    static func poll(_ path: String, _ time: String, _ incidents: [Incident], incomplete: Bool = false) throws {
        let store = try SQLiteStore(path: path, clock: .fixed(instant(time)))
        let verdict = incomplete ? ResponseVerdict(incompleteBecause: ["totalCount is 9 but the response holds 1 readable record"]) : .complete
        _ = try store.ingest(PollContext(source: "gits", startedAt: instant(time)),
                             QueryFixture.Producer(incidents: incidents, verdict: verdict).callAsFunction)
    }

    /// A configuration whose one source fails at once (404, no retry) and with `watch` (JSON
    /// members) POSTing to the server's /hook, from the start of the log (the tests write the
    /// transitions before the run).
    static func config(_ ws: Workspace, _ server: LoopbackServer, watch: String) throws -> String {
        try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/down/").absoluteString)", "interval": "1h", "retry": {"maxRetries": 0}}],
             "watches": [{"name": "suwon", "from": "start", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET", \#(watch)}]}
            """#)
    }

    /// Each watch's stored cursor, by name.
    static func cursors(_ ws: Workspace) throws -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: try SQLiteStore(path: ws.database, clock: .fixed(instant("23:00"))).watchPositions().map { ($0.watch, $0.cursor) })
    }

    /// `true` once `process` has logged `event`.
    static func logged(_ process: RunningProcess, _ event: String) async throws -> Bool {
        try await eventually { process.stderrSoFar.contains("event=\(event)") }
    }

    /// `incident-scheduler watches --format json`, parsed.
    static func watchesJSON(_ config: String) async throws -> [[String: Any]] {
        let result = try await run("incident-scheduler", ["watches", "--config", config, "--format", "json"], environment: ["K": "k", "HOOK_SECRET": secret])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout)")
    }

    static func runOnce(_ config: String) async throws -> ProcessResult {
        try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": "k", "HOOK_SECRET": secret])
    }

    /// The deliveries of `watch` the receiver answered 2xx (by their order among all its
    /// requests to `path`, `statuses` the answers scripted), as `KIND EXTERNAL_ID`, each with its
    /// signature verified by Python's hmac.
    static func delivered(_ server: LoopbackServer, path: String = "/hook", watch: String = "suwon", answered statuses: [Int]? = nil) async throws -> [String] {
        let posts = try await server.requests(path: path)
        var summary: [String] = []
        for (index, post) in posts.enumerated() where post.headers["x-incidents-watch"] == watch
            && statuses.map({ index < $0.count ? (200..<300).contains($0[index]) : true }) ?? true {
            #expect(post.method == "POST")
            let (object, _) = try await verified(post)
            summary.append("\(object["kind"] as? String ?? "?") \(object["external_id"] as? String ?? "-")")
        }
        return summary
    }

    /// A delivery's JSON and cursor, its X-Incidents-Cursor and signature checked (Python's hmac).
    static func verified(_ post: RecordedRequest) async throws -> (object: [String: Any], cursor: Int) {
        let body = try #require(post.body)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let cursor = object["cursor"] as? Int ?? -1
        #expect(post.headers["x-incidents-cursor"] == "\(cursor)")
        let signature = try #require(post.headers["x-incidents-signature"])
        #expect(try await Self.signature(body) == signature, "the signature does not verify: \(body)")
        return (object, cursor)
    }

    /// `sha256=HEX` of `body` under the test's secret, by Python's hmac.
    static func signature(_ body: String) async throws -> String {
        let check = try await shell(#"printf %s "$BODY" | python3 -c 'import hmac,hashlib,sys; print("sha256="+hmac.new(sys.argv[1].encode(), sys.stdin.buffer.read(), hashlib.sha256).hexdigest())' "$SECRET""#,
                                    environment: ["BODY": body, "SECRET": secret])
        return check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a watch near a point gets appeared and cleared of the accidents within its radius only, each signed; the secret is never logged")
    func nearPoint() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(204)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: false),
                                            Self.incident("C", near: true, category: .roadwork)])
        try Self.poll(ws.database, "02:00", [Self.incident("B", near: false)])
        let config = try Self.config(ws, server, watch: #""near": "\#(Self.center)", "radius": "2km", "category": ["accident"], "transitions": ["appeared", "cleared"]"#)
        let result = try await Self.runOnce(config)
        #expect(result.status == 1, "the source fails: \(result.stderr)")
        #expect(try await Self.delivered(server) == ["appeared A", "cleared A"])
        #expect(result.stderr.contains("event=watch.delivered watch=suwon"), "\(result.stderr)")
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(checked.stdout.contains("watch suwon: appeared,cleared to \(server.url("/hook").absoluteString) (signed)"), "\(checked.stdout)")
        #expect(!checked.stdout.contains("warning"), "\(checked.stdout)")
        expectNoKey(Self.secret, in: [result.stderr, result.stdout, checked.stdout, checked.stderr], database: ws.databaseBytes())
    }

    @Test("a webhook URL's token in its query is a secret: delivered to, never shown by check-config, the logs or the database")
    func tokenInURL() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(204)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true)])
        let token = "T0KENsecret99"
        let url = server.url("/hook").absoluteString + "?access_token=\(token)&team=ops"
        let config = try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/down/").absoluteString)", "retry": {"maxRetries": 0}}],
             "watches": [{"name": "suwon", "from": "start", "url": "\#(url)", "secretEnv": "HOOK_SECRET"}]}
            """#)
        let result = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["appeared A"])
        #expect(try await server.requests(path: "/hook").first?.query == "access_token=\(token)&team=ops", "the receiver gets its token")
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(checked.stdout.contains("to \(server.url("/hook").absoluteString)?access_token=REDACTED&team=ops (signed)"), "\(checked.stdout)")
        expectNoKey(token, in: [result.stderr, result.stdout, checked.stdout, checked.stderr], database: ws.databaseBytes())
    }

    @Test("a receiver that answers 503 twice, then 200, gets each change exactly once; a restart resumes from the stored cursor without a repeat")
    func retriesAndRestart() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(503), .status(503), .status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: true)])
        let config = try Self.config(ws, server, watch: #""source": "gits", "retry": {"baseDelay": 0.05, "maxRetries": 3}"#)
        let first = try await Self.runOnce(config)
        let posts = try await server.requests(path: "/hook")
        #expect(posts.count == 4, "A: 503, 503, 200; B: 200")
        #expect(try await Self.delivered(server, answered: [503, 503, 200, 200]) == ["appeared A", "appeared B"])
        #expect(first.stderr.components(separatedBy: "event=watch.delivery_retry").count - 1 == 2, "\(first.stderr)")
        #expect(try Self.cursors(ws) == ["suwon": 2])
        #expect(!FileManager.default.fileExists(atPath: ws.database + ".watches"), "the position is in the database, not beside it")
        // Its source is polled by no source of the file (here, by the test itself): said, not refused.
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(checked.status == 0)
        #expect(checked.stdout.contains("warning: watch suwon: no source of this file is named 'gits' (sources: down); it delivers only what "
                                        + "another host sharing the database polls under that name"), "\(checked.stdout)")

        // A restart after another poll delivers only what is new.
        try await server.reset()
        try await server.script("/hook", [.status(200)])
        try Self.poll(ws.database, "02:00", [Self.incident("B", near: true)])
        _ = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["cleared A"])
        // And a run with nothing new posts nothing.
        try await server.reset()
        try await server.script("/hook", [.status(200)])
        _ = try await Self.runOnce(config)
        #expect(try await server.requests(path: "/hook").isEmpty)
    }

    @Test("a receiver that stays down keeps the cursor: `watches` shows the lag and the error, the next run delivers from there, nothing lost")
    func receiverDown() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(503)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true)])
        let config = try Self.config(ws, server, watch: #""retry": {"baseDelay": 0.05, "maxRetries": 1}"#)
        // Not registered before the first run: null where the table shows -.
        let unregistered = try await Self.watchesJSON(config)
        #expect(unregistered.count == 1)
        #expect(unregistered.first?["watch"] as? String == "suwon")
        for key in ["cursor", "lag", "delivered_at", "holder_host", "holder_pid", "last_error", "last_error_at"] {
            #expect(unregistered.first?[key] is NSNull, "\(key): \(unregistered)")
        }
        let down = try await Self.runOnce(config)
        #expect(try await server.requests(path: "/hook").count == 2)
        #expect(down.stderr.contains("event=watch.delivery_failed watch=suwon cursor=1 kind=appeared attempt=2 error=\"HTTP 503\""), "\(down.stderr)")
        let listed = try await run("incident-scheduler", ["watches", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(listed.status == 0, "\(listed.stderr)")
        let row = try #require(listed.stdout.split(separator: "\n").last).split(separator: " ", omittingEmptySubsequences: true)
        #expect(Array(row.prefix(7)) == ["suwon", "0", "1", "-", "-", "HTTP", "503"], "\(listed.stdout)")
        let downJSON = try #require(try await Self.watchesJSON(config).first)
        #expect(downJSON["cursor"] as? Int == 0 && downJSON["lag"] as? Int == 1, "\(downJSON)")
        #expect(downJSON["delivered_at"] is NSNull && downJSON["holder_host"] is NSNull && downJSON["holder_pid"] is NSNull, "released: \(downJSON)")
        #expect(downJSON["last_error"] as? String == "HTTP 503")
        #expect((downJSON["last_error_at"] as? String).flatMap(UTCInstant.init(rfc3339:)) != nil, "\(downJSON)")
        try await server.reset()
        try await server.script("/hook", [.status(200)])
        _ = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["appeared A"])
        let caughtUp = try await run("incident-scheduler", ["watches", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        let caughtUpRow = Array(try #require(caughtUp.stdout.split(separator: "\n").last).split(separator: " ", omittingEmptySubsequences: true))
        #expect(Array(caughtUpRow.prefix(3)) == ["suwon", "1", "0"] && caughtUpRow[3].hasPrefix("20") && caughtUpRow[4] == "-" && caughtUpRow[5] == "HTTP",
                "delivered with its time; the last error stays, with its time: \(caughtUp.stdout)")
        let caughtUpJSON = try #require(try await Self.watchesJSON(config).first)
        #expect(caughtUpJSON["cursor"] as? Int == 1 && caughtUpJSON["lag"] as? Int == 0, "\(caughtUpJSON)")
        #expect((caughtUpJSON["delivered_at"] as? String).flatMap(UTCInstant.init(rfc3339:)) != nil, "\(caughtUpJSON)")
        #expect(caughtUpJSON["last_error"] as? String == "HTTP 503" && caughtUpJSON["last_error_at"] as? String == downJSON["last_error_at"] as? String)
    }

    @Test("a receiver that times out, then recovers, gets the change after the retry")
    func receiverTimesOut() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [ResponseSpec(status: 200, delay: 3), .status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true)])
        let config = try Self.config(ws, server, watch: #""timeout": "1s", "retry": {"baseDelay": 0.05, "maxRetries": 2}"#)
        let result = try await Self.runOnce(config)
        #expect(result.stderr.contains(#"event=watch.delivery_retry watch=suwon cursor=1 kind=appeared attempt=1 error="no answer within the watch's timeout (1s)""#), "\(result.stderr)")
        #expect(result.stderr.contains("event=watch.delivered watch=suwon cursor=1 kind=appeared status=200 attempt=2"), "\(result.stderr)")
        #expect(try await server.requests(path: "/hook").count == 2)
        #expect(try Self.cursors(ws) == ["suwon": 1])
    }

    @Test("an incomplete poll never delivers cleared; the next complete poll does")
    func incompleteNeverClears() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: true)])
        try Self.poll(ws.database, "02:00", [Self.incident("B", near: true)], incomplete: true)
        let config = try Self.config(ws, server, watch: #""near": "\#(Self.center)""#)
        _ = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["appeared A", "appeared B"])
        try await server.reset()
        try await server.script("/hook", [.status(200)])
        try Self.poll(ws.database, "03:00", [Self.incident("B", near: true)])
        _ = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["cleared A"])
    }

    @Test("run --loop: a real poll's transitions reach the watch within seconds of its commit; SIGTERM stops deliveries and exits 0")
    func loop() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)], "/hook": [.status(200)],
        ])
        defer { server.stop() }
        let ws = try Workspace()
        let config = try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/gits/").absoluteString)", "interval": "1h"}],
             "watches": [{"name": "suwon", "source": "gits", "transitions": ["appeared"], "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET"}]}
            """#)
        let process = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", config],
                                         environment: ["K": "k", "HOOK_SECRET": Self.secret])
        let delivered = try await eventually { try await server.requests(path: "/hook").count >= 3 }
        #expect(delivered, "the poll's three appearances were not delivered in 20 s")
        process.send(SIGTERM)
        let result = await process.finished(timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let stored = try await ws.listJSON()
        #expect(try await Self.delivered(server).sorted() == stored.map { "appeared \($0.text("external_id") ?? "?")" }.sorted())
        let requests = try await server.requests()
        if let poll = requests.first(where: { $0.path == "/gits/getIncidentInfo" }), let post = requests.last(where: { $0.path == "/hook" }) {
            // Not asserted (a loaded machine stretches it): the server's clock, request to the last delivery.
            print("watch loop: poll request to third delivery \(post.time - poll.time) s")
        }
    }

    @Test("run --loop against a receiver that is down: each failed turn doubles the watch's rest (2 s, 4 s …), not one attempt a second")
    func restAfterFailedTurns() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)], "/hook": [.status(500)],
        ])
        defer { server.stop() }
        let ws = try Workspace()
        let config = try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/gits/").absoluteString)", "interval": "1h"}],
             "watches": [{"name": "suwon", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET", "retry": {"maxRetries": 0}}]}
            """#)
        let process = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", config],
                                         environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(try await eventually(timeout: 60) { try await server.requests(path: "/hook").count >= 4 }, "four failed turns")
        process.send(SIGTERM)
        let result = await process.finished(timeout: 60)
        let posts = try await server.requests(path: "/hook")
        // The server's clock: each turn after a failed one waits at least the rest (2, 4, 8 s).
        let gaps = zip(posts.dropFirst(), posts).map { $0.time - $1.time }
        #expect(gaps.count >= 3 && gaps[0] >= 2 && gaps[1] >= 4 && gaps[2] >= 8, "\(gaps)")
        #expect(Set(posts.compactMap { $0.headers["x-incidents-cursor"] }) == ["1"], "every turn starts again at the first transition")
        #expect(result.stderr.contains("event=watch.resting watch=suwon cursor=1 failed_turns=2 next_turn_in_s=4"), "\(result.stderr)")
    }

    @Test("PostgreSQL: real polls delivered from the change feed, the position in the database; an earlier version's watchState file is taken over, then renamed")
    func postgres() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)], "/hook": [.status(200)],
        ])
        defer { server.stop() }
        let ws = try Workspace()
        try await PostgresDatabase.with { database in
            func config(_ watches: String) throws -> String {
                try ws.write("config.json", #"""
                    {"database": "\#(database.uri)", \#(watches)
                     "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/gits/").absoluteString)"}]}
                    """#)
            }
            // Three appearances, before the watch existed.
            #expect(try await Self.runOnce(try config("")).status == 0)
            // The file an earlier version kept: the watch had delivered the first.
            let state = ws.directory.appendingPathComponent("watches.json").path
            try #"{"suwon":{"cursor":1}}"#.write(toFile: state, atomically: true, encoding: .utf8)
            let watched = try config(#""watchState": "\#(state)", "watches": [{"name": "suwon", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET"}],"#)
            let polled = try await Self.runOnce(watched)
            #expect(polled.status == 0, "\(polled.stderr)")
            #expect(polled.stderr.contains("event=watch.state_imported file=\(state) watches=suwon@1 renamed_to=\(state).imported"), "\(polled.stderr)")
            var cursors: [Int] = []
            for post in try await server.requests(path: "/hook") { cursors.append(try await Self.verified(post).cursor) }
            #expect(cursors == [2, 3])
            #expect(!FileManager.default.fileExists(atPath: state) && FileManager.default.fileExists(atPath: state + ".imported"))
            #expect(try await database.query("SELECT watch, cursor, holder_host IS NOT NULL, expires_at IS NULL, delivered_at IS NOT NULL FROM watch_positions")
                    == [["suwon", "3", "t", "t", "t"]], "delivered, released")
            let listed = try #require(try await Self.watchesJSON(watched).first, "watches --format json on PostgreSQL")
            #expect(listed["watch"] as? String == "suwon" && listed["cursor"] as? Int == 3 && listed["lag"] as? Int == 0, "\(listed)")
            #expect((listed["delivered_at"] as? String).flatMap(UTCInstant.init(rfc3339:)) != nil, "\(listed)")
            #expect(["holder_host", "holder_pid", "last_error", "last_error_at"].allSatisfy { listed[$0] is NSNull }, "released, no error: \(listed)")
            try await server.reset()
            try await server.script("/hook", [.status(200)])
            let again = try await Self.runOnce(watched)
            #expect(again.status == 0 && !again.stderr.contains("watch.state_imported"), "\(again.stderr)")
            #expect(try await server.requests(path: "/hook").isEmpty, "the same answer again: nothing new to deliver")
        }
    }

    @Test("SQLite: the positions of an existing DATABASE.watches file are taken over on the first run and the file renamed DATABASE.watches.imported")
    func stateFileTakenOver() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: true), Self.incident("C", near: true)])
        try #"{"suwon":{"cursor":2,"lastError":"HTTP 503","lastErrorAt":"2024-03-01T01:30:00Z"}}"#.write(toFile: ws.database + ".watches", atomically: true, encoding: .utf8)
        let result = try await Self.runOnce(try Self.config(ws, server, watch: #""source": "gits""#))
        #expect(result.stderr.contains("event=watch.state_imported file=\(ws.database).watches watches=suwon@2"), "\(result.stderr)")
        #expect(try await Self.delivered(server) == ["appeared C"])
        #expect(try Self.cursors(ws) == ["suwon": 3])
        #expect(FileManager.default.fileExists(atPath: ws.database + ".watches.imported"))
        #expect(!FileManager.default.fileExists(atPath: ws.database + ".watches"))
    }

    @Test("kill -9 between delivery and its record: the next scheduler delivers that transition again with the same cursor, body and signature, then the rest once")
    func crashBetweenDeliveryAndRecord() async throws {
        // The first POST is held until the scheduler that sent it was killed: the receiver has
        // the change, the scheduler never learnt it.
        let server = try await LoopbackServer.start(routes: ["/hook": [ResponseSpec(status: 200, holdUntil: "killed"), .status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: true)])
        let config = try Self.config(ws, server, watch: #""timeout": "30s""#)
        let environment = ["K": "k", "HOOK_SECRET": Self.secret]
        let first = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", config], environment: environment)
        let held = try await eventually { try await server.requests(path: "/hook").count == 1 }
        #expect(held, "no delivery reached the receiver: \(first.stderrSoFar)")
        first.send(SIGKILL)
        _ = await first.finished(timeout: 30)
        try await server.release(gate: "killed")
        let second = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", config], environment: environment)
        let caughtUp = try await eventually { try Self.cursors(ws) == ["suwon": 2] }
        second.send(SIGTERM)
        let stopped = await second.finished(timeout: 60)
        #expect(caughtUp && stopped.status == 0, "\(stopped.stderr)")
        let posts = try await server.requests(path: "/hook")
        var cursors: [Int] = []
        for post in posts { cursors.append(try await Self.verified(post).cursor) }
        #expect(cursors == [1, 1, 2], "the repeat carries the cursor of the unrecorded delivery")
        if posts.count == 3 {
            #expect(posts[0].body == posts[1].body && posts[0].headers["x-incidents-signature"] == posts[1].headers["x-incidents-signature"])
        }
    }

    @Test("a command target: the change on its stdin, exit 0 delivers; exit 3 and a timeout (its process group killed) are retried; no secret in its argv, environment or the log")
    func commandTarget() async throws {
        let ws = try Workspace()
        // Records each call's stdin, argv and environment; fails the first (exit 3), hangs the second (with a child).
        let script = try ws.write("receive.sh", #"""
            #!/bin/sh
            dir="$1"
            n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
            echo "$n" > "$dir/count"
            body=$(cat)
            case "$n" in
              1) echo "receiver busy: try later (Authorization: Bearer abcdefSECRET9)" >&2; exit 3 ;;
              2) sleep 30 & wait; exit 0 ;;
            esac
            printf '%s\n' "$body" >> "$dir/delivered.jsonl"
            env > "$dir/env"
            printf '%s\n' "$@" > "$dir/argv"
            """#)
        chmod(script, 0o755)
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true)])
        let config = try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "http://127.0.0.1:9/", "retry": {"maxRetries": 0}}],
             "watches": [{"name": "suwon", "from": "start", "command": ["./receive.sh", "\#(ws.directory.path)"], "secretEnv": "HOOK_SECRET",
                          "timeout": "1s", "retry": {"baseDelay": 0.05, "maxRetries": 3}}]}
            """#)
        let started = Date()
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config],
                                   environment: ["K": "source-key-w22", "HOOK_SECRET": Self.secret, "PATH": "/usr/bin:/bin"])
        let seconds = Date().timeIntervalSince(started)
        #expect(result.stderr.contains(#"event=watch.delivery_retry watch=suwon cursor=1 kind=appeared attempt=1 error="exit status 3: receiver busy: try later (Authorization: Bearer REDACTED)""#), "\(result.stderr)")
        #expect(!result.stderr.contains("abcdefSECRET9"), "a program's stderr is redacted as any log text")
        #expect(result.stderr.contains(#"event=watch.delivery_retry watch=suwon cursor=1 kind=appeared attempt=2 error="timed out after 1s (killed)""#), "\(result.stderr)")
        #expect(result.stderr.contains("event=watch.delivered watch=suwon cursor=1 kind=appeared exit=0 attempt=3"), "\(result.stderr)")
        #expect(seconds < 25, "the hung command's child (sleep 30) was killed with it: \(seconds) s")
        let delivered = try String(contentsOfFile: ws.directory.appendingPathComponent("delivered.jsonl").path, encoding: .utf8)
        let lines = delivered.split(separator: "\n").map(String.init)
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "appeared" && object["external_id"] as? String == "A" && object["cursor"] as? Int == 1)
        let environment = try String(contentsOfFile: ws.directory.appendingPathComponent("env").path, encoding: .utf8)
        let variables = Set(environment.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        #expect(variables.isSuperset(of: ["PATH", "INCIDENTS_WATCH", "INCIDENTS_CURSOR", "INCIDENTS_KIND", "INCIDENTS_SIGNATURE"]), "\(variables.sorted())")
        #expect(!variables.contains("K") && !variables.contains("HOOK_SECRET"), "\(variables.sorted())")
        let signature = try await Self.signature(lines[0])
        #expect(environment.contains("INCIDENTS_CURSOR=1\n") && environment.contains("INCIDENTS_SIGNATURE=\(signature)\n"))
        #expect(try String(contentsOfFile: ws.directory.appendingPathComponent("argv").path, encoding: .utf8) == ws.directory.path + "\n")
        #expect(try Self.cursors(ws) == ["suwon": 1])
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret, "PATH": "/usr/bin:/bin"])
        #expect(checked.stdout.contains("watch suwon: appeared,revised,ended,cleared,reopened,quarantined to \(ws.directory.path)/receive.sh (command, signed)"), "\(checked.stdout)")
        expectNoKey(Self.secret, in: [result.stderr, result.stdout, checked.stdout, checked.stderr, environment], database: ws.databaseBytes())
        expectNoKey("source-key-w22", in: [environment])
    }

    @Test("a command target starts as from a shell: no signal blocked or ignored, so timeout(1), trap and kill work in it", arguments: [["run", "--once"], ["run", "--loop"]])
    func commandSignals(mode: [String]) async throws {
        let ws = try Workspace()
        // A command started with signals blocked (as a child of a Dispatch worker or of the
        // signal-waiting scheduler is by default) waits 30 s in `timeout 1 sleep 30`, and its
        // own TERM never reaches its trap.
        let script = try ws.write("receive.sh", #"""
            #!/bin/sh
            cat > /dev/null
            timeout 1 sleep 30; echo "timeout=$?" >> "$1/signals"
            sh -c 'trap "exit 7" TERM; kill -TERM $$; sleep 30'; echo "trap=$?" >> "$1/signals"
            grep -E '^Sig(Blk|Ign)' /proc/self/status >> "$1/signals"
            """#)
        chmod(script, 0o755)
        // A real poll over HTTP first: its transitions are delivered by the threads a poll leaves.
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)]])
        defer { server.stop() }
        let config = try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/gits/").absoluteString)", "interval": "1h"}],
             "watches": [{"name": "suwon", "from": "start", "command": ["./receive.sh", "\#(ws.directory.path)"],
                          "timeout": "8s", "retry": {"maxRetries": 0}}]}
            """#)
        // Started as a service manager or a shell may start it: SIGPIPE and SIGQUIT ignored
        // (systemd's IgnoreSIGPIPE=yes, a background job), SIGCHLD, SIGALRM and SIGUSR1 blocked;
        // none of that may reach the command.
        let start = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD, signal.SIGALRM, signal.SIGUSR1])
            for number in (signal.SIGPIPE, signal.SIGQUIT): signal.signal(number, signal.SIG_IGN)
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let process = try RunningProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                         ["-c", start, Executables.url("incident-scheduler").path] + mode + ["--config", config],
                                         environment: ["K": "k", "PATH": "/usr/bin:/bin"], currentDirectory: ws.directory)
        defer { if process.process.isRunning { process.send(SIGKILL) } }
        let delivered = try await eventually(timeout: 60) {
            ["event=watch.delivered watch=suwon cursor=3", "event=watch.delivery_failed"].contains { process.stderrSoFar.contains($0) }
        }
        if process.process.isRunning { process.send(SIGTERM) }
        let result = await process.finished(timeout: 20)
        #expect(delivered, "\(result.stderr.suffix(2000))")
        // Four lines per delivery, three deliveries (each may be started from another thread).
        let lines = try String(contentsOfFile: ws.directory.appendingPathComponent("signals").path, encoding: .utf8)
            .split(separator: "\n").map { $0.replacingOccurrences(of: "\t", with: " ") }
        #expect(lines.count == 12, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("timeout=") } == Array(repeating: "timeout=124", count: 3), "\(lines)")
        #expect(lines.filter { $0.hasPrefix("trap=") } == Array(repeating: "trap=7", count: 3), "\(lines)")
        // /proc masks in hex, bit n-1 for signal n: none blocked; ignored at most glibc's own 32 and 33.
        func masks(_ name: String) -> [UInt64] {
            lines.filter { $0.hasPrefix(name + ":") }.map { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) ?? .max }
        }
        #expect(masks("SigBlk") == [0, 0, 0], "\(lines)")
        #expect(masks("SigIgn").map { $0 & ~UInt64(0x1_8000_0000) } == [0, 0, 0], "\(lines)")
    }

    @Test("SIGHUP: a new watch starts at the end of the log, a removed one stops, a changed one keeps its position and delivers by its new filters")
    func reload() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [.status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        func watch(_ name: String, _ extra: String = "") -> String {
            #"{"name": "\#(name)", "from": "start", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET"\#(extra)}"#
        }
        func config(_ watches: [String]) throws -> String {
            try ws.write("config.json", #"""
                {"database": "\#(ws.database)",
                 "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/down/").absoluteString)", "interval": "1h", "retry": {"maxRetries": 0}}],
                 "watches": [\#(watches.joined(separator: ", "))]}
                """#)
        }
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true), Self.incident("B", near: true)])
        let path = try config([watch("suwon"), watch("gone")])
        let process = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", path],
                                         environment: ["K": "k", "HOOK_SECRET": Self.secret])
        let first = try await eventually { try Self.cursors(ws) == ["suwon": 2, "gone": 2] }
        #expect(first, "\(process.stderrSoFar)")
        // suwon now wants clears only; gone is removed; late is new (its "from" says start, but a
        // watch without it starts at the end: late has none).
        _ = try config([watch("suwon", #", "transitions": ["cleared"]"#),
                        #"{"name": "late", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET"}"#])
        process.send(SIGHUP)
        #expect(try await Self.logged(process, "watch.registered watch=late cursor=2"), "\(process.stderrSoFar)")
        #expect(process.stderrSoFar.contains("event=watch.stopped watch=gone"))
        #expect(process.stderrSoFar.contains("event=watch.changed watch=suwon"))
        try Self.poll(ws.database, "02:00", [Self.incident("B", near: true), Self.incident("C", near: true)])
        let second = try await eventually { try Self.cursors(ws) == ["suwon": 4, "gone": 2, "late": 4] }
        process.send(SIGTERM)
        let result = await process.finished(timeout: 60)
        #expect(second && result.status == 0, "\(result.stderr)")
        #expect(try await Self.delivered(server, watch: "suwon") == ["appeared A", "appeared B", "cleared A"])
        #expect(try await Self.delivered(server, watch: "gone") == ["appeared A", "appeared B"])
        #expect(try await Self.delivered(server, watch: "late").sorted() == ["appeared C", "cleared A"])
    }

    @Test("check-config exits 78 naming the watch and field: an unknown filter, a bad filter value, a missing secret, a bad URL, an unknown transition, a bad target or start")
    func configurationErrors() async throws {
        let ws = try Workspace()
        let source = #"{"name": "gits", "provider": "gits", "keyEnv": "K"}"#
        let cases: [(watch: String, environment: [String: String], message: String)] = [
            (#""search": "사고", "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): unknown field 'search' for a watch"),
            (#""near": "somewhere", "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): near: 'somewhere' is not"),
            (#""url": "http://127.0.0.1:9/h", "secretEnv": "S""#, [:], "watches[0] (w): secretEnv: the environment variable S is not set or empty"),
            (#""url": "ftp://127.0.0.1/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): url: 'ftp://127.0.0.1/h' is not an http(s) URL"),
            (#""transitions": ["vanished"], "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): transitions: 'vanished' is not a transition; expected a list of appeared"),
            (#""url": "http://127.0.0.1:9/h""#, [:], "watches[0] (w): missing field 'secretEnv'"),
            (#""secretEnv": "S""#, ["S": "s"], "watches[0] (w): missing field 'url' (a webhook) or 'command' (a program to run for each change)"),
            (#""url": "http://127.0.0.1:9/h", "command": ["/bin/true"], "secretEnv": "S""#, ["S": "s"], "watches[0] (w): give either url (a webhook) or command (a program), not both"),
            (#""command": ["/nonexistent/notify"]"#, [:], "watches[0] (w): command: '/nonexistent/notify' is no executable file"),
            (#""command": ["no-such-notifier"]"#, [:], "watches[0] (w): command: 'no-such-notifier' is no executable file in PATH"),
            (#""command": []"#, [:], "watches[0] (w): command: is empty"),
            (#""command": ["/bin/true"], "from": "yesterday""#, [:], "watches[0] (w): from: expected "),
        ]
        for (watch, environment, message) in cases {
            let config = try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(source)], "watches": [{"name": "w", \#(watch)}]}"#)
            let result = try await run("incident-scheduler", ["check-config", "--config", config], environment: environment.merging(["K": "k"]) { $1 })
            #expect(result.status == 78, "\(watch): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        let twice = try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(source)], "watches": [{"name": "w", "command": ["/bin/true"]}, {"name": "w", "command": ["/bin/true"]}]}"#)
        let duplicate = try await run("incident-scheduler", ["check-config", "--config", twice], environment: ["K": "k"])
        #expect(duplicate.status == 78 && duplicate.stderr.contains("two watches are named 'w'; names must be unique"), "\(duplicate.stderr)")
        // As for keys: `sources` lists a configuration whose watch has no secret; `run` refuses it.
        let config = try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(source)], "watches": [{"name": "w", "url": "http://127.0.0.1:9/h", "secretEnv": "S"}]}"#)
        let listed = try await run("incident-scheduler", ["sources", "--config", config], environment: ["K": "k"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let refused = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": "k"])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("watches[0] (w): secretEnv: the environment variable S is not set or empty"), "\(refused.stderr)")
    }
}
