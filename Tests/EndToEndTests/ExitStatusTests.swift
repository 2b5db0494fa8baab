import Foundation
import TestSupport
import Testing

/// The same kind of failure exits the same way, with the same kind of message, whichever
/// command of either executable meets it (docs/operator.md, "Exit statuses").
@Suite("End to end: exit statuses", .serialized)
struct ExitStatusTests {
    /// One row of the table: a command in a situation, its exit status and the start of its
    /// message. `$DB` is a database holding one poll, `$MISSING_DB` a path with no database,
    /// `$GARBAGE` a file that is not a database, `$NO_CONFIG` a configuration file that does not
    /// exist, `$NO_KEY_CONFIG` one whose key variable is unset, `$FEED` a good GITS response,
    /// `$HTML` an HTML page, `$NO_FILE` a file that does not exist. For `incidents` the message
    /// is the `error: ` line; for `incident-scheduler` it is the `error` field of the log line
    /// with `event`.
    struct Row: Sendable, CustomTestStringConvertible {
        var situation: String
        var tool: String
        var arguments: [String]
        var status: Int32
        var event: String?
        var message: String
        var environment: [String: String] = [:]
        var testDescription: String { "\(situation): \(tool) \(arguments.joined(separator: " "))" }
    }

    static let key = ["GITS_SERVICE_KEY": "exit+status/key="]

    static let rows: [Row] = [
        Row(situation: "usage", tool: "incidents", arguments: ["list", "--bogus"], status: 64, message: "unknown option '--bogus'"),
        Row(situation: "usage", tool: "incidents", arguments: ["list", "--tz", "Mars/Olympus"], status: 64, message: "--tz: 'Mars/Olympus' is not a time zone"),
        Row(situation: "usage", tool: "incident-scheduler", arguments: ["run"], status: 64, message: "say how to run"),
        Row(situation: "usage", tool: "incident-scheduler", arguments: ["run", "--once", "--loop"], status: 64,
            message: "--once and --loop are exclusive"),
        Row(situation: "usage", tool: "incident-scheduler", arguments: ["run", "--once", "--deadline", "0s"], status: 64,
            message: "--deadline: '0s' is not allowed: a run given no time would cancel every source before it starts"),
        Row(situation: "usage", tool: "incidents", arguments: ["help", "lst"], status: 64, message: "unknown command 'lst' (commands: list, "),
        Row(situation: "usage", tool: "incident-scheduler", arguments: ["ingest", "--file", "x.xml"], status: 64, message: "missing --source"),
        Row(situation: "usage", tool: "incident-scheduler", arguments: ["run", "--once", "--concurrency", "0"], status: 64,
            message: "--concurrency: '0' is not a whole number from 1 to 64"),

        Row(situation: "missing configuration file", tool: "incident-scheduler", arguments: ["run", "--once", "--config", "$NO_CONFIG"],
            status: 78, event: "config.invalid", message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incident-scheduler",
            arguments: ["ingest", "--source", "gits", "--file", "$FEED", "--config", "$NO_CONFIG"],
            status: 78, event: "config.invalid", message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incident-scheduler", arguments: ["sources", "--config", "$NO_CONFIG"],
            status: 78, event: "config.invalid", message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incident-scheduler", arguments: ["check-config", "--config", "$NO_CONFIG"],
            status: 78, event: "config.invalid", message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incident-scheduler", arguments: ["migrate", "--config", "$NO_CONFIG"],
            status: 78, event: "config.invalid", message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incidents", arguments: ["list", "--config", "$NO_CONFIG"],
            status: 78, message: "the configuration file $NO_CONFIG does not exist; check --config"),
        Row(situation: "missing configuration file", tool: "incidents", arguments: ["runs", "--config", "$NO_CONFIG"],
            status: 78, message: "the configuration file $NO_CONFIG does not exist; check --config"),

        Row(situation: "missing key", tool: "incident-scheduler", arguments: ["run", "--once", "--config", "$NO_KEY_CONFIG"],
            status: 78, event: "config.invalid", message: "$NO_KEY_CONFIG: sources[0] (gits): the environment variable NOPE_KEY (keyEnv) is not set"),
        Row(situation: "missing key", tool: "incident-scheduler", arguments: ["check-config", "--config", "$NO_KEY_CONFIG"],
            status: 78, event: "config.invalid", message: "$NO_KEY_CONFIG: sources[0] (gits): the environment variable NOPE_KEY (keyEnv) is not set"),

        Row(situation: "missing database", tool: "incidents", arguments: ["list", "--database", "$MISSING_DB"], status: 66,
            message: "no incidents database at $MISSING_DB"),
        Row(situation: "missing database", tool: "incidents", arguments: ["show", "1", "--database", "$MISSING_DB"], status: 66,
            message: "no incidents database at $MISSING_DB"),
        Row(situation: "missing database", tool: "incident-scheduler", arguments: ["migrate", "--status", "--database", "$MISSING_DB"],
            status: 66, event: "database.missing", message: "no incidents database at $MISSING_DB"),
        Row(situation: "missing database", tool: "incident-scheduler", arguments: ["prune", "--older-than", "1d", "--database", "$MISSING_DB"],
            status: 66, event: "database.missing", message: "no incidents database at $MISSING_DB"),
        Row(situation: "missing database", tool: "incident-scheduler", arguments: ["sources", "--clear-quota", "gits", "--database", "$MISSING_DB"],
            status: 66, event: "database.missing", message: "no incidents database at $MISSING_DB", environment: key),

        Row(situation: "missing input file", tool: "incident-scheduler",
            arguments: ["ingest", "--source", "gits", "--file", "$NO_FILE", "--database", "$DB"],
            status: 66, event: "input.missing", message: "cannot read $NO_FILE"),

        Row(situation: "database failure", tool: "incidents", arguments: ["list", "--database", "$GARBAGE"], status: 1,
            message: "the incidents database $GARBAGE failed: "),
        Row(situation: "database failure", tool: "incidents", arguments: ["stats", "--database", "$GARBAGE"], status: 1,
            message: "the incidents database $GARBAGE failed: "),
        Row(situation: "database failure", tool: "incident-scheduler",
            arguments: ["ingest", "--source", "gits", "--file", "$FEED", "--database", "$GARBAGE"],
            status: 1, event: "database.unavailable", message: "the incidents database $GARBAGE failed: "),
        Row(situation: "database failure", tool: "incident-scheduler", arguments: ["run", "--once", "--database", "$GARBAGE"],
            status: 1, event: "database.unavailable", message: "the incidents database $GARBAGE failed: ", environment: key),
        Row(situation: "database failure", tool: "incident-scheduler", arguments: ["migrate", "--database", "$GARBAGE"],
            status: 1, event: "database.unavailable", message: "the incidents database $GARBAGE failed: "),
        Row(situation: "database failure", tool: "incident-scheduler", arguments: ["prune", "--older-than", "1d", "--database", "$GARBAGE"],
            status: 1, event: "database.unavailable", message: "the incidents database $GARBAGE failed: "),
        Row(situation: "database failure", tool: "incident-scheduler", arguments: ["sources", "--database", "$GARBAGE"],
            status: 1, event: "database.unavailable", message: "the incidents database $GARBAGE failed: ", environment: key),

        Row(situation: "malformed input file", tool: "incident-scheduler",
            arguments: ["ingest", "--source", "gits", "--file", "$HTML", "--database", "$DB"],
            status: 65, event: "ingest.failed", message: "gits: the file is not GITS XML (ServiceResult): it is an HTML page"),

        Row(situation: "no such incident", tool: "incidents", arguments: ["show", "999", "--database", "$DB"], status: 1,
            message: "no incident with id 999; `incidents list` shows the ids"),
    ]

    /// A workspace with every file the rows name.
    static func paths() async throws -> (Workspace, [String: String]) {
        let ws = try Workspace()
        let seeded = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                     "--database", ws.database])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let paths = [
            "$DB": ws.database,
            "$MISSING_DB": ws.directory.appendingPathComponent("none/incidents.sqlite").path,
            "$GARBAGE": try ws.write("garbage.sqlite", String(repeating: "not a database\n", count: 300)),
            "$NO_CONFIG": ws.directory.appendingPathComponent("none.json").path,
            "$NO_KEY_CONFIG": try ws.write("nokey.json", #"{"sources": [{"name": "gits", "provider": "gits", "keyEnv": "NOPE_KEY"}]}"#),
            "$FEED": TestPaths.fixture("gits/incidents_3.xml").path,
            "$HTML": TestPaths.fixture("gits/html_error_page.html").path,
            "$NO_FILE": ws.directory.appendingPathComponent("none.xml").path,
        ]
        return (ws, paths)
    }

    static func substitute(_ text: String, _ paths: [String: String]) -> String {
        paths.keys.sorted { $0.count > $1.count }.reduce(text) { $0.replacingOccurrences(of: $1, with: paths[$1]!) }
    }

    @Test("each situation, each command: the exit status and the message", arguments: rows)
    func table(row: Row) async throws {
        let (_, paths) = try await Self.paths()
        let result = try await run(row.tool, row.arguments.map { Self.substitute($0, paths) }, environment: row.environment)
        Self.expect(result, row, paths: paths)
    }

    /// The status, and the message in the tool's form.
    static func expect(_ result: ProcessResult, _ row: Row, paths: [String: String], sourceLocation: SourceLocation = #_sourceLocation) {
        let message = substitute(row.message, paths)
        #expect(result.status == row.status, "\(row.testDescription): \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        if let event = row.event {
            let line = lines.first { $0.contains("event=\(event) ") }
            #expect(line?.contains("error=\"\(message)") == true || line?.contains("error=\(message)") == true,
                    "\(row.testDescription): no event=\(event) line with error=\"\(message)…: \(result.stderr)", sourceLocation: sourceLocation)
        } else {
            #expect(lines.first?.hasPrefix("error: \(message)") == true, "\(row.testDescription): \(result.stderr)",
                    sourceLocation: sourceLocation)
        }
        if row.status == 64 {
            #expect(lines.count == 2 && lines[1].hasPrefix("hint: see '\(row.tool)"), "\(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// A process holding the scheduler's lock (flock(2) on DATABASE.lock), as a running
    /// scheduler does; killed when the returned process is.
    static func holdSchedulerLock(_ ws: Workspace) async throws -> RunningProcess {
        let holder = try RunningProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import fcntl, sys, time
            f = open(sys.argv[1], "a")
            fcntl.flock(f, fcntl.LOCK_EX)
            sys.stderr.write("locked\\n"); sys.stderr.flush()
            time.sleep(60)
            """, ws.database + ".lock"])
        // Until it says it holds the lock (Python may take seconds to start on a busy machine);
        // a test that went on before would find the lock free.
        let deadline = Date().addingTimeInterval(30)
        while !holder.stderrSoFar.contains("locked") && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try #require(holder.stderrSoFar.contains("locked"), "the lock holder did not take the lock within 30 s")
        return holder
    }

    @Test("another scheduler holds the database: a second scheduler exits 75 at once and says so", arguments: [
        ["run", "--once", "--database", "$DB"],
        ["run", "--loop", "--database", "$DB"],
    ])
    func locked(arguments: [String]) async throws {
        let (ws, paths) = try await Self.paths()
        let holder = try await Self.holdSchedulerLock(ws)
        defer { holder.send(SIGKILL) }  // the kernel releases its lock when it dies
        let result = try await run("incident-scheduler", arguments.map { Self.substitute($0, paths) }, environment: Self.key)
        Self.expect(result, Row(situation: "lock held", tool: "incident-scheduler", arguments: arguments, status: 75,
                                event: "scheduler.locked", message: "another incident-scheduler is working on this database ($DB"),
                    paths: paths)
        #expect(result.stderr.contains("level=warning event=scheduler.locked"))
    }

    @Test("a backfill and a prune run while a scheduler holds the database (its lock is for schedulers only)")
    func backfillWhileSchedulerRuns() async throws {
        let (ws, paths) = try await Self.paths()
        let holder = try await Self.holdSchedulerLock(ws)
        defer { holder.send(SIGKILL) }
        let ingest = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", paths["$FEED"]!, "--database", ws.database],
                                   environment: Self.key)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stderr.contains("status=succeeded fetched=3 inserted=0 updated=0 unchanged=3"), "\(ingest.stderr)")
        let prune = try await run("incident-scheduler", ["prune", "--older-than", "1d", "--database", ws.database], environment: Self.key)
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(prune.stdout.hasPrefix("deleted 0 incidents, 0 revisions, 0 transitions, 0 runs and 0 quarantined records older than "), "\(prune.stdout)")
    }

    @Test("a PostgreSQL connection string holding a password is a configuration error (78) that never repeats it", arguments: [
        ("incidents", ["list", "--database", "postgresql://u:s3cret-pw@127.0.0.1:1/x"]),
        ("incidents", ["stats", "--database", "host=127.0.0.1 password=s3cret-pw dbname=x"]),
        ("incidents", ["runs", "--database", "postgresql://u@127.0.0.1:1/x?password=s3cret-pw"]),
        ("incident-scheduler", ["prune", "--older-than", "1d", "--database", "postgresql://u:s3cret-pw@127.0.0.1:1/x"]),
        ("incident-scheduler", ["migrate", "--status", "--database", "postgresql://u:s3cret-pw@127.0.0.1:1/x"]),
        ("incident-scheduler", ["check-config", "--config", "$PW_CONFIG"]),
        ("incident-scheduler", ["copy", "--from", "$DB", "--to", "postgresql://u:s3cret-pw@127.0.0.1:1/x"]),
    ])
    func passwordInConnectionString(tool: String, arguments: [String]) async throws {
        let (ws, paths) = try await Self.paths()
        let config = try ws.write("pw.json", #"{"database": "postgresql://u:s3cret-pw@127.0.0.1:1/x", "sources": [{"name": "g", "provider": "gits", "keyEnv": "K"}]}"#)
        let result = try await run(tool, arguments.map { Self.substitute($0, paths).replacingOccurrences(of: "$PW_CONFIG", with: config) },
                                   environment: ["K": "some-key"])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("holds a password; passwords never go in the configuration or on the command line"), "\(result.stderr)")
        #expect(!result.stdout.contains("s3cret") && !result.stderr.contains("s3cret"), "\(result.stdout)\n\(result.stderr)")
    }

    /// Passwords libpq would not read as passwords (another case, spaces and quotes, a colon
    /// percent-encoded in the user name) are not echoed either.
    @Test("a password in a connection string libpq cannot read, or in its user name, is never shown", arguments: [
        ("list", "host=127.0.0.1 port=1 PASSWORD=PGs3cret9 dbname=x", 78), ("stats", "postgresql://u@127.0.0.1:1/db?PassWord=PGs3cret8", 78),
        ("runs", "host=127.0.0.1 Password = 'PG s3cret7' dbname=x", 78), ("list", "host=127.0.0.1 sslPassword=PGs3cret5", 78),
        ("list", "postgresql://u%3APGs3cret6@127.0.0.1:1/db", 1),
    ])
    func unreadablePasswords(command: String, database: String, status: Int32) async throws {
        let result = try await run("incidents", [command, "--database", database])
        #expect(result.status == status, "\(result.stderr)")
        #expect(!result.stdout.contains("s3cret") && !result.stderr.contains("s3cret"), "\(result.stdout)\n\(result.stderr)")
    }

    @Test("a key written into a baseURL's query is a configuration error that names the parameter and never shows the key", arguments: [
        ("gits", "https://openapigits.gg.go.kr/api/rest/?serviceKey=K3y-in-url"),
        ("wzdx", "https://example.org/wzdx?format=geojson&access_token=K3y-in-url"),
        ("open511", "https://example.org/events?API_KEY=K3y-in-url"),
    ])
    func keyInBaseURL(provider: String, url: String) async throws {
        let ws = try Workspace()
        let config = try ws.write("config.json", #"{"sources": [{"name": "s", "provider": "\#(provider)", "keyEnv": "K", "baseURL": "\#(url)"}]}"#)
        let result = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["K": "another-key"])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("baseURL carries a key in its query parameter"), "\(result.stderr)")
        #expect(!result.stdout.contains("K3y-in-url") && !result.stderr.contains("K3y-in-url"), "\(result.stderr)")
    }

    /// Issue 24, point 6: `migrate --database postgresql://…` made directories named after the
    /// URI. No command takes a URI for a path: a PostgreSQL one goes to the server (here
    /// nothing listens: exit 1), any other is a configuration error; nothing is made in the
    /// working directory.
    @Test("a URI given as the database is never made into directories", arguments: [
        ("incident-scheduler", ["migrate", "--database", "postgresql://u@127.0.0.1:1/db"], 1),
        ("incident-scheduler", ["migrate", "--database", "postgres://u@127.0.0.1:1/sub/db"], 1),
        ("incident-scheduler", ["migrate", "--database", "mysql://u@db.example/incidents"], 78),
        ("incident-scheduler", ["migrate", "--database", "sqlite:///var/tmp/x/incidents.sqlite"], 78),
        ("incident-scheduler", ["run", "--once", "--database", "file:///var/tmp/x/incidents.sqlite"], 78),
        ("incident-scheduler", ["ingest", "--source", "gits", "--file", "$FEED", "--database", "postgresq://u@h/x"], 78),
        ("incident-scheduler", ["prune", "--older-than", "1d", "--database", "https://example.org/db"], 78),
        ("incidents", ["list", "--database", "mysql://u@db.example/incidents"], 78),
        ("incident-scheduler", ["copy", "--from", "postgresql://u@127.0.0.1:1/db", "--to", "postgresql://u@127.0.0.1:1/x"], 64),
    ])
    func uriIsNoPath(tool: String, arguments: [String], status: Int32) async throws {
        let (_, paths) = try await Self.paths()
        let directory = try TestPaths.temporaryDirectory("uri-cwd")
        let result = await (try RunningProcess(Executables.url(tool), arguments.map { Self.substitute($0, paths) },
                                               environment: Self.key, currentDirectory: directory)).finished()
        #expect(result.status == status, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "made in the working directory")
        #expect(!FileManager.default.fileExists(atPath: "/var/tmp/x"))
        if status == 78 { #expect(result.stderr.contains("URI is no database this program can open"), "\(result.stderr)") }
    }
}
