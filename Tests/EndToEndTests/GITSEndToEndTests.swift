import Foundation
import TestSupport
import Testing

/// The built executables, through a real HTTP server on loopback, into a temporary SQLite file.
@Suite("End to end: GITS", .serialized)
struct GITSEndToEndTests {
    static let realFeed = TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml").path
    static let key = "SECRET+gits/Key=="

    @Test("ingest --file of the recorded response, then incidents list --format json: the 4 real incidents")
    func ingestFile() async throws {
        let ws = try Workspace()
        let result = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.realFeed, "--database", ws.database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("event=ingest.finished source=gits provider=gits status=succeeded fetched=4 inserted=4"))
        let rows = try await ws.listJSON()
        #expect(rows.count == 4)
        let row = try #require(rows.first { $0.text("external_id") == "202303216347" })
        #expect(row.text("source") == "gits")
        #expect(row.text("category") == "breakdown")
        #expect(row.text("road") == "강변북로")
        #expect(row.text("location") == "(구리방향) 잠실대교 → 잠실철교")
        #expect(row.text("restriction") == "4차로")
        #expect(row.text("description") == "[차량고장] 강변북로 (구리방향) 잠실대교 → 잠실철교  4차로 통제,  차량고장")
        #expect(row.number("longitude") == 127.08203126)
        #expect(row.number("latitude") == 37.52739696162846)
        #expect(row.text("started_at") == "2023-03-21T05:13:00Z")
        #expect(row.text("expected_end_at") == "2023-03-21T06:25:00Z")
        #expect(row["ended_at"] is NSNull)
        #expect(row.text("first_seen_at") == row.text("last_seen_at"))
        #expect(row.text("first_seen_at")?.hasSuffix("Z") == true)
    }

    @Test("INCIDENTS_SQL_TRACE: each statement of a clearing poll with its time, the listed intervals' R*Tree insert among them, never the statements the R*Tree runs on its shadow tables")
    func sqlTrace() async throws {
        let ws = try Workspace()
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                "--as-of", "3d", "--database", ws.database]).status == 0)
        let trace = ws.directory.appendingPathComponent("trace.sql").path
        let cleared = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_2_later.xml").path,
                                                           "--complete", "--as-of", "36h", "--database", ws.database],
                                    environment: ["INCIDENTS_SQL_TRACE": trace])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        let statements = text.components(separatedBy: "\n-- ").count
        #expect(statements > 20 && text.hasPrefix("-- "), "\(statements) statements")
        #expect(text.contains("INSERT INTO incident_listed_intervals"), "the clear ends an interval: it moves to the R*Tree")
        #expect(!text.contains("'main'.") && !text.contains("\"main\"."), "a shadow table's statement")
    }

    @Test("run --once over loopback HTTP: the key is sent encoded once, the incidents stored, a re-run keeps first_seen_at")
    func runOnce() async throws {
        let server = try LoopbackServer(routes: ["/api/rest/getIncidentInfo": [
            ResponseSpec(status: 200, headers: ["Content-Type": "text/xml;charset=UTF-8"], bodyFile: Self.realFeed),
        ]])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY",
              "baseURL": "\(server.url("/api/rest/").absoluteString)", "interval": "5m"}]}
            """)
        let first = try await run("incident-scheduler", ["run", "--once", "--config", config, "--verbose"],
                            environment: ["GITS_SERVICE_KEY": Self.key])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("source=gits provider=gits status=succeeded fetched=4 inserted=4 updated=0 unchanged=0"))
        let requests = try await server.requests(path: "/api/rest/getIncidentInfo")
        #expect(requests.count == 1)
        #expect(requests.first?.query == "serviceKey=SECRET%2Bgits%2FKey%3D%3D")
        let before = try await ws.listJSON()
        #expect(before.count == 4)

        try await Task.sleep(for: .seconds(1))  // the next poll is a later second
        let second = try await run("incident-scheduler", ["run", "--once", "--config", config],
                             environment: ["GITS_SERVICE_KEY": Self.key])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("fetched=4 inserted=0 updated=0 unchanged=4 reopened=0 cleared=0"))
        let after = try await ws.listJSON()
        #expect(after.count == 4)
        for row in after {
            let earlier = try #require(before.first { $0.text("external_id") == row.text("external_id") })
            #expect(row.text("first_seen_at") == earlier.text("first_seen_at"))
            #expect(row.text("last_seen_at")! > earlier.text("last_seen_at")!)
        }
        expectNoKey(Self.key, in: [first.stdout, first.stderr, second.stdout, second.stderr], database: ws.databaseBytes())
    }

    @Test("ingest --file without a configuration: $GITS_SERVICE_KEY (or --env-file's) echoed by an error envelope or in a record is hidden from the log, the run record and the stored text", arguments: [false, true])
    func ingestFileHidesImpliedKey(envFile: Bool) async throws {
        let ws = try Workspace()
        let echoed = try ws.write("echo.xml", """
            <?xml version="1.0" encoding="UTF-8"?><ServiceResult><comMsgHeader/><msgHeader><headerCd>3</headerCd>\
            <headerMsg>SERVICE KEY ERROR \(Self.key)</headerMsg><itemCount>0</itemCount></msgHeader><msgBody/></ServiceResult>
            """)
        var feed = try String(contentsOfFile: Self.realFeed, encoding: .utf8)
        let description = try #require(feed.range(of: "<inciDesc>"))
        feed.insert(contentsOf: "key " + Self.key.replacingOccurrences(of: "+", with: "%2B") + " ", at: description.upperBound)
        let record = try ws.write("record.xml", feed)
        let keys = try ws.write("keys.env", "GITS_SERVICE_KEY='\(Self.key)'\n")
        let (options, environment) = envFile ? (["--env-file", keys], [String: String]()) : ([], ["GITS_SERVICE_KEY": Self.key])
        let failed = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", echoed, "--database", ws.database] + options,
                                   environment: environment)
        #expect(failed.status == 65 && failed.stderr.contains("headerCd 3"), "\(failed.stderr)")
        let stored = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", record, "--database", ws.database] + options,
                                   environment: environment)
        #expect(stored.status == 0, "\(stored.stderr)")
        let runs = try await run("incidents", ["runs", "--database", ws.database])
        #expect(runs.stdout.contains("REDACTED"), "\(runs.stdout)")
        let listed = try await run("incidents", ["list", "--database", ws.database, "--format", "json"])
        #expect(listed.stdout.contains("key REDACTED "), "\(listed.stdout)")
        expectNoKey(Self.key, in: [failed.stderr, stored.stderr, runs.stdout, listed.stdout], database: ws.databaseBytes())
    }

    @Test("--output to a named pipe writes into it and keeps it; to a symbolic link replaces the file it names and keeps the link", arguments: ["list", "map"])
    func outputToSpecialFiles(command: String) async throws {
        let ws = try Workspace()
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.realFeed, "--database", ws.database]).status == 0)
        let format = command == "list" ? ["--format", "csv"] : []
        // A named pipe (as /dev/null, /dev/stdout or any device: not a regular file) is written
        // through; before, it was replaced by a regular file (as root, /dev/null too), and the
        // reader here waited until the shell's timeout.
        let pipe = ws.directory.appendingPathComponent("pipe").path
        #expect(mkfifo(pipe, 0o600) == 0)
        let result = try await shell("cat \(shellQuoted(pipe)) > \(shellQuoted(pipe + ".read")) & "
                                     + "\"$BIN/incidents\" \(command) --database \(shellQuoted(ws.database)) \(format.joined(separator: " ")) --output \(shellQuoted(pipe)); "
                                     + "status=$?; wait; exit $status", timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(lstat(pipe, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the pipe was replaced")
        let read = (try? String(contentsOfFile: pipe + ".read", encoding: .utf8)) ?? ""
        #expect(command == "list" ? read.hasPrefix("id,source,external_id") && read.contains("202303216347") : read.contains("<html"), "\(read.prefix(200))")
        // A link: its target is replaced, the link stays.
        let target = try ws.write("target.out", "old\n"), link = ws.directory.appendingPathComponent("link.out").path
        #expect(symlink("target.out", link) == 0)
        #expect(try await run("incidents", [command, "--database", ws.database] + format + ["--output", link]).status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == "target.out")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == read)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.directory.path).filter { $0.contains(".partial-") }.isEmpty)
    }

    @Test("a full standard output (/dev/full) ends a listing with one error line and exit 1, not a crash")
    func fullStandardOutput() async throws {
        let ws = try Workspace()
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", Self.realFeed, "--database", ws.database]).status == 0)
        for command in ["list --format json", "stats", "list --format csv", "list --help", "--version"] {
            let result = try await shell("\"$BIN/incidents\" \(command) --database \(shellQuoted(ws.database)) > /dev/full")
            #expect(result.status == 1 && !result.signaled, "\(command): \(result.status) \(result.stderr.suffix(1500))")
            #expect(result.stderr == "error: cannot write to standard output: No space left on device\n", "\(command): \(result.stderr.suffix(1500))")
        }
    }

    @Test("an API error envelope with HTTP 200 stores nothing, is recorded as failed, and exits 1")
    func apiErrorEnvelope() async throws {
        let server = try LoopbackServer(routes: ["/api/rest/getIncidentInfo": [
            ResponseSpec(status: 200, bodyFile: TestPaths.fixture("gits/error_headerCd_99.xml").path),
        ]])
        let ws = try Workspace()
        let result = try await run("incident-scheduler", ["run", "--once", "--database", ws.database],
                             environment: ["GITS_SERVICE_KEY": Self.key, "GITS_BASE_URL": server.url("/api/rest/").absoluteString])
        #expect(result.status == 1)
        #expect(result.stderr.contains("level=error event=ingest.failed source=gits"))
        #expect(result.stderr.contains("answered headerCd 99 ("))
        #expect(try await ws.listJSON().isEmpty)
        expectNoKey(Self.key, in: [result.stdout, result.stderr], database: ws.databaseBytes())
    }

    @Test("usage errors: one line, a hint, exit 64", arguments: [
        ["incidents", "list", "--bogus"], ["incidents", "list", "--format", "xml"], ["incident-scheduler", "run"],
        ["incident-scheduler", "ingest", "--file", "x.xml"], ["incident-scheduler", "frobnicate"],
    ])
    func usageErrors(arguments: [String]) async throws {
        let result = try await run(arguments[0], Array(arguments.dropFirst()))
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("error: ") == true)
        #expect(lines.last?.hasPrefix("hint: see '") == true)
        #expect(result.stdout.isEmpty)
    }

    /// The commands are those each `--help` lists under COMMANDS, walked from the roots, so a
    /// command added to the tree is covered (a list kept here had missed map, status and copy).
    @Test("--help on every command prints usage to stdout and exits 0", arguments: ["incidents", "incident-scheduler"])
    func help(tool: String) async throws {
        var pending = [[tool]], visited: [String] = []
        while let path = pending.popLast() {
            let result = try await run(tool, Array(path.dropFirst()) + ["--help"])
            visited.append(path.joined(separator: " "))
            #expect(result.status == 0, "\(path)")
            #expect(result.stdout.contains("USAGE: \(path.joined(separator: " "))"), "\(path)")
            #expect(result.stderr.isEmpty, "\(path): \(result.stderr)")
            let commands = result.stdout.components(separatedBy: "COMMANDS:\n").dropFirst().first?.split(separator: "\n").compactMap {
                $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil
            }.filter { $0 != "See" } ?? []
            pending += commands.map { path + [$0] }
        }
        // Not vacuous: the walk reached the subcommands, among them those the hand-kept list missed.
        let missed = tool == "incidents" ? ["map", "list"] : ["status", "copy"]
        #expect(visited.count > 4 && missed.allSatisfy { visited.contains("\(tool) \($0)") }, "\(visited)")
    }

    @Test("--version prints the version", arguments: ["incidents", "incident-scheduler"])
    func version(tool: String) async throws {
        let result = try await run(tool, ["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("\(tool) "))
    }

    @Test("run --once --dry-run fetches and parses, says what it would write, and writes nothing")
    func dryRun() async throws {
        let server = try LoopbackServer(routes: ["/api/rest/getIncidentInfo": [ResponseSpec(bodyFile: Self.realFeed)]])
        let ws = try Workspace()
        let seed = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                   "--database", ws.database])
        #expect(seed.status == 0)
        let before = try await ws.listJSON()
        let result = try await run("incident-scheduler", ["run", "--once", "--dry-run", "--database", ws.database],
                             environment: ["GITS_SERVICE_KEY": Self.key, "GITS_BASE_URL": server.url("/api/rest/").absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("event=ingest.dry_run source=gits provider=gits status=succeeded fetched=4 inserted=4 updated=0 unchanged=0 reopened=0 cleared=3"))
        #expect(result.stderr.contains("dry run: nothing was written"))
        let after = try await ws.listJSON()
        #expect(after.map { $0.text("external_id") } == before.map { $0.text("external_id") })
        #expect(after.map { $0.text("last_seen_at") } == before.map { $0.text("last_seen_at") })
        let runs = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"]).stdout
        #expect((try JSONSerialization.jsonObject(with: Data(runs.utf8)) as? [Any])?.count == 1, "the dry run is not recorded")
    }

    /// Old history comes from replays stamped --as-of, so no test waits for time to pass; the
    /// pruning of runs by their finish time is tested on the store (MigrationTests.prune).
    @Test("prune deletes what was cleared before the horizon and reports the counts")
    func prune() async throws {
        let ws = try Workspace()
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                "--as-of", "3d", "--database", ws.database]).status == 0)
        // The later response, a complete answer (--complete) of 36 hours ago, no longer lists
        // 202312310777: it was cleared then.
        #expect(try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_2_later.xml").path,
                                                "--complete", "--as-of", "36h", "--database", ws.database]).status == 0)
        let keep = try await run("incident-scheduler", ["prune", "--older-than", "2d", "--database", ws.database])
        #expect(keep.status == 0, "\(keep.stderr)")
        #expect(keep.stdout.hasPrefix("deleted 0 incidents, 0 revisions, 0 transitions, 0 runs and 0 quarantined records older than "), "\(keep.stdout)")
        let cleared = try await run("incident-scheduler", ["prune", "--older-than", "1d", "--database", ws.database])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(cleared.stdout.hasPrefix("deleted 1 incident, 0 revisions, 2 transitions, 0 runs and 0 quarantined records"), "\(cleared.stdout)")
        #expect(try await ws.listJSON().map { $0.text("external_id") } == ["202401010002", "202401010001"])
        #expect(try await run("incident-scheduler", ["prune", "--database", ws.database]).status == 64)
    }

    @Test("querying a database that does not exist says so and exits 66")
    func missingDatabase() async throws {
        let ws = try Workspace()
        let result = try await run("incidents", ["list", "--database", ws.database])
        #expect(result.status == 66)
        #expect(result.stderr.contains("no incidents database at \(ws.database)"))
        #expect(!FileManager.default.fileExists(atPath: ws.database))
    }
}
