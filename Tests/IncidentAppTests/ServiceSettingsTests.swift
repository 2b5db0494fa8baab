import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking
@testable import IncidentApp
import TestSupport
import Testing

/// Where the data goes and where the keys come from, as an operator sets them up (issue 20,
/// points 1, 2 and 7).
@Suite("Service settings")
struct ServiceSettingsTests {
    static func parsed(_ arguments: [String]) throws -> ParsedArguments {
        let command = Command(name: "x", abstract: "X.", options: [CommonOptions.database, CommonOptions.config, CommonOptions.envFile],
                              run: { _ in })
        guard case .run(_, let parsed) = try command.parse(arguments) else { throw UsageError("expected a run") }
        return parsed
    }

    static func context(_ environment: [String: String] = [:], defaultConfiguration: String = "/nonexistent/config.json") -> Context {
        var context = Context(environment: environment, clock: .fixed(UTCInstant(secondsSince1970: 1_700_000_000)), output: { _ in })
        context.defaultConfigurationFile = defaultConfiguration
        return context
    }

    static func configuration(database: String) throws -> String {
        let file = try TestPaths.temporaryDirectory("settings").appendingPathComponent("config.json")
        try #"{"database": "\#(database)", "sources": []}"#.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    // MARK: One place says where the data goes

    @Test("a --database that is not the configuration's is refused (78), naming both; the trial's units after the move to PostgreSQL",
          arguments: [
              ("/var/lib/trafficincidents/incidents.sqlite", "postgresql://ingest@db.internal/incidents", "postgresql://ingest@db.internal/incidents"),
              ("postgresql://ingest@db.internal/incidents", "/var/lib/trafficincidents/incidents.sqlite", "/var/lib/trafficincidents/incidents.sqlite"),
              ("/var/lib/trafficincidents/old.sqlite", "/var/lib/trafficincidents/incidents.sqlite", "/var/lib/trafficincidents/incidents.sqlite"),
              ("postgresql://ingest@db.internal/incidents", "host=db.internal dbname=other user=ingest", "postgresql://ingest@db.internal/other"),
              ("postgresql://reader@db.internal:5433/incidents", "postgresql://ingest@db.internal/incidents", "postgresql://ingest@db.internal/incidents"),
          ])
    func disagreement(option: String, configured: String, shown: String) throws {
        let config = try Self.configuration(database: configured)
        let arguments = try Self.parsed(["--database", option, "--config", config])
        for loaded in [nil, configured] {  // read from --config, or passed by a command that loaded it
            let error = #expect(throws: ConfigurationError.self) { try Self.context().databasePath(arguments, configured: loaded) }
            #expect(error?.message.hasPrefix("--database ") == true)
            #expect(error?.message.contains("is not the configuration's database \(shown) (\(config))") == true, "\(error?.message ?? "")")
            #expect(Failure(try #require(error), commandPath: ["run"]).status == 78)
        }
    }

    @Test("the same database however written is no disagreement: ./, .., a symbolic link, the same PostgreSQL server and database, as another role (a reader on a scheduler's host)")
    func agreement() throws {
        let directory = try TestPaths.temporaryDirectory("same")
        let file = directory.appendingPathComponent("incidents.sqlite").path
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("sub").path, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path)
        for (option, configured) in [(file, file), (directory.path + "/./incidents.sqlite", file), (directory.path + "/sub/../incidents.sqlite", file),
                                     (link + "/incidents.sqlite", file),
                                     ("postgresql://ingest@db.internal/incidents", "host=db.internal dbname=incidents user=ingest"),
                                     ("postgresql://incidents_reader@db.internal/incidents", "postgresql://incidents_writer@db.internal/incidents"),
                                     ("postgresql://db.internal:5432/incidents", "host=db.internal port=5432 dbname=incidents user=ingest")] {
            let arguments = try Self.parsed(["--database", option, "--config", try Self.configuration(database: configured)])
            #expect(try Self.context().databasePath(arguments) == option)
        }
    }

    @Test("without --config, /etc/trafficincidents/config.json is read when it exists: its database, and a --database must agree")
    func defaultConfiguration() throws {
        let config = try Self.configuration(database: "/srv/incidents.sqlite")
        let context = Self.context(["INCIDENTS_DATABASE": "/env.sqlite"], defaultConfiguration: config)
        #expect(try context.configurationFile(try Self.parsed([])) == config)
        #expect(try context.databasePath(try Self.parsed([])) == "/srv/incidents.sqlite")
        #expect(throws: ConfigurationError.self) { try context.databasePath(try Self.parsed(["--database", "/private.sqlite"])) }
        // When it does not exist: no configuration, the environment's database.
        let absent = Self.context(["INCIDENTS_DATABASE": "/env.sqlite"])
        #expect(try absent.configurationFile(try Self.parsed([])) == nil)
        #expect(try absent.databasePath(try Self.parsed([])) == "/env.sqlite")
    }

    // MARK: --env-file

    static func envFile(_ text: String) throws -> String {
        let file = try TestPaths.temporaryDirectory("env").appendingPathComponent("keys.env")
        try Data(text.utf8).write(to: file)
        return file.path
    }

    @Test("an environment file: NAME=value lines, comments, blank lines, export, quotes, CRLF; its values win over the environment")
    func environmentFile() throws {
        let path = try Self.envFile("""
            # keys for the scheduler\r
            GITS_SERVICE_KEY=abc%2Bdef%3D%3D\r

              ITS_API_KEY='a b$c'
            export OTHER="x+y/z=="
            EMPTY=
            """)
        let read = try EnvironmentFile.read(path)
        #expect(read.map(\.name) == ["GITS_SERVICE_KEY", "ITS_API_KEY", "OTHER", "EMPTY"])
        #expect(read.map(\.value) == ["abc%2Bdef%3D%3D", "a b$c", "x+y/z==", ""])
        let context = try Self.context(["GITS_SERVICE_KEY": "old", "HOME": "/home/u"]).loadingEnvironmentFile(try Self.parsed(["--env-file", path]))
        #expect(context.environment["GITS_SERVICE_KEY"] == "abc%2Bdef%3D%3D" && context.environment["HOME"] == "/home/u")
        // Without the option, the environment as it is.
        #expect(try Self.context(["A": "1"]).loadingEnvironmentFile(try Self.parsed([])).environment == ["A": "1"])
    }

    @Test("a bad line is a configuration error (78) naming the file, the line and the variable, never the value", arguments: [
        ("KEY=s3cr3t-value\nno equals s3cr3t-value\n", 2, "no '='"),
        ("1KEY=s3cr3t-value\n", 1, "'1KEY' is not a variable name"),
        ("GITS KEY=s3cr3t-value\n", 1, "'GITS KEY' is not a variable name"),
        ("KEY='s3cr3t-value\n", 1, "the value of KEY opens a quote it does not close"),
        ("KEY=s3cr3t-value x\n", 1, "the value of KEY has a space or a character a shell would read"),
        ("KEY=s3cr3t-$value\n", 1, "the value of KEY has a space or a character a shell would read"),
        ("KEY=\"s3cr3t-$value\"\n", 1, "the value of KEY has $, ` or \\ inside double quotes"),
    ] as [(String, Int, String)])
    func badLine(text: String, line: Int, problem: String) throws {
        let path = try Self.envFile(text)
        let error = #expect(throws: ConfigurationError.self) { try EnvironmentFile.read(path) }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("the environment file \(path) (--env-file), line \(line): \(problem)"), "\(message)")
        #expect(!message.contains("s3cr3t"), "\(message)")
        #expect(Failure(try #require(error), commandPath: ["run"]).status == 78)
    }

    @Test("a missing, unreadable or oversized environment file is a configuration error naming it")
    func unusableFile() throws {
        let directory = try TestPaths.temporaryDirectory("envfile")
        let missing = directory.appendingPathComponent("missing.env").path
        #expect(throws: ConfigurationError("the environment file \(missing) (--env-file) does not exist; create it (docs/operator.md, \"Configure a key and the sources\")")) {
            try EnvironmentFile.read(missing)
        }
        #expect(throws: ConfigurationError("cannot read the environment file \(directory.path) (--env-file): Is a directory; "
                                           + "make it readable by the user that runs this (mode 0640, group trafficincidents)")) {
            try EnvironmentFile.read(directory.path)
        }
        #expect(throws: ConfigurationError("the environment file /dev/zero (--env-file) is larger than 64 KB; it holds lines NAME=value")) {
            try EnvironmentFile.read("/dev/zero")
        }
    }
}

/// Every hint names real configuration fields, commands and flags (issue 20, point 6: the
/// timeout hint said `requestTimeout`, a field that does not exist; the field is `timeout`).
@Suite("Hints")
struct HintTests {
    /// Every advice text the program appends to an error.
    static func hints() -> [String] {
        let codes: [NetworkError.Code] = [.invalidRequest, .cannotConnect, .connectionLost, .timedOut, .attemptTimedOut, .bodyTruncated,
                                          .bodyTooLarge, .tooManyRedirects, .cancelled, .transport]
            + [401, 403, 404, 408, 418, 429, 500].map(NetworkError.Code.unacceptableStatus)
        let network = codes.map { ErrorText.describe(NetworkError(code: $0, label: "gits", method: .get, url: "https://example.invalid/", attempts: 1)) }
        let kinds: [FeedError.Kind] = [.apiError, .gatewayError, .invalidKey, .quotaExceeded, .unexpectedResponse, .malformedBody,
                                       .invalidRecord, .unreadableFile, .configuration, .missingKey]
        var feed: [String] = []
        for kind in kinds {
            for origin in [FeedOrigin.live, .file(path: "/x", complete: false)] {
                feed.append(ErrorText.describe(FeedError(kind, provider: "gits", message: "m"), origin: origin))
            }
        }
        let others = [StoreMissing(database: "/x.sqlite").description, MigrationsPending(database: "/x.sqlite", names: ["0011_x"]).description]
        return network + feed + others
    }

    /// A value of each field hints may name, to check that a configuration with it loads.
    static let samples: [String: (provider: String, json: String)] = [
        "timeout": ("gits", #""20s""#), "attemptTimeout": ("gits", #""2m""#), "baseURL": ("gits", #""http://127.0.0.1:9/api/""#),
        "keyEnv": ("gits", #""K""#), "keyFile": ("gits", #""key.txt""#), "retry": ("gits", #"{"maxRetries": 2}"#),
        "bbox": ("its", "[126.76, 37.41, 127.18, 37.70]"),
    ]

    @Test("the trial's example: a timed-out request names the source's `timeout`, not requestTimeout")
    func timeoutHint() {
        let text = ErrorText.describe(NetworkError(code: .timedOut, label: "gits", method: .get, url: "https://openapigits.gg.go.kr/api/rest/getIncidentInfo",
                                                   attempts: 4, detail: "no byte for 30 s"))
        #expect(text == "gits: timed out after 4 attempts (no byte for 30 s); the server is slow or unreachable; retry later; if this repeats, raise the source's `timeout`; GET https://openapigits.gg.go.kr/api/rest/getIncidentInfo")
        // Cut at 80 columns, the line still says what is wrong.
        #expect(text.prefix(80).contains("timed out"))
    }

    @Test("each field a hint names parses in a configuration; each command and flag exists")
    func hintsNameRealThings() throws {
        let context = Context(environment: ["K": "k"], clock: .fixed(UTCInstant(secondsSince1970: 0)), output: { _ in })
        let tools = [SchedulerTool.command(context), QueryTool.command(context)]
        let directory = try TestPaths.temporaryDirectory("hints")
        try "k\n".write(to: directory.appendingPathComponent("key.txt"), atomically: true, encoding: .utf8)
        var named = Set<String>()
        for hint in Self.hints() {
            let parts = hint.split(separator: "`", omittingEmptySubsequences: false)
            for token in stride(from: 1, to: parts.count - 1, by: 2).map({ String(parts[$0]) }) {
                named.insert(token)
                let words = token.split(separator: " ").map(String.init)
                if let tool = tools.first(where: { $0.name == words.first }) {
                    let command = try #require(tool.subcommands.first { $0.name == words.dropFirst().first }, "\(token) in: \(hint)")
                    for flag in words.dropFirst(2) where flag.hasPrefix("--") {
                        #expect(command.options.contains { "--" + $0.name == flag }, "\(token) in: \(hint)")
                    }
                    continue
                }
                let sample = try #require(Self.samples[token], "a hint names '\(token)', which is no configuration field here: \(hint)")
                let key = token == "keyEnv" || token == "keyFile" ? "" : #", "keyEnv": "K""#
                let file = directory.appendingPathComponent("\(token).json")
                try #"{"sources": [{"name": "s", "provider": "\#(sample.provider)"\#(key), "\#(token)": \#(sample.json)}]}"#
                    .write(to: file, atomically: true, encoding: .utf8)
                #expect(throws: Never.self, "\(token)") { try Configuration.load(from: file, environment: ["K": "k"]) }
            }
        }
        #expect(named.isSuperset(of: ["timeout", "attemptTimeout", "baseURL", "keyEnv", "keyFile", "retry"]), "\(named)")
    }
}
