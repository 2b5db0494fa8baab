import Foundation
import TestSupport
import Testing

/// The service as issue 20's operator set it up: the units' and the crontab's own command lines,
/// a configuration moved to PostgreSQL, keys in an environment file the binary reads itself.
@Suite("End to end: service settings", .serialized)
struct ServiceSettingsEndToEndTests {
    static let key = "op+key/secret="

    /// A workspace laid out as /etc/trafficincidents: config.json (its database in the
    /// workspace) with one GITS source on `server`, keys.env holding its key.
    static func etc(_ server: LoopbackServer, database: String? = nil) throws -> (Workspace, config: String, keys: String) {
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(database ?? ws.database)", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY", "baseURL": "\(server.url("/gits/").absoluteString)"}]}
            """)
        let keys = try ws.write("keys.env", "# the scheduler's keys\nGITS_SERVICE_KEY='\(key)'\n")
        return (ws, config, keys)
    }

    /// A unit's or the crontab's command with the installed paths pointed at `ws`.
    static func localized(_ command: String, _ ws: Workspace) -> String {
        command.replacingOccurrences(of: "/usr/local/bin/incident-scheduler", with: shellQuoted(Executables.url("incident-scheduler").path))
            .replacingOccurrences(of: "/etc/trafficincidents/", with: ws.directory.path + "/")
            .replacingOccurrences(of: "/var/lib/prometheus/node-exporter/", with: ws.directory.path + "/")
            .replacingOccurrences(of: "/var/log/trafficincidents/", with: ws.directory.path + "/")
    }

    static func count(_ database: String) async throws -> String {
        try await shell("sqlite3 \(shellQuoted(database)) 'SELECT count(*) FROM incidents'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the units' and the crontab's command lines store into the configuration's database, keys from keys.env, one start line")
    func installedCommandLines() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)]])
        let unit = try DeliverablesTests.unitText("incident-scheduler.service")
        let exec = try #require(DeliverablesTests.values("ExecStart", in: unit).first)
        let crontab = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Scripts/cron/incident-scheduler.crontab"), encoding: .utf8)
        let cronLine = try #require(crontab.split(separator: "\n").first { $0.hasPrefix("*/5 ") })
        // The command after the five time fields and the user column.
        let cronCommand = cronLine.split(separator: " ", maxSplits: 6).last.map(String.init) ?? ""
        // `incident-scheduler 0.1.0 (commit 5d71f0d)`: the build the start line names.
        let version = try await run("incident-scheduler", ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            .dropFirst("incident-scheduler ".count)
        #expect(version.contains(" (commit "))
        for (name, command) in [("unit", exec), ("crontab", cronCommand)] {
            let (ws, config, _) = try Self.etc(server)
            // No key in the process environment: only keys.env has it.
            let result = try await shell(Self.localized(command, ws), environment: ["GITS_SERVICE_KEY": ""])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(try await Self.count(ws.database) == "3", "\(name)")
            let log = name == "crontab" ? try String(contentsOfFile: ws.directory.appendingPathComponent("scheduler.log").path, encoding: .utf8) : result.stderr
            let start = try #require(log.split(separator: "\n").first { $0.contains("event=scheduler.start ") }, "\(name): \(log)")
            #expect(start.contains("version=\"\(version)\"") && start.contains(" mode=once config=\(config) database=\(ws.database) sources=gits"),
                    "\(start)")
            // The first run makes the database: each migration it applies is logged, in order.
            let applied = log.split(separator: "\n").filter { $0.contains("event=migration.applied ") }
            #expect(applied.first?.contains("database=\(ws.database) migration=0001_incidents") == true, "\(log)")
            #expect(applied.count >= 10, "\(applied.count)")
            if name == "crontab" {
                // umask 027, as the units' UMask=0027: the database is not world-readable.
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: ws.database)[.posixPermissions] as? Int)
                #expect(mode & 0o007 == 0, "mode \(String(mode, radix: 8))")
                #expect(FileManager.default.fileExists(atPath: ws.directory.appendingPathComponent("trafficincidents.prom").path))
            }
            expectNoKey(Self.key, in: [log])
        }
    }

    @Test("a --database that is not the configuration's (the old units after the move to PostgreSQL) is refused by every command, 78, creating nothing",
          arguments: [("incident-scheduler", ["run", "--once"]), ("incident-scheduler", ["status"]), ("incident-scheduler", ["sources"]),
                      ("incident-scheduler", ["prune", "--older-than", "90d"]), ("incident-scheduler", ["migrate"]), ("incidents", ["list"])])
    func disagreement(tool: String, arguments: [String]) async throws {
        let server = try await LoopbackServer.start(routes: [:])
        // Port 1: nothing listens there; the refusal must come before any connection.
        let (ws, config, keys) = try Self.etc(server, database: "postgresql://ingest@127.0.0.1:1/incidents")
        let oldFile = ws.directory.appendingPathComponent("incidents.sqlite").path
        let result = try await run(tool, arguments + ["--config", config, "--database", oldFile] + (tool == "incidents" ? [] : ["--env-file", keys]))
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("--database \(oldFile) is not the configuration's database postgresql://ingest@127.0.0.1:1/incidents (\(config))"),
                "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: oldFile))
        #expect(try await server.requests().isEmpty)
    }

    @Test("--env-file: missing, a bad line, unreadable by the user that runs it: exit 78 naming the file, before anything runs",
          arguments: ["missing", "bad line", "root only"])
    func environmentFileProblems(situation: String) async throws {
        let server = try await LoopbackServer.start(routes: [:])
        let (ws, config, keys) = try Self.etc(server)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ws.directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
        var user = ""
        let expected: String
        switch situation {
        case "missing":
            try FileManager.default.removeItem(atPath: keys)
            expected = "the environment file \(keys) (--env-file) does not exist"
        case "bad line":
            _ = try ws.write("keys.env", "GITS_SERVICE_KEY=\(Self.key) extra\n")
            expected = "the environment file \(keys) (--env-file), line 1: the value of GITS_SERVICE_KEY has a space"
        default:
            // The trial's root-only keys.env, read by the service user (here nobody).
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keys)
            user = runningAsRoot ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
            expected = "cannot read the environment file \(keys) (--env-file): Permission denied"
        }
        for command in ["run --once", "check-config", "status", "sources"] {
            let result = try await shell("exec \(user)\(shellQuoted(executablesForAnyUser + "/incident-scheduler")) \(command) --config \(shellQuoted(config)) --env-file \(shellQuoted(keys))")
            #expect(result.status == 78, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("level=error event=config.invalid error=\"\(expected)"), "\(command): \(result.stderr)")
            expectNoKey(Self.key, in: [result.stderr, result.stdout])
        }
        #expect(try await server.requests().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: ws.database))
    }

    // MARK: baseURL, keys, no configuration

    @Test("baseURL: the full endpoint and the base both work for GITS and ITS; check-config warns about a doubled path, exit 0",
          arguments: [("gits", "/api/rest/getIncidentInfo", "gits/incidents_3.xml"), ("gits", "/api/rest/", "gits/incidents_3.xml"),
                      ("gits", "/api/rest", "gits/incidents_3.xml"),
                      ("its", "/eventInfo", "its/eventInfo_envelope_2items.json"), ("its", "/", "its/eventInfo_envelope_2items.json")])
    func baseURLForms(provider: String, base: String, fixture: String) async throws {
        let endpoint = provider == "gits" ? "/api/rest/getIncidentInfo" : "/eventInfo"
        let server = try await LoopbackServer.start(routes: [endpoint: [ResponseSpec(bodyFile: TestPaths.fixture(fixture).path)]])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "s", "provider": "\(provider)", "keyEnv": "K", "baseURL": "\(server.url(base).absoluteString)"}]}
            """)
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["K": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await server.requests(path: endpoint).count == 1)
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": Self.key])
        #expect(checked.status == 0 && !checked.stdout.contains("warning:"), "\(checked.stdout)")
    }

    @Test("the trial's doubled path: check-config names it in a warning line (exit 0), for any provider")
    func doubledPath() async throws {
        let server = try await LoopbackServer.start(routes: [:])
        let ws = try Workspace()
        let doubled = server.url("/api/rest/getIncidentInfo/getIncidentInfo").absoluteString
        let config = try ws.write("config.json", """
            {"sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\(doubled)"},
                         {"name": "wz", "provider": "wzdx", "baseURL": "\(server.url("/feed/feed").absoluteString)"}]}
            """)
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": Self.key])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains("warning: gits: the request path repeats 'getIncidentInfo' (\(doubled)?serviceKey=REDACTED); give `baseURL` as the provider's endpoint or its base, once\n"), "\(checked.stdout)")
        #expect(checked.stdout.contains("warning: wz: the request path repeats 'feed'"), "\(checked.stdout)")
    }

    @Test("a recorded file's URL as a GITS or ITS baseURL: check-config names the file the operation was put below (exit 0)")
    func fileAsBaseURL() async throws {
        let server = try await LoopbackServer.start(routes: [:])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"sources": [{"name": "gits", "provider": "gits", "keyEnv": "K", "baseURL": "\(server.url("/feeds/incidents.xml").absoluteString)"},
                         {"name": "its", "provider": "its", "keyEnv": "K", "baseURL": "\(server.url("/rec/eventInfo.json").absoluteString)"},
                         {"name": "wz", "provider": "wzdx", "baseURL": "\(server.url("/wzdx/feed.geojson").absoluteString)"}]}
            """)
        let checked = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": Self.key])
        #expect(checked.status == 0, "\(checked.stderr)")
        let warnings = checked.stdout.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 2, "\(checked.stdout)")
        #expect(checked.stdout.contains("warning: gits: the request path continues below 'incidents.xml' (\(server.url("/feeds/incidents.xml/getIncidentInfo").absoluteString)?serviceKey=REDACTED), which names a file;"), "\(checked.stdout)")
        #expect(checked.stdout.contains("warning: its: the request path continues below 'eventInfo.json'"), "\(checked.stdout)")
        #expect(!checked.stdout.contains(Self.key))
    }

    @Test("sources and check-config say the same about each key: set, none, MISSING, UNREADABLE, INVALID")
    func keyColumns() async throws {
        let server = try await LoopbackServer.start(routes: [:])
        let ws = try Workspace()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ws.directory.path)
        let secret = try ws.write("secret.key", "k\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret)
        _ = try ws.write("two.key", "a b\n")
        let base = server.url("/x/").absoluteString
        let config = try ws.write("config.json", """
            {"database": "\(ws.directory.path)/none.sqlite", "sources": [
              {"name": "a", "provider": "gits", "keyEnv": "K", "baseURL": "\(base)"},
              {"name": "b", "provider": "wzdx", "baseURL": "\(base)"},
              {"name": "c", "provider": "gits", "keyEnv": "UNSET", "baseURL": "\(base)"},
              {"name": "d", "provider": "gits", "keyFile": "secret.key", "baseURL": "\(base)"},
              {"name": "e", "provider": "gits", "keyFile": "two.key", "baseURL": "\(base)"}]}
            """)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
        let user = runningAsRoot ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
        var columns: [[String]] = []
        for (command, column) in [("check-config", 1), ("sources", 6)] {
            let result = try await shell("K=k exec \(user)\(shellQuoted(executablesForAnyUser + "/incident-scheduler")) \(command) --wide --config \(shellQuoted(config))")
            let rows = result.stdout.split(separator: "\n").dropFirst().prefix(5).map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            columns.append(rows.map { $0.count > column ? $0[column] : "" })
        }
        #expect(columns[0] == ["set", "none", "MISSING", "UNREADABLE", "INVALID"], "\(columns)")
        #expect(columns[1] == columns[0], "\(columns)")
    }

    @Test("without any configuration, sources, status and check-config name no imaginary source: 78, saying what to give")
    func noConfiguration() async throws {
        for command in [["sources"], ["status"], ["check-config"]] {
            let result = try await run("incident-scheduler", command, environment: ["GITS_SERVICE_KEY": ""])
            #expect(result.status == 78, "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.contains("no sources configured: no --config, no /etc/trafficincidents/config.json"), "\(result.stderr)")
        }
    }

    // MARK: status, migrate --check, metrics

    @Test("status exits 0 when every source is ok or paused, 1 when one is failing now (none stale), 3 when one is stale")
    func statusExitCodes() async throws {
        let feed = ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)
        let server = try await LoopbackServer.start(routes: [
            "/a/getIncidentInfo": [feed], "/b/getIncidentInfo": [feed, .status(503, body: "down")],
            "/c/getIncidentInfo": [feed, ResponseSpec(status: 429, headers: ["Retry-After": "3600"], body: "quota")],
            "/d/getIncidentInfo": [.status(503, body: "down")],
        ])
        let ws = try Workspace()
        func config(_ names: [String]) throws -> String {
            let sources = names.map { name in
                let base = server.url("/\(name)/").absoluteString
                return #"{"name": "\#(name)", "provider": "gits", "keyEnv": "K", "interval": "1h", "retry": {"maxRetries": 0}, "baseURL": "\#(base)"}"#
            }
            return try ws.write("\(names.joined()).json", #"{"database": "\#(ws.database)", "sources": [\#(sources.joined(separator: ", "))]}"#)
        }
        let all = try config(["a", "b", "c", "d"])
        for _ in 0..<2 { _ = try await run("incident-scheduler", ["run", "--once", "--config", all], environment: ["K": Self.key]) }
        for (names, status, event) in [(["a"], 0, nil), (["a", "c"], 0, nil), (["a", "b"], 1, "status.failing"), (["a", "b", "d"], 3, "status.stale"),
                                       (["b", "d"], 3, "status.stale")] as [([String], Int32, String?)] {
            let result = try await run("incident-scheduler", ["status", "--config", try config(names)], environment: ["K": Self.key])
            #expect(result.status == status, "\(names): \(result.stdout)\(result.stderr)")
            if let event { #expect(result.stderr.contains("level=warning event=\(event) "), "\(names): \(result.stderr)") }
        }
        let failing = try await run("incident-scheduler", ["status", "--config", try config(["a", "b"])], environment: ["K": Self.key])
        #expect(failing.stderr.contains(#"error="failing: b (the last runs failed; not stale yet); see the notes above""#), "\(failing.stderr)")
    }

    @Test("migrate --check: 3 with the pending migrations named when the database is older, 0 when up to date; nothing changed")
    func migrateCheck() async throws {
        let ws = try Workspace()
        let migrated = try await run("incident-scheduler", ["migrate", "--database", ws.database])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let current = try await run("incident-scheduler", ["migrate", "--check", "--database", ws.database])
        #expect(current.status == 0 && current.stdout == "up to date\n", "\(current.stderr)")
        // As the previous release left it: the newest migration not applied yet.
        let newest = try await shell("sqlite3 \(shellQuoted(ws.database)) 'SELECT name FROM schema_migrations ORDER BY version DESC LIMIT 1; "
                                     + "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)'")
        let name = newest.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newest.status == 0 && !name.isEmpty, "\(newest.stderr)")
        func applied() async throws -> String {
            try await shell("sqlite3 \(shellQuoted(ws.database)) 'SELECT group_concat(name) FROM schema_migrations'").stdout
        }
        let before = try await applied()
        let check = try await run("incident-scheduler", ["migrate", "--check", "--database", ws.database])
        #expect(check.status == 3, "\(check.stderr)")
        #expect(check.stderr.contains("level=warning event=migrate.pending ") && check.stderr.contains("1 migration pending on \(ws.database): \(name)"),
                "\(check.stderr)")
        #expect(try await applied() == before && !before.contains(name))
    }

    @Test("a metrics file that cannot be written makes run --once exit 1 with metrics.failed, the polls stored all the same")
    func metricsFailure() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)]])
        let (ws, config, keys) = try Self.etc(server)
        let metrics = ws.directory.appendingPathComponent("no-such-directory/trafficincidents.prom").path
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config, "--env-file", keys, "--metrics-file", metrics])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("level=error event=metrics.failed file=\(metrics) "), "\(result.stderr)")
        #expect(try await Self.count(ws.database) == "3")
        // status shows it: the file the monitor reads is missing (3), then, once written, fresh (0).
        let missing = try await run("incident-scheduler", ["status", "--config", config, "--env-file", keys, "--metrics-file", metrics])
        #expect(missing.status == 3 && missing.stdout.contains("metrics: \(metrics) does not exist;"), "\(missing.stdout)\(missing.stderr)")
        #expect(missing.stderr.contains("stale: the metrics file"), "\(missing.stderr)")
        let written = ws.directory.appendingPathComponent("trafficincidents.prom").path
        #expect(try await run("incident-scheduler", ["run", "--once", "--config", config, "--env-file", keys, "--metrics-file", written]).status == 0)
        let fresh = try await run("incident-scheduler", ["status", "--config", config, "--env-file", keys, "--metrics-file", written])
        #expect(fresh.status == 0 && fresh.stdout.contains("metrics: \(written) written at "), "\(fresh.stdout)\(fresh.stderr)")

        // A failed metrics write outranks "not fresh": the gateway's quota answer makes a run 3
        // (skipped), and 1 when the metrics could not be written too (the walk saw 3).
        try await server.script("/gits/getIncidentInfo", [.ok("""
            <OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>\
            <returnAuthMsg>LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR</returnAuthMsg><returnReasonCode>22</returnReasonCode>\
            </cmmMsgHeader></OpenAPI_ServiceResponse>
            """)])
        let both = try await run("incident-scheduler", ["run", "--once", "--config", config, "--env-file", keys, "--metrics-file", metrics])
        #expect(both.status == 1 && both.stderr.contains("event=metrics.failed"), "\(both.stderr)")
        let quota = try await run("incident-scheduler", ["run", "--once", "--config", config, "--env-file", keys, "--metrics-file", written])
        #expect(quota.status == 3, "\(quota.stderr)")
    }

    @Test("--log-level warning leaves out the info lines (the start line, each run's), keeps warnings and errors")
    func logLevel() async throws {
        let server = try await LoopbackServer.start(routes: ["/gits/getIncidentInfo": [.status(503, body: "down")]])
        let (ws, config, keys) = try Self.etc(server)
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config, "--env-file", keys, "--log-level", "warning"])
        #expect(result.status == 1)
        #expect(!result.stderr.contains("level=info") && !result.stderr.contains("level=debug"), "\(result.stderr)")
        #expect(result.stderr.contains("level=error event=ingest.failed source=gits "), "\(result.stderr)")
        _ = ws
    }

    // MARK: Scripts/install

    static let install = shellQuoted(TestPaths.packageRoot.appendingPathComponent("Scripts/install").path)

    @Test("Scripts/install --help prints its usage and installs nothing; an unknown argument is a usage error (64)")
    func installHelp() async throws {
        let root = try TestPaths.temporaryDirectory("help")
        let help = try await shell("exec \(Self.install) --help", environment: ["DESTDIR": root.path])
        #expect(help.status == 0 && help.stdout.hasPrefix("Usage: Scripts/install [--uninstall | --help]\n"), "\(help.stdout)\(help.stderr)")
        #expect(help.stdout.contains("PREFIX=/usr/local") && help.stdout.contains("--uninstall"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
        let wrong = try await shell("exec \(Self.install) --prefix=/opt", environment: ["DESTDIR": root.path])
        #expect(wrong.status == 64 && wrong.stderr.contains("unknown argument '--prefix=/opt'"), "\(wrong.stderr)")
    }

    @Test("PREFIX reaches every installed file (units, crontab, man pages); sysusers.d and tmpfiles.d make the user, directories and keys.env; --uninstall removes every installed file")
    func installPrefix() async throws {
        let root = try TestPaths.temporaryDirectory("prefix")
        let environment = ["DESTDIR": root.path, "BIN_DIR": Executables.directory.path, "PREFIX": "/opt/ti"]
        let installed = try await shell("exec \(Self.install)", environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }).filter { path in
            var isDirectory: ObjCBool = false
            return !path.hasPrefix("opt/ti/bin/") && FileManager.default.fileExists(atPath: root.path + "/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
        #expect(files.count >= 15, "\(files)")
        for file in files where !file.hasSuffix(".md") {  // the README and docs/ document the default
            let text = try String(contentsOfFile: root.path + "/" + file, encoding: .utf8)
            #expect(!text.contains("/usr/local"), "\(file) still names /usr/local")
        }
        let crontab = try String(contentsOfFile: root.path + "/opt/ti/share/doc/trafficincidents/incident-scheduler.crontab", encoding: .utf8)
        #expect(crontab.contains("PATH=/opt/ti/bin:/usr/bin:/bin") && crontab.contains("umask 027; /opt/ti/bin/incident-scheduler run --once"))
        let unit = try String(contentsOfFile: root.path + "/etc/systemd/system/incident-scheduler.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/opt/ti/bin/incident-scheduler run --once"))
        let manual = try String(contentsOfFile: root.path + "/opt/ti/share/man/man1/incident-scheduler.1", encoding: .utf8)
        #expect(manual.contains("/opt/ti/share/doc/trafficincidents/config.example.json"))

        // The user, then the directories and keys.env, made in the root by systemd's own tools.
        let users = try await shell("systemd-sysusers --root=\"$R\" && grep '^trafficincidents:' \"$R/etc/passwd\"", environment: ["R": root.path])
        #expect(users.status == 0 && users.stdout.contains(":/var/lib/trafficincidents:/usr/sbin/nologin"), "\(users.stdout)\(users.stderr)")
        if runningAsRoot {  // systemd-tmpfiles changes owners, which only root may
            // Owners as numbers: the root's own user and group, not this machine's names for them.
            let made = try await shell("systemd-tmpfiles --root=\"$R\" --create && stat -c '%a %u %g' \"$R\"/etc/trafficincidents \"$R\"/etc/trafficincidents/keys.env \"$R\"/var/lib/trafficincidents \"$R\"/var/log/trafficincidents",
                                       environment: ["R": root.path])
            #expect(made.status == 0, "\(made.stderr)")
            let ids = users.stdout.split(separator: ":")  // trafficincidents:x:UID:GID:…
            let (uid, gid) = (ids.count > 3 ? String(ids[2]) : "?", ids.count > 3 ? String(ids[3]) : "?")
            #expect(made.stdout.split(separator: "\n").map(String.init) == ["750 0 \(gid)", "640 0 \(gid)", "750 \(uid) \(gid)", "750 \(uid) \(gid)"],
                    "\(made.stdout)")
        }

        let removed = try await shell("exec \(Self.install) --uninstall", environment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        for file in files + ["opt/ti/bin/incident-scheduler", "opt/ti/bin/incidents"] {
            #expect(!FileManager.default.fileExists(atPath: root.path + "/" + file), "\(file) left after --uninstall")
        }
        if runningAsRoot { #expect(FileManager.default.fileExists(atPath: root.path + "/etc/trafficincidents/keys.env"), "keys.env is kept") }
    }

    @Test("check-config as root names every file the service's user cannot read (the trial's root-only key files), exit 78; a user that does not exist is a usage error")
    func serviceUser() async throws {
        let server = try await LoopbackServer.start(routes: [:])
        let (ws, config, keys) = try Self.etc(server)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ws.directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config)
        let secret = try ws.write("secret.key", "k\n")
        _ = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY", "baseURL": "\(server.url("/gits/").absoluteString)"},
              {"name": "other", "provider": "gits", "keyFile": "secret.key", "baseURL": "\(server.url("/gits/").absoluteString)"}]}
            """)
        for file in [secret, keys] { try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file) }
        let arguments = ["check-config", "--config", config, "--env-file", keys]
        let plain = try await run("incident-scheduler", arguments)
        #expect(plain.status == 0, "as root every file is readable, and no user trafficincidents here: \(plain.stderr)")
        guard runningAsRoot else { return }  // only root can take another user's identity for the check
        let checked = try await run("incident-scheduler", arguments + ["--service-user", "nobody"])
        #expect(checked.status == 78, "\(checked.stderr)")
        #expect(checked.stderr.contains("the service's user nobody cannot read \(secret): Permission denied; \(keys): Permission denied; make each readable"),
                "\(checked.stderr)")
        // Readable by the user: no complaint.
        for file in [secret, keys] { try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file) }
        #expect(try await run("incident-scheduler", arguments + ["--service-user", "nobody"]).status == 0)
        let unknown = try await run("incident-scheduler", arguments + ["--service-user", "no-such-user-x"])
        #expect(unknown.status == 64 && unknown.stderr.contains("--service-user: there is no user named 'no-such-user-x'"), "\(unknown.stderr)")
    }

    // MARK: prune

    @Test("prune takes the configuration's retention by default, --older-than over it; --vacuum gives the space back (SQLite) and is refused for PostgreSQL")
    func prune() async throws {
        let ws = try Workspace()
        let formatter = ISO8601DateFormatter()
        func daysAgo(_ days: Double) -> String { formatter.string(from: Date().addingTimeInterval(-days * 86_400)) }
        // 3 incidents seen 10 days ago; a complete answer 9 days ago lists 2: the third was cleared then.
        for (file, asOf, complete) in [("gits/incidents_3.xml", daysAgo(10), false), ("gits/incidents_2_later.xml", daysAgo(9), true)] {
            let result = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture(file).path, "--database", ws.database,
                                                              "--as-of", asOf] + (complete ? ["--complete"] : []))
            #expect(result.status == 0, "\(result.stderr)")
        }
        func config(_ retention: String?) throws -> String {
            try ws.write("config-\(retention ?? "none").json", #"{"database": "\#(ws.database)", \#(retention.map { #""retention": "\#($0)", "# } ?? "")"sources": [{"name": "gits", "provider": "gits", "keyEnv": "K"}]}"#)
        }
        let none = try await run("incident-scheduler", ["prune", "--config", try config(nil)])
        #expect(none.status == 64 && none.stderr.contains("say how old: --older-than DURATION (e.g. 90d), or set \"retention\" in the configuration"), "\(none.stderr)")
        let kept = try await run("incident-scheduler", ["prune", "--config", try config("30d")])
        #expect(kept.status == 0 && kept.stdout.hasPrefix("deleted 0 incidents"), "\(kept.stdout)\(kept.stderr)")
        let pruned = try await run("incident-scheduler", ["prune", "--config", try config("30d"), "--older-than", "1d", "--vacuum"])
        #expect(pruned.status == 0 && pruned.stdout.hasPrefix("deleted 1 incident, "), "\(pruned.stdout)\(pruned.stderr)")
        let vacuumed = try #require(pruned.stdout.split(separator: "\n").last { $0.hasPrefix("vacuumed: ") })
        let sizes = vacuumed.split(separator: " ").compactMap { Int64($0) }
        #expect(sizes.count == 2 && sizes[1] <= sizes[0] && sizes[1] > 0, "\(vacuumed)")
        #expect(try await Self.count(ws.database) == "2")
        let byRetention = try await run("incident-scheduler", ["prune", "--config", try config("1d")])
        #expect(byRetention.status == 0 && byRetention.stdout.hasPrefix("deleted 0 incidents"), "\(byRetention.stdout)")
        // PostgreSQL: refused before any connection (nothing listens on port 1).
        let postgres = try ws.write("pg.json", #"{"database": "postgresql://ingest@127.0.0.1:1/incidents", "retention": "1d", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "K"}]}"#)
        let refused = try await run("incident-scheduler", ["prune", "--config", postgres, "--vacuum"])
        #expect(refused.status == 64 && refused.stderr.contains("--vacuum is for SQLite"), "\(refused.stderr)")
    }

    // MARK: SIGHUP

    @Test("SIGHUP: a changed source keeps its turn, an unchanged one too; only a new source polls at once")
    func reloadKeepsSchedules() async throws {
        let feed = ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)
        let server = try await LoopbackServer.start(routes: ["/a/getIncidentInfo": [feed], "/b/getIncidentInfo": [feed], "/c/getIncidentInfo": [feed]])
        let ws = try Workspace()
        func config(_ sources: [(String, String)]) throws -> String {
            let entries = sources.map { name, interval in
                let base = server.url("/\(name)/").absoluteString
                return #"{"name": "\#(name)", "provider": "gits", "keyEnv": "K", "interval": "\#(interval)", "baseURL": "\#(base)"}"#
            }
            return try ws.write("config.json", #"{"database": "\#(ws.database)", "sources": [\#(entries.joined(separator: ", "))]}"#)
        }
        let path = try config([("a", "1h"), ("b", "1h")])
        let process = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--loop", "--config", path], environment: ["K": Self.key])
        defer { process.send(SIGTERM) }
        func count(_ name: String) async throws -> Int { try await server.requests(path: "/\(name)/getIncidentInfo").count }
        let first = try await eventually {
            let (a, b) = (try await count("a"), try await count("b"))
            return a == 1 && b == 1
        }
        #expect(first, "the first polls")
        // a's interval changes, b stays, c is new.
        _ = try config([("a", "2h"), ("b", "1h"), ("c", "1h")])
        process.send(SIGHUP)
        let added = try await eventually { try await count("c") == 1 }
        #expect(added, "the new source polls at once")
        try await Task.sleep(for: .seconds(2))
        let (a, b) = (try await count("a"), try await count("b"))
        #expect(a == 1 && b == 1, "a reload polled a source before its turn: a \(a), b \(b)")
        #expect(process.stderrSoFar.contains("event=scheduler.source_stopped source=a"))
        process.send(SIGTERM)
        let result = await process.finished(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
    }
}
