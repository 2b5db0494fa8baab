import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// Watches (issue 22 item 5): `incident-scheduler run` delivers the change feed to each watch's
/// webhook on loopback after its poll round, signed, from the cursor it keeps beside the database.
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
    /// members) POSTing to the server's /hook.
    static func config(_ ws: Workspace, _ server: LoopbackServer, watch: String) throws -> String {
        try ws.write("config.json", #"""
            {"database": "\#(ws.database)",
             "sources": [{"name": "down", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/down/").absoluteString)", "retry": {"maxRetries": 0}}],
             "watches": [{"name": "suwon", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET", \#(watch)}]}
            """#)
    }

    static func runOnce(_ config: String) async throws -> ProcessResult {
        try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": "k", "HOOK_SECRET": secret])
    }

    /// The deliveries the receiver answered 2xx, as `KIND EXTERNAL_ID`, each with its signature verified by Python's hmac.
    static func delivered(_ server: LoopbackServer, answered statuses: [Int]? = nil) async throws -> [String] {
        let posts = try await server.requests(path: "/hook")
        var summary: [String] = []
        for (index, post) in posts.enumerated() where statuses.map({ index < $0.count ? (200..<300).contains($0[index]) : true }) ?? true {
            #expect(post.method == "POST")
            let body = try #require(post.body)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            #expect(post.headers["x-incidents-cursor"] == "\(object["cursor"] as? Int ?? -1)")
            #expect(post.headers["x-incidents-watch"] == "suwon")
            let signature = try #require(post.headers["x-incidents-signature"])
            let check = try await shell(#"printf %s "$BODY" | python3 -c 'import hmac,hashlib,sys; print("sha256="+hmac.new(sys.argv[1].encode(), sys.stdin.buffer.read(), hashlib.sha256).hexdigest())' "$SECRET""#,
                                        environment: ["BODY": body, "SECRET": secret])
            #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == signature, "the signature does not verify: \(body)")
            summary.append("\(object["kind"] as? String ?? "?") \(object["external_id"] as? String ?? "-")")
        }
        return summary
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
        expectNoKey(Self.secret, in: [result.stderr, result.stdout, checked.stdout, checked.stderr], database: ws.databaseBytes())
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
        #expect(try String(contentsOfFile: ws.database + ".watches", encoding: .utf8) == #"{"suwon":{"cursor":2}}"# + "\n")

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
        let down = try await Self.runOnce(config)
        #expect(try await server.requests(path: "/hook").count == 2)
        #expect(down.stderr.contains("event=watch.delivery_failed watch=suwon cursor=1 kind=appeared attempt=2 error=\"HTTP 503\""), "\(down.stderr)")
        let listed = try await run("incident-scheduler", ["watches", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(listed.status == 0, "\(listed.stderr)")
        let row = try #require(listed.stdout.split(separator: "\n").last).split(separator: " ", omittingEmptySubsequences: true)
        #expect(Array(row.prefix(5)) == ["suwon", "0", "1", "HTTP", "503"], "\(listed.stdout)")
        try await server.reset()
        try await server.script("/hook", [.status(200)])
        _ = try await Self.runOnce(config)
        #expect(try await Self.delivered(server) == ["appeared A"])
        let caughtUp = try await run("incident-scheduler", ["watches", "--config", config], environment: ["K": "k", "HOOK_SECRET": Self.secret])
        #expect(Array(try #require(caughtUp.stdout.split(separator: "\n").last).split(separator: " ").prefix(4)) == ["suwon", "1", "0", "HTTP"],
                "the last error stays, with its time: \(caughtUp.stdout)")
    }

    @Test("a receiver that times out, then recovers, gets the change after the retry")
    func receiverTimesOut() async throws {
        let server = try await LoopbackServer.start(routes: ["/hook": [ResponseSpec(status: 200, delay: 3), .status(200)]])
        defer { server.stop() }
        let ws = try Workspace()
        try Self.poll(ws.database, "01:00", [Self.incident("A", near: true)])
        let config = try Self.config(ws, server, watch: #""timeout": "1s", "retry": {"baseDelay": 0.05, "maxRetries": 2}"#)
        let result = try await Self.runOnce(config)
        #expect(result.stderr.contains("event=watch.delivery_retry watch=suwon cursor=1 kind=appeared attempt=1"), "\(result.stderr)")
        #expect(result.stderr.contains("event=watch.delivered watch=suwon cursor=1 kind=appeared status=200 attempt=2"), "\(result.stderr)")
        #expect(try await server.requests(path: "/hook").count == 2)
        #expect(try String(contentsOfFile: ws.database + ".watches", encoding: .utf8) == #"{"suwon":{"cursor":1}}"# + "\n")
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

    @Test("PostgreSQL: real polls delivered from the store's change feed, the cursor in watchState; without watchState run exits 78")
    func postgres() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)], "/hook": [.status(200)],
        ])
        defer { server.stop() }
        let ws = try Workspace()
        try await PostgresDatabase.with { database in
            func config(state: String) throws -> String {
                try ws.write("config.json", #"""
                    {"database": "\#(database.uri)", \#(state)
                     "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\#(server.url("/gits/").absoluteString)"}],
                     "watches": [{"name": "suwon", "url": "\#(server.url("/hook").absoluteString)", "secretEnv": "HOOK_SECRET"}]}
                    """#)
            }
            let refused = try await Self.runOnce(try config(state: ""))
            #expect(refused.status == 78)
            #expect(refused.stderr.contains("watches on a PostgreSQL database need watchState, the file that keeps each watch's cursor"), "\(refused.stderr)")
            let state = ws.directory.appendingPathComponent("watches.json").path
            let polled = try await Self.runOnce(try config(state: #""watchState": "\#(state)","#))
            #expect(polled.status == 0, "\(polled.stderr)")
            let kinds = try await Self.delivered(server).map { $0.split(separator: " ")[0] }
            #expect(kinds == ["appeared", "appeared", "appeared"])
            #expect(try String(contentsOfFile: state, encoding: .utf8) == #"{"suwon":{"cursor":3}}"# + "\n")
            try await server.reset()
            try await server.script("/hook", [.status(200)])
            _ = try await Self.runOnce(try config(state: #""watchState": "\#(state)","#))
            #expect(try await server.requests(path: "/hook").isEmpty, "the same answer again: nothing new to deliver")
        }
    }

    @Test("check-config exits 78 naming the watch and field: an unknown filter, a bad filter value, a missing secret, a bad URL, an unknown transition")
    func configurationErrors() async throws {
        let ws = try Workspace()
        let source = #"{"name": "gits", "provider": "gits", "keyEnv": "K"}"#
        let cases: [(watch: String, environment: [String: String], message: String)] = [
            (#""search": "사고", "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): unknown field 'search' for a watch"),
            (#""near": "somewhere", "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): near: 'somewhere' is not"),
            (#""url": "http://127.0.0.1:9/h", "secretEnv": "S""#, [:], "watches[0] (w): secretEnv: the environment variable S is not set or empty"),
            (#""url": "ftp://127.0.0.1/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): url: 'ftp://127.0.0.1/h' is not an http(s) URL"),
            (#""transitions": ["vanished"], "url": "http://127.0.0.1:9/h", "secretEnv": "S""#, ["S": "s"], "watches[0] (w): transitions: expected a list of appeared"),
        ]
        for (watch, environment, message) in cases {
            let config = try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(source)], "watches": [{"name": "w", \#(watch)}]}"#)
            let result = try await run("incident-scheduler", ["check-config", "--config", config], environment: environment.merging(["K": "k"]) { $1 })
            #expect(result.status == 78, "\(watch): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        // As for keys: `sources` lists a configuration whose watch has no secret; `run` refuses it.
        let config = try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(source)], "watches": [{"name": "w", "url": "http://127.0.0.1:9/h", "secretEnv": "S"}]}"#)
        let listed = try await run("incident-scheduler", ["sources", "--config", config], environment: ["K": "k"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let refused = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": "k"])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("watches[0] (w): secretEnv: the environment variable S is not set or empty"), "\(refused.stderr)")
    }
}
