import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentFeeds
import IncidentNetworking
import Synchronization
import TestSupport
import Testing

/// What an operator meets (issue 14): log lines for the journal, the database precedence, the
/// metrics text, the configuration's key problems, the command line's messages and help.
/// What a `keyEnv` that is no variable's name (a key pasted there) is told, without echoing it.
private let keyEnvNotAName = "keyEnv is not the name of an environment variable (letters, digits and _, not starting with a digit); "
    + "it is not shown, since it may be the key itself: put the key in a variable and give its name"

@Suite("Operator")
struct OperatorTests {
    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func logger(_ format: Logger.Format = .logfmt, journal: Bool = false) -> Logger {
            Logger(format: format, verbose: true, clock: .fixed(OperatorTests.t0), syslogPriorities: journal) { line in
                self.all.withLock { $0.append(line) }
            }
        }
        var lines: [String] { all.withLock { $0 } }
    }

    // MARK: Logs

    @Test("under the journal each line starts with its syslog priority: error 3, warning 4, info 6, debug 7")
    func journalPriorities() {
        let lines = Lines()
        let logger = lines.logger(journal: true)
        logger.log(.error, "a")
        logger.log(.warning, "b")
        logger.log(.info, "c")
        logger.log(.debug, "d")
        lines.logger(.json, journal: true).log(.warning, "e")
        lines.logger(journal: false).log(.error, "f")
        #expect(lines.lines == [
            "<3>ts=2024-01-01T00:00:00Z level=error event=a", "<4>ts=2024-01-01T00:00:00Z level=warning event=b",
            "<6>ts=2024-01-01T00:00:00Z level=info event=c", "<7>ts=2024-01-01T00:00:00Z level=debug event=d",
            #"<4>{"ts":"2024-01-01T00:00:00Z","level":"warning","event":"e"}"#, "ts=2024-01-01T00:00:00Z level=error event=f",
        ])
    }

    @Test("JOURNAL_STREAM counts only when it names stderr's own device and inode")
    func journalStream() throws {
        var status = stat()
        try #require(fstat(STDERR_FILENO, &status) == 0)
        #expect(JournalStream.isStandardError(["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"]))
        #expect(!JournalStream.isStandardError(["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino + 1)"]))
        #expect(!JournalStream.isStandardError(["JOURNAL_STREAM": "\(status.st_dev)"]))
        #expect(!JournalStream.isStandardError(["JOURNAL_STREAM": "x:y"]))
        #expect(!JournalStream.isStandardError([:]))
    }

    @Test("numbers are JSON numbers, durations fractional seconds; text stays text and is redacted")
    func numbers() throws {
        let lines = Lines()
        let fields: KeyValuePairs<String, (any CustomStringConvertible)?> = [
            "source": "gits", "fetched": 4, "bytes": Int64(1234), "duration_s": 0.04237, "uptime_s": 61.0, "status": nil,
        ]
        lines.logger(.json).log(.info, "ingest.finished", fields)
        lines.logger(.logfmt).log(.info, "ingest.finished", fields)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(lines.lines[0].utf8)) as? [String: Any])
        #expect(lines.lines[0] == #"{"ts":"2024-01-01T00:00:00Z","level":"info","event":"ingest.finished","source":"gits","fetched":4,"bytes":1234,"duration_s":0.042,"uptime_s":61.0}"#)
        #expect(json["fetched"] is NSNumber && !(json["fetched"] is String))
        #expect((json["duration_s"] as? NSNumber)?.doubleValue == 0.042)
        #expect(lines.lines[1] == "ts=2024-01-01T00:00:00Z level=info event=ingest.finished source=gits fetched=4 bytes=1234 duration_s=0.042 uptime_s=61.0")
    }

    @Test("one version: --version, the User-Agent and the build_info metric")
    func version() {
        #expect(BuildInfo.userAgent == "incident-scheduler/\(BuildInfo.version) (TrafficIncidents)")
        #expect(Metrics.render(sources: [], summaries: [], activeIncidents: [:], durations: [:])
            .contains("trafficincidents_build_info{version=\"\(BuildInfo.version)\"} 1\n"))
    }

    // MARK: The database

    @Test("the database: --database, then the configuration's, then $INCIDENTS_DATABASE, then the default", arguments: [
        (["--database", "/config.sqlite", "--config", "$CONFIG"], ["INCIDENTS_DATABASE": "/env.sqlite"], "/config.sqlite"),
        (["--database", "/opt.sqlite", "--config", "$NO_DATABASE"], ["INCIDENTS_DATABASE": "/env.sqlite"], "/opt.sqlite"),
        (["--config", "$CONFIG"], ["INCIDENTS_DATABASE": "/env.sqlite"], "/config.sqlite"),
        (["--config", "$NO_DATABASE"], ["INCIDENTS_DATABASE": "/env.sqlite"], "/env.sqlite"),
        ([], ["INCIDENTS_DATABASE": "/env.sqlite"], "/env.sqlite"),
        ([], ["XDG_DATA_HOME": "/xdg"], "/xdg/trafficincidents/incidents.sqlite"),
        ([], ["HOME": "/home/u"], "/home/u/.local/share/trafficincidents/incidents.sqlite"),
    ] as [([String], [String: String], String)])
    func databasePrecedence(arguments: [String], environment: [String: String], expected: String) throws {
        let directory = try TestPaths.temporaryDirectory("precedence")
        let config = directory.appendingPathComponent("config.json")
        try #"{"database": "/config.sqlite", "sources": []}"#.write(to: config, atomically: true, encoding: .utf8)
        let noDatabase = directory.appendingPathComponent("nodb.json")
        try #"{"sources": []}"#.write(to: noDatabase, atomically: true, encoding: .utf8)
        let command = Command(name: "x", abstract: "X.", options: [CommonOptions.database, CommonOptions.config], run: { _ in })
        let substituted = arguments.map { $0 == "$CONFIG" ? config.path : $0 == "$NO_DATABASE" ? noDatabase.path : $0 }
        guard case .run(_, let parsed) = try command.parse(substituted) else {
            Issue.record("expected a run")
            return
        }
        let context = Context(environment: environment, clock: .fixed(Self.t0), output: { _ in })
        #expect(try context.databasePath(parsed) == expected)
        // A command that loaded the configuration passes its database: the same answer.
        let loaded = try parsed.value(CommonOptions.config).map { try Configuration.databaseSetting(in: $0) } ?? nil
        #expect(try context.databasePath(parsed, configured: loaded) == expected)
    }

    // MARK: Metrics

    @Test("metrics: only configured sources; never-succeeded ones have last_success 0; durations as measured")
    func metrics() {
        let run = IngestRun(source: "gits", startedAt: Self.t0, finishedAt: Self.t0.adding(seconds: 1), status: .incomplete,
                            counts: IngestCounts(fetched: 5, inserted: 3, rejected: 1, duplicates: 1))
        let summaries = [
            SourceSummary(source: "gits", lastRun: run, lastSuccessAt: Self.t0.adding(seconds: 1)),
            SourceSummary(source: "removed", lastRun: run, lastSuccessAt: Self.t0),
            SourceSummary(source: "its", lastRun: IngestRun(source: "its", startedAt: Self.t0, finishedAt: Self.t0, status: .failed),
                          consecutiveFailures: 2, failingSince: Self.t0, quotaExhaustedUntil: Self.t0.adding(seconds: 3600)),
        ]
        let text = Metrics.render(sources: ["gits", "its", "new"], summaries: summaries, activeIncidents: ["gits": 3, "removed": 9],
                                  durations: ["gits": 0.25])
        #expect(!text.contains("removed"))
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        for expected in [
            #"trafficincidents_last_success_timestamp_seconds{source="gits"} 1704067201"#,
            #"trafficincidents_last_success_timestamp_seconds{source="its"} 0"#,
            #"trafficincidents_last_success_timestamp_seconds{source="new"} 0"#,
            #"trafficincidents_last_run_duration_seconds{source="gits"} 0.25"#,
            #"trafficincidents_last_run_status{source="gits",status="incomplete"} 1"#,
            #"trafficincidents_last_run_status{source="gits",status="succeeded"} 0"#,
            #"trafficincidents_last_run_records{source="gits",kind="rejected"} 1"#,
            #"trafficincidents_last_run_records{source="gits",kind="duplicates"} 1"#,
            #"trafficincidents_last_run_complete{source="gits"} 0"#,
            #"trafficincidents_consecutive_failures{source="its"} 2"#,
            #"trafficincidents_consecutive_failures{source="new"} 0"#,
            #"trafficincidents_quota_paused_until_timestamp_seconds{source="its"} 1704070800"#,
            #"trafficincidents_quota_paused_until_timestamp_seconds{source="gits"} 0"#,
            #"trafficincidents_active_incidents{source="gits"} 3"#,
            #"trafficincidents_active_incidents{source="new"} 0"#,
        ] {
            #expect(samples.contains(expected), "missing \(expected)")
        }
        #expect(!samples.contains { $0.hasPrefix("trafficincidents_last_run_timestamp_seconds{source=\"new\"}") }, "no run, no last_run series")
        #expect(!samples.contains { $0.hasPrefix("trafficincidents_last_run_duration_seconds{source=\"its\"}") }, "not measured here")
    }

    @Test("the service measures each poll on the monotonic clock: logs and metrics show 2.25 s, not whole seconds")
    func measuredDurations() async throws {
        let now = Mutex(100.0)
        // The deadline's sleep lasts until the round cancels it.
        let timing = PollTiming(now: { now.withLock { $0 } }, sleep: { _ in try await Task.sleep(for: .seconds(3600)) }, unitRandom: { 0 })
        let lines = Lines()
        let directory = try TestPaths.temporaryDirectory("metrics")
        let file = directory.appendingPathComponent("m.prom").path
        var source = SourceDefinition(name: "gits", provider: "gits", key: APIKey("stub+key/1="))
        source.intervalSeconds = 60
        let service = SchedulerService(
            store: try Stores.openForWriting(":memory:", clock: .fixed(Self.t0)), clock: .fixed(Self.t0), logger: lines.logger(),
            metricsFile: file, concurrency: 1, timing: timing,
            makeClient: { _ in SchedulerServiceTests.ScriptedClient { _ in now.withLock { $0 += 2.25 } } })
        _ = await service.pollRound([source], deadlineSeconds: 60)
        service.writeMetrics()
        #expect(lines.lines.contains { $0.contains("event=ingest.finished source=gits") && $0.hasSuffix(" duration_s=2.25") },
                "\(lines.lines)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("trafficincidents_last_run_duration_seconds{source=\"gits\"} 2.25\n"))
        // A configuration without the source (a SIGHUP reload): its series leave the file.
        service.configure([])
        service.writeMetrics()
        #expect(!(try String(contentsOfFile: file, encoding: .utf8)).contains("gits"))
    }

    // MARK: Key problems

    @Test("each key problem is named exactly; without required keys it is kept per source instead of thrown", arguments: [
        (#""keyEnv": "UNSET""#, "the environment variable UNSET (keyEnv) is not set; export it with the API key", KeyProblem.Kind.missing),
        (#""keyEnv": "EMPTY""#, "the environment variable EMPTY (keyEnv) is empty; set it to the API key", .missing),
        (#""keyEnv": "TWO""#, "the environment variable TWO holds more than one word or line; it must hold just the API key", .invalid),
        (#""keyFile": "none.key""#, "the key file $DIR/none.key (keyFile) does not exist; create it with the API key on one line", .missing),
        (#""keyFile": "empty.key""#, "the key file $DIR/empty.key (keyFile) is empty; put the API key in it on one line", .missing),
        (#""keyFile": "directory.key""#, "cannot read the key file $DIR/directory.key (keyFile): Is a directory; make it a file this user may read", .unreadable),
        (#""keyFile": "two.key""#, "the key file $DIR/two.key holds more than one word or line; it must hold just the API key", .invalid),
        ("", "no keyEnv or keyFile: name the environment variable (keyEnv) or the file (keyFile) that holds the API key", .missing),
        // A key pasted where its variable's name goes (base64's +, / and =, a leading digit, a
        // space or a hyphen): said without echoing it.
        (#""keyEnv": "TOPSECRETKEY6abc+/==""#, keyEnvNotAName, .invalid),
        (#""keyEnv": "9f2c41aa0b7e""#, keyEnvNotAName, .invalid),
        (#""keyEnv": "key with-spaces""#, keyEnvNotAName, .invalid),
        (#""keyEnv": "한국키""#, keyEnvNotAName, .invalid),
    ] as [(String, String, KeyProblem.Kind)])
    func keyProblems(field: String, message: String, kind: KeyProblem.Kind) throws {
        let directory = try TestPaths.temporaryDirectory("keys")
        try "".write(to: directory.appendingPathComponent("empty.key"), atomically: true, encoding: .utf8)
        try "two words\n".write(to: directory.appendingPathComponent("two.key"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("directory.key"), withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("config.json")
        try #"{"sources": [{"name": "g", "provider": "gits"\#(field.isEmpty ? "" : ", " + field)}]}"#.write(to: url, atomically: true, encoding: .utf8)
        let environment = ["EMPTY": " ", "TWO": "a b"]
        let expected = "\(url.path): sources[0] (g): " + message.replacingOccurrences(of: "$DIR", with: directory.path)
        #expect(throws: ConfigurationError(expected)) { try Configuration.load(from: url, environment: environment) }
        let lenient = try Configuration.load(from: url, environment: environment, requireKeys: false)
        #expect(lenient.keyProblems == [KeyProblem(source: "g", kind: kind, error: ConfigurationError(expected))])
        #expect(lenient.sources.first?.key == nil)
    }

    @Test("a configuration may explain itself: // and /* */ comments and trailing commas")
    func comments() throws {
        let directory = try TestPaths.temporaryDirectory("json5")
        let url = directory.appendingPathComponent("config.json")
        try """
            // the database
            {"database": "/x.sqlite", /* inline */ "sources": [{"name": "g", "provider": "gits", "keyEnv": "K",},],}
            """.write(to: url, atomically: true, encoding: .utf8)
        let configuration = try Configuration.load(from: url, environment: ["K": "k"])
        #expect(configuration.database == "/x.sqlite")
        #expect(configuration.sources.map(\.name) == ["g"])
    }

    @Test("the annotated example configuration loads and explains every field a configuration may have")
    func example() throws {
        let url = TestPaths.packageRoot.appendingPathComponent("Scripts/config/config.example.json")
        let text = try String(contentsOf: url, encoding: .utf8)
        let configuration = try Configuration.load(from: url, environment: ["GITS_SERVICE_KEY": "k", "ITS_API_KEY": "k"])
        #expect(configuration.sources.map(\.name) == ["gits", "its-seoul", "drivebc"])
        let fields = Configuration.fields + Configuration.sourceFields + Configuration.retryFields
            + ProviderRegistry.all.flatMap { $0.options.map(\.name) }
        for field in fields { #expect(text.contains("\"\(field)\""), "the example does not mention \(field)") }
        #expect(text.components(separatedBy: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.count >= 30)
    }

    // MARK: Command line

    static let root = Command(name: "tool", abstract: "A tool.", subcommands: [
        Command(name: "list", abstract: "List things.", options: [Flag("active", help: "Only active.")], run: { _ in }),
        Command(name: "secret", abstract: "Hidden.", hidden: true, run: { _ in }),
    ])

    @Test("`help list` is `list --help`; `help` alone is the root's; hidden commands are never offered")
    func help() throws {
        guard case .help(let list) = try Self.root.parse(["help", "list"]),
              case .help(let top) = try Self.root.parse(["help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(list.hasPrefix("OVERVIEW: List things.\n"))
        #expect(list.contains("USAGE: tool list [options]"))
        #expect(top.contains("COMMANDS:") && top.contains("  list ") && !top.contains("secret"))
        #expect(top.contains("See 'tool help <command>' for details."))
        #expect(throws: CommandLineError.self) { try Self.root.parse(["help", "lst"]) }
        do {
            _ = try Self.root.parse(["lst"])
        } catch {
            #expect(error.usage.message == "unknown command 'lst' (commands: list)")
        }
        guard case .run = try Self.root.parse(["secret"]) else {
            Issue.record("a hidden command still runs")
            return
        }
    }

    @Test("the scheduler's messages: --once with --loop, a zero --deadline")
    func messages() async throws {
        let context = Context(environment: [:], clock: .fixed(Self.t0), output: { _ in })
        let scheduler = SchedulerTool.command(context)
        guard case .run(let run, let both) = try scheduler.parse(["run", "--once", "--loop"]),
              case .run(_, let zero) = try scheduler.parse(["run", "--once", "--deadline", "0s"]) else {
            Issue.record("expected runs")
            return
        }
        await #expect(throws: UsageError("--once and --loop are exclusive: give --once to poll each source once (cron, a timer) or --loop to keep polling (a service)")) {
            try await run.run?(both)
        }
        #expect(throws: UsageError("--deadline: '0s' is not allowed: a run given no time would cancel every source before it starts; give a positive duration such as 90s or 15m")) {
            try zero.value(RunCommand.deadline)
        }
        #expect(throws: UsageError("'0m' is not allowed: a duration must be longer than zero; give a positive duration such as 90s or 15m")) {
            try ValueParsers.duration("0m")
        }
    }

    @Test("counted nouns", arguments: [(0, "0 attempts"), (1, "1 attempt"), (2, "2 attempts")])
    func plural(count: Int, text: String) {
        #expect(Plural.count(count, "attempt") == text)
    }

    @Test("--wide, and output that is not a terminal, are never cut")
    func wide() {
        #expect(Terminal.width(["COLUMNS": "80"], wide: true) == Int.max)
        #expect(Terminal.width(["COLUMNS": "80"]) == 80)
        // The test's stdout is not a terminal: without COLUMNS, no limit.
        #expect(isatty(STDOUT_FILENO) == 1 || Terminal.width([:]) == Int.max)
        let long = String(repeating: "x", count: 300)
        #expect(TextTable.render([["A", "B"], ["1", long]], maxWidth: Int.max, flexible: [1]) == "A  B\n1  \(long)\n")
    }

    @Test("roff: option dashes are minus signs, backslashes escaped, `code` bold, a leading dot literal")
    func roff() {
        #expect(ManualPage.escape("use --once or -v, read-only") == "use \\-\\-once or \\-v, read-only")
        #expect(ManualPage.escape("a \\ b `x`") == "a \\e b \\fBx\\fR")
        #expect(ManualPage.escape(".hidden") == "\\&.hidden")
    }
}
