import Foundation
import TestSupport
import Testing

/// The scheduler as an operator runs it (issue 14): log lines for the journal, the User-Agent,
/// the database every command uses, the metrics file, check-config's messages and `status`.
@Suite("End to end: operating the scheduler", .serialized)
struct OperatorEndToEndTests {
    static let key = "op+key/secret="

    /// A configuration of `sources` (name, provider, path on `server`, extra JSON fields).
    static func config(_ ws: Workspace, _ server: LoopbackServer, name: String = "config.json", database: String? = nil,
                       _ sources: [(String, String, String, String)]) async throws -> String {
        let entries = sources.map { name, provider, path, extra in
            #"{"name": "\#(name)", "provider": "\#(provider)", "keyEnv": "OP_KEY", "baseURL": "\#(server.url(path).absoluteString)"\#(extra)}"#
        }
        let head = database.map { #""database": "\#($0)", "# } ?? ""
        return try ws.write(name, "{\(head)\"sources\": [\(entries.joined(separator: ", "))]}")
    }

    /// The text of the last field of a logfmt line, `error="…"` (JSON string escapes) or bare.
    static func lastField(_ name: String, in line: Substring) -> String? {
        guard let range = line.range(of: " \(name)=") else { return nil }
        let value = String(line[range.upperBound...])
        guard value.hasPrefix("\"") else { return value }
        return try? JSONDecoder().decode(String.self, from: Data(value.utf8))
    }

    static let gitsFeed = ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)

    // MARK: Logs

    @Test("under systemd (JOURNAL_STREAM names stderr) every line carries its priority; elsewhere none does")
    func journalPriorities() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [Self.gitsFeed],
                                                             "/its/eventInfo": [ResponseSpec(status: 503, body: "down")]])
        let ws = try Workspace()
        let config = try await Self.config(ws, server, [("gits", "gits", "/gits/", ""), ("its", "its", "/its/", #", "retry": {"maxRetries": 1, "baseDelay": 0}"#)])
        let command = "\"$BIN/incident-scheduler\" run --once --config \(shellQuoted(config)) --database \(shellQuoted(ws.database))"
        // systemd sets JOURNAL_STREAM to DEVICE:INODE of the stream it connected stderr to.
        let journal = try await shell("JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \(command)", environment: ["OP_KEY": Self.key])
        #expect(journal.status == 1, "\(journal.stderr)")
        let lines = journal.stderr.split(separator: "\n")
        for line in lines {
            let priority = ["error": "<3>", "warning": "<4>", "info": "<6>", "debug": "<7>"]
                .first { line.contains(" level=\($0.key) ") }?.value
            #expect(priority != nil && line.hasPrefix(priority ?? "-"), "no or wrong priority: \(line)")
        }
        #expect(lines.contains { $0.hasPrefix("<6>ts=") && $0.contains(" event=ingest.finished source=gits ") })
        #expect(lines.contains { $0.hasPrefix("<4>ts=") && $0.contains(" event=http.attempt source=its ") })
        #expect(lines.contains { $0.hasPrefix("<3>ts=") && $0.contains(" event=ingest.failed source=its ") })

        // A JOURNAL_STREAM inherited by a process whose stderr is elsewhere (another device and inode).
        let elsewhere = try await shell("JOURNAL_STREAM=1:1 exec \(command)", environment: ["OP_KEY": Self.key])
        #expect(elsewhere.status == 1)
        #expect(!elsewhere.stderr.isEmpty && elsewhere.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("ts=") }, "\(elsewhere.stderr)")
    }

    @Test("JSON log lines: counts are JSON numbers, durations fractional seconds; the User-Agent is the version's")
    func jsonLinesAndUserAgent() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [Self.gitsFeed]])
        let ws = try Workspace()
        let config = try await Self.config(ws, server, [("gits", "gits", "/gits/", "")])
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config, "--database", ws.database,
                                                          "--log-format", "json", "--verbose"], environment: ["OP_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)") }
        let finished = try #require(objects.first { $0["event"] as? String == "ingest.finished" })
        #expect((finished["fetched"] as? NSNumber)?.intValue == 3)
        #expect((finished["inserted"] as? NSNumber)?.intValue == 3)
        #expect(finished["duration_s"] is NSNumber)
        let attempt = try #require(objects.first { $0["event"] as? String == "http.attempt" })
        #expect((attempt["status"] as? NSNumber)?.intValue == 200)
        #expect(attempt["duration_s"] is NSNumber && attempt["duration_ms"] == nil)
        // Fractional seconds, as written: `"duration_s":0.004`, never a whole-second `0`.
        for line in lines where line.contains("\"event\":\"ingest.finished\"") || line.contains("\"event\":\"http.attempt\"") {
            #expect(line.range(of: #""duration_s":[0-9]+\.[0-9]+[,}]"#, options: .regularExpression) != nil, "\(line)")
        }
        let versions = try await [run("incident-scheduler", ["--version"]), run("incidents", ["--version"])].map {
            String($0.stdout.split(separator: " ").dropFirst().first ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(versions[0] == versions[1] && !versions[0].isEmpty)
        let agent = try await server.requests(path: "/gits/getIncidentInfo").first?.headers["user-agent"]
        #expect(agent == "incident-scheduler/\(versions[0]) (TrafficIncidents)")
    }

    // MARK: The database

    @Test("every command of both tools uses --config's database over $INCIDENTS_DATABASE, and --database over both")
    func databasePrecedence() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [Self.gitsFeed]])
        let ws = try Workspace()
        let config = try await Self.config(ws, server, database: ws.database, [("gits", "gits", "/gits/", "")])
        let feed = TestPaths.fixture("gits/incidents_3.xml").path
        let seeded = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", feed, "--database", ws.database])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let environmentDatabase = ws.directory.appendingPathComponent("env/incidents.sqlite").path
        let environment = ["INCIDENTS_DATABASE": environmentDatabase, "OP_KEY": Self.key]
        // Each of these would fail (66: no database) or create the environment's database if it used it.
        let commands: [(String, [String])] = [
            ("incidents", ["list"]), ("incidents", ["show", "1"]), ("incidents", ["stats"]), ("incidents", ["runs"]),
            ("incident-scheduler", ["sources"]), ("incident-scheduler", ["status"]), ("incident-scheduler", ["check-config"]),
            ("incident-scheduler", ["migrate", "--status"]), ("incident-scheduler", ["migrate"]),
            ("incident-scheduler", ["prune", "--older-than", "1d"]), ("incident-scheduler", ["ingest", "--source", "gits", "--file", feed]),
            ("incident-scheduler", ["run", "--once"]),
        ]
        for (tool, arguments) in commands {
            let result = try await run(tool, arguments + ["--config", config], environment: environment)
            #expect(result.status == 0, "\(tool) \(arguments.joined(separator: " ")): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: environmentDatabase), "\(tool) \(arguments.joined(separator: " ")) used $INCIDENTS_DATABASE")
        }
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: environment)
        #expect(checked.stdout.contains("database: \(ws.database)\n"))
        #expect(try await run("incident-scheduler", ["migrate", "--config", config], environment: environment).stdout == "up to date\n")
        // --database wins over the environment; one that is not the configuration's is refused (issue 20).
        let other = ws.directory.appendingPathComponent("other.sqlite").path
        let explicit = try await run("incidents", ["list", "--config", config, "--database", other], environment: environment)
        #expect(explicit.status == 78 && explicit.stderr.contains("--database \(other) is not the configuration's database \(ws.database)"), "\(explicit.stderr)")
        let same = try await run("incidents", ["list", "--config", config, "--database", ws.database], environment: environment)
        #expect(same.status == 0, "\(same.stderr)")
        // A configuration without a database leaves the choice to the environment.
        let bare = try await Self.config(ws, server, name: "bare.json", [("gits", "gits", "/gits/", "")])
        let fromEnvironment = try await run("incidents", ["list", "--config", bare], environment: environment)
        #expect(fromEnvironment.status == 66 && fromEnvironment.stderr.contains("no incidents database at \(environmentDatabase)"))
    }

    // MARK: Metrics

    @Test("the metrics file: promtool accepts it, mode 0644 under umask 077, only configured sources, last_success 0 for never")
    func metricsFile() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [Self.gitsFeed], "/old/getIncidentInfo": [Self.gitsFeed],
            "/its/eventInfo": [ResponseSpec(status: 503, body: "down")],
        ])
        let ws = try Workspace()
        let metrics = ws.directory.appendingPathComponent("trafficincidents.prom").path
        let its = #", "retry": {"maxRetries": 0}"#
        let before = try await Self.config(ws, server, name: "before.json", [("gits", "gits", "/gits/", ""), ("old", "gits", "/old/", ""), ("its", "its", "/its/", its)])
        let after = try await Self.config(ws, server, name: "after.json", [("gits", "gits", "/gits/", ""), ("its", "its", "/its/", its)])
        for config in [before, after] {
            let result = try await shell("umask 077 && exec \"$BIN/incident-scheduler\" run --once --config \(shellQuoted(config)) --database \(shellQuoted(ws.database)) --metrics-file \(shellQuoted(metrics))",
                                         environment: ["OP_KEY": Self.key])
            #expect(result.status == 1, "\(result.stderr)")
        }
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: metrics)[.posixPermissions] as? Int)
        #expect(mode == 0o644, "mode \(String(mode, radix: 8))")
        let lint = try await shell("promtool check metrics < \(shellQuoted(metrics))")
        #expect(lint.status == 0 && lint.stdout.isEmpty && lint.stderr.isEmpty, "promtool: \(lint.stdout) \(lint.stderr)")

        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(!text.contains("source=\"old\""), "a source removed from the configuration is still exported")
        let samples = Dictionary(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line -> (String, String) in
            let parts = line.split(separator: " ")
            return (String(parts[0]), String(parts[1]))
        }, uniquingKeysWith: { first, _ in first })
        #expect(samples[#"trafficincidents_last_success_timestamp_seconds{source="its"}"#] == "0")
        #expect(samples[#"trafficincidents_consecutive_failures{source="its"}"#] == "2")
        #expect(samples[#"trafficincidents_last_run_status{source="its",status="failed"}"#] == "1")
        // Of the 3 incidents, one has an end time: 2 active, as `incidents list --active` says.
        #expect(samples[#"trafficincidents_active_incidents{source="gits"}"#] == "2")
        #expect(try await ws.listJSON(["--active", "--source", "gits"]).count == 2)
        #expect(samples[#"trafficincidents_quota_paused_until_timestamp_seconds{source="gits"}"#] == "0")
        let version = try await run("incident-scheduler", ["--version"]).stdout.split(separator: " ").dropFirst().first?.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(samples[#"trafficincidents_build_info{version="\#(version ?? "")"}"#] == "1")
        let duration = try #require(samples[#"trafficincidents_last_run_duration_seconds{source="gits"}"#])
        #expect(duration.contains(".") && (Double(duration) ?? 0) > 0, "a fractional duration: \(duration)")
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(try await run("incidents", ["runs", "--database", ws.database, "--source", "gits",
                                                                                                        "--format", "json"]).stdout.utf8)) as? [[String: Any]])
        let finished = try #require(ISO8601DateFormatter().date(from: runs.first?["finished_at"] as? String ?? ""))
        #expect(samples[#"trafficincidents_last_success_timestamp_seconds{source="gits"}"#] == String(Int(finished.timeIntervalSince1970)))
    }

    // MARK: check-config

    /// The situations of one key, each with the message both `run` and `check-config` give.
    static let keyCases: [(String, String, String)] = [
        ("unset variable", #""keyEnv": "OP_UNSET""#, "the environment variable OP_UNSET (keyEnv) is not set; export it with the API key"),
        ("empty variable", #""keyEnv": "OP_EMPTY""#, "the environment variable OP_EMPTY (keyEnv) is empty; set it to the API key"),
        ("two words", #""keyEnv": "OP_TWO""#, "the environment variable OP_TWO holds more than one word or line; it must hold just the API key"),
        ("missing file", #""keyFile": "none.key""#, "the key file $DIR/none.key (keyFile) does not exist; create it with the API key on one line"),
        ("empty file", #""keyFile": "empty.key""#, "the key file $DIR/empty.key (keyFile) is empty; put the API key in it on one line"),
        ("unreadable file", #""keyFile": "secret.key""#, "cannot read the key file $DIR/secret.key (keyFile): Permission denied; make it a file this user may read"),
        ("a directory", #""keyFile": "keys""#, "cannot read the key file $DIR/keys (keyFile): Is a directory; make it a file this user may read"),
        ("no key field", "", "no keyEnv or keyFile: name the environment variable (keyEnv) or the file (keyFile) that holds the API key"),
        ("empty keyEnv", #""keyEnv": """#, "keyEnv is empty; give the name of the environment variable that holds the API key"),
        ("an endless key file", #""keyFile": "/dev/zero""#, "the key file /dev/zero (keyFile) is larger than 64 KB; it must hold just the API key on one line"),
    ]

    @Test("check-config names each key problem exactly as run does, and exits 78", arguments: keyCases)
    func keyProblems(situation: String, field: String, message: String) async throws {
        let ws = try Workspace()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ws.directory.path)
        _ = try ws.write("empty.key", "\n")
        let secret = try ws.write("secret.key", "op-key\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: secret)
        try FileManager.default.createDirectory(at: ws.directory.appendingPathComponent("keys"), withIntermediateDirectories: true)
        let config = try ws.write("config.json", #"{"sources": [{"name": "gits", "provider": "gits"\#(field.isEmpty ? "" : ", " + field)}]}"#)
        let expected = "\(config): sources[0] (gits): " + message.replacingOccurrences(of: "$DIR", with: ws.directory.path)
        // As an unprivileged user, for whom permissions count (root reads a mode-000 file).
        let user = runningAsRoot ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
        var errors: [String] = []
        for command in ["check-config", "run --once"] {
            let result = try await shell("OP_EMPTY='' OP_TWO='a b' exec \(user)\(shellQuoted(executablesForAnyUser + "/incident-scheduler")) \(command) --config \(shellQuoted(config)) --database /nonexistent/db.sqlite")
            #expect(result.status == 78, "\(command): \(result.stderr)")
            let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("level=error event=config.invalid ") }, "\(result.stderr)")
            errors.append(Self.lastField("error", in: line) ?? "")
        }
        #expect(errors == [expected, expected])
    }

    // MARK: status

    @Test("status: per source the last success, failing since, last error, quota pause and active incidents; exit 3 when stale")
    func status() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [Self.gitsFeed],
            "/its/eventInfo": [ResponseSpec(status: 429, headers: ["Retry-After": "3600"], body: "slow down")],
            "/broken/getIncidentInfo": [ResponseSpec(status: 503, body: "down")],
        ])
        let ws = try Workspace()
        let noRetry = #", "retry": {"maxRetries": 0}"#
        let config = try await Self.config(ws, server, database: ws.database, [
            ("gits", "gits", "/gits/", #", "interval": "1m""#), ("its", "its", "/its/", noRetry), ("broken", "gits", "/broken/", noRetry),
        ])
        var firstRun = ""
        for _ in 0..<2 {
            let result = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["OP_KEY": Self.key])
            #expect(result.status == 1, "\(result.stderr)")
            if firstRun.isEmpty { firstRun = result.stderr }
        }
        // One attempt is "1 attempt".
        let quotaLine = try #require(firstRun.split(separator: "\n").first { $0.contains("event=ingest.failed source=its ") })
        #expect(quotaLine.contains("after 1 attempt: the request quota is used up"), "\(quotaLine)")
        let resumesAt = try #require(quotaLine.split(separator: " ").first { $0.hasPrefix("resumes_at=") }?.dropFirst("resumes_at=".count))

        func runs(_ source: String) async throws -> [[String: Any]] {
            try #require(try JSONSerialization.jsonObject(with: Data(try await run("incidents", ["runs", "--database", ws.database, "--source", source,
                                                                                              "--format", "json"]).stdout.utf8)) as? [[String: Any]])
        }
        let json = try await run("incident-scheduler", ["status", "--config", config, "--format", "json"], environment: ["OP_KEY": Self.key])
        #expect(json.status == 3, "\(json.stderr)")
        #expect(json.stderr.contains("level=warning event=status.stale error=\"stale: its, broken (no poll stored records for more than 3 intervals); see the notes above\""), "\(json.stderr)")
        let health = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(health.map { $0["source"] as? String } == ["gits", "its", "broken"])
        let (gits, its, broken) = (health[0], health[1], health[2])
        let gitsRuns = try await runs("gits")
        #expect(gits["health"] as? String == "ok")
        #expect(gits["last_success_at"] as? String == gitsRuns.first?["finished_at"] as? String)
        #expect(gits["failing_since"] is NSNull && gits["last_error"] is NSNull && gits["quota_paused_until"] is NSNull)
        #expect((gits["active_incidents"] as? NSNumber)?.intValue == 2)  // of 3, one has ended
        #expect((gits["stale_after_seconds"] as? NSNumber)?.intValue == 180)

        let itsRuns = try await runs("its")
        #expect(itsRuns.map { $0["status"] as? String } == ["skipped", "failed"])
        #expect(its["health"] as? String == "stale" && its["last_success_at"] is NSNull)
        #expect(its["quota_paused_until"] as? String == String(resumesAt))
        #expect(its["failing_since"] as? String == itsRuns.last?["started_at"] as? String)
        #expect((its["consecutive_failures"] as? NSNumber)?.intValue == 1)
        #expect(its["last_error"] as? String == "the source's request quota is exhausted until \(resumesAt); no request was sent")
        #expect((its["active_incidents"] as? NSNumber)?.intValue == 0)

        let brokenRuns = try await runs("broken")
        #expect(broken["health"] as? String == "stale")
        #expect((broken["consecutive_failures"] as? NSNumber)?.intValue == 2)
        #expect(broken["failing_since"] as? String == brokenRuns.last?["started_at"] as? String)
        #expect(broken["last_error"] as? String == brokenRuns.first?["error"] as? String)
        #expect((broken["last_error"] as? String)?.contains("503") == true)

        let table = try await run("incident-scheduler", ["status", "--config", config], environment: ["OP_KEY": Self.key])
        #expect(table.status == 3)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["SOURCE", "HEALTH", "LAST", "SUCCESS", "FAILING", "SINCE", "ACTIVE", "INTERVAL"])
        #expect(lines.contains("its: its request quota is exhausted; polls resume at \(resumesAt)"))
        #expect(lines.contains("its: no poll has stored records yet"))
        #expect(lines.contains("broken: failing since \(brokenRuns.last?["started_at"] as? String ?? "") (2 failed runs): \(brokenRuns.first?["error"] as? String ?? "")"))

        // Only the healthy source: exit 0.
        let healthy = try await Self.config(ws, server, name: "healthy.json", database: ws.database, [("gits", "gits", "/gits/", #", "interval": "1m""#)])
        let fresh = try await run("incident-scheduler", ["status", "--config", healthy], environment: ["OP_KEY": Self.key])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stderr.isEmpty)
        // The same source polled every second is stale once two seconds pass without a poll.
        let hasty = try await Self.config(ws, server, name: "hasty.json", database: ws.database, [("gits", "gits", "/gits/", #", "interval": "1s""#)])
        try await Task.sleep(for: .milliseconds(2200))
        let stale = try await run("incident-scheduler", ["status", "--config", hasty, "--stale-after", "1"], environment: ["OP_KEY": Self.key])
        #expect(stale.status == 3)
        #expect(stale.stdout.contains("\ngits: stale: no poll has stored records for more than 1 interval (1s)\n"), "\(stale.stdout)")
    }
}
