import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// The scheduler's configuration: the database and the sources to poll.
///
/// Read from a JSON file (`--config FILE`):
/// ```json
/// {"database": "/var/lib/trafficincidents/incidents.sqlite",
///  "sources": [{"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY",
///               "baseURL": "http://127.0.0.1:8080/api/rest/", "interval": "5m"}]}
/// ```
/// Without a file, one GITS source is configured from the `GITS_SERVICE_KEY` environment
/// variable. API keys are never in the file itself: `keyEnv` names an environment variable and
/// `keyFile` a file that holds the key. A source's fields are the common ones
/// (``sourceFields``) and its provider's options (``FeedProvider/options``); any other field is
/// an error.
struct Configuration: Sendable {
    /// From the file's `database`; nil when not given.
    var database: String?
    var sources: [SourceDefinition]
    /// `deadline`: seconds a whole `run --once` may take; sources still running then are
    /// cancelled and those not started skipped (nothing of theirs is stored). Default 15 minutes.
    var deadlineSeconds: Int64 = 900
    /// `retention`: after each run, prune incidents cleared and runs finished longer ago than
    /// this many seconds. nil (the default) keeps everything.
    var retentionSeconds: Int64?
    /// `concurrency`: at most this many sources are polled at a time. Default 4.
    var concurrency = Configuration.defaultConcurrency
    /// `lease`: how long a scheduler sharing a PostgreSQL store holds a source's lease without
    /// renewing it (renewed every third of it while the poll runs): a host that dies or is cut
    /// off leaves its sources to the others after this long. Default 60 s.
    var leaseSeconds: Int64 = 60
    /// Sources left without a key, and why, in configuration order (only when keys were not
    /// required: `check-config`, `sources`, `ingest`; `run` fails on the first instead).
    var keyProblems: [KeyProblem] = []
    /// `watches`: the change feed's deliveries to webhooks and commands (docs/analyst.md, "Watches").
    var watches: [WatchDefinition] = []
    /// `watchState`: the file in which an earlier version kept each watch's cursor, taken over
    /// into the database (``WatchPositions``) by the next run; nil: `DATABASE.watches` beside a
    /// SQLite database (``Configuration/legacyWatchState(database:)``).
    var watchState: String?
    /// Watches left without their signing secret (only when keys were not required; shown and
    /// refused by `check-config` as key problems are).
    var secretProblems: [ConfigurationError] = []

    static let defaultConcurrency = 4
    static let maxConcurrency = 64

    init(database: String? = nil, sources: [SourceDefinition]) {
        self.database = database
        self.sources = sources
    }

    /// Query parameter names that carry credentials by convention, besides the providers' own
    /// key parameters: refused in a `baseURL`.
    static let credentialParameterNames = ["apikey", "api_key", "key", "servicekey", "token", "access_token", "password", "secret"]

    /// The fields of the file's top level.
    static let fields = ["database", "deadline", "retention", "concurrency", "lease", "sources", "watches", "watchState"]
    /// The fields every source may have, whatever its provider.
    static let sourceFields = ["name", "provider", "keyEnv", "keyFile", "baseURL", "interval", "timeout", "attemptTimeout", "retry"]
    /// The fields of a source's `retry`.
    static let retryFields = ["maxRetries", "baseDelay", "factor", "maxDelay", "jitter", "maxRetryAfter"]

    /// Loads and validates a configuration file.
    /// - Throws: ``ConfigurationError`` naming the file, the field and what to do.
    ///
    /// - Parameter requireKeys: when false (file replays, listings), a key variable or file that
    ///   is missing or wrong leaves the source without a key, the reason in ``keyProblems``,
    ///   instead of failing.
    static func load(from url: URL, environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        let file = try read(url)
        try file.refuseUnknownFields(known: fields)
        var sources: [SourceDefinition] = []
        var keyProblems: [KeyProblem] = []
        for (index, value) in (try file.list("sources") ?? []).enumerated() {
            let place = "\(url.path): sources[\(index)]"
            let object = try ConfigObject(value, place: place)
            let named = ConfigObject(fields: object.fields, place: "\(place) (\(try object.requiredText("name")))")
            sources.append(try definition(of: named, environment: environment, baseDirectory: url.deletingLastPathComponent(),
                                          requireKeys: requireKeys, keyProblems: &keyProblems))
        }
        let database = try file.text("database")
        if let database, database.trimmingCharacters(in: .whitespaces).isEmpty {
            throw file.problem("database", "is empty; give the SQLite file or the PostgreSQL connection string, or remove the field for the default")
        }
        var configuration = Configuration(database: database, sources: sources)
        configuration.keyProblems = keyProblems
        configuration.deadlineSeconds = try file.duration("deadline") ?? 900
        configuration.retentionSeconds = try file.duration("retention")
        if let lease = try file.duration("lease") {
            guard lease >= 3 else { throw file.problem("lease", "must be at least 3s (it is renewed every third of it)") }
            configuration.leaseSeconds = lease
        }
        if let concurrency = try file.integer("concurrency") {
            guard (1...maxConcurrency).contains(concurrency) else {
                throw file.problem("concurrency", "must be 1 to \(maxConcurrency)")
            }
            configuration.concurrency = concurrency
        }
        for (index, value) in (try file.list("watches") ?? []).enumerated() {
            let object = try ConfigObject(value, place: "\(url.path): watches[\(index)]")
            let named = ConfigObject(fields: object.fields, place: "\(object.place) (\(try object.requiredText("name")))")
            configuration.watches.append(try WatchDefinition.read(named, environment: environment, now: UTCInstant(secondsSince1970: Int64(Date().timeIntervalSince1970)),
                                                                  baseDirectory: url.deletingLastPathComponent(),
                                                                  requireSecret: requireKeys, secretProblems: &configuration.secretProblems))
        }
        configuration.watchState = try file.text("watchState").map { URL(fileURLWithPath: $0, relativeTo: url.deletingLastPathComponent()).path }
        try configuration.validate(place: url.path)
        return configuration
    }

    /// The file in which an earlier version kept the watches' cursors, to be taken over into
    /// the database: `watchState`, else `DATABASE.watches` beside a SQLite database; nil for
    /// PostgreSQL without `watchState`.
    func legacyWatchState(database: String) -> String? {
        watchState ?? (Stores.isPostgreSQL(database) ? nil : database + ".watches")
    }

    /// Whether `source` has its key, as `check-config` and `sources` both show it (issue 20:
    /// they disagreed about a key file that could not be read): `set`, `none` (a provider
    /// whose key is optional, and none given), or the problem's kind in capitals (`MISSING`,
    /// `UNREADABLE`, `INVALID`, from ``keyProblems``).
    func keyState(of source: SourceDefinition) -> String {
        if let problem = keyProblems.first(where: { $0.source == source.name }) { return problem.kind.rawValue.uppercased() }
        return source.key == nil ? "none" : "set"
    }

    /// `--concurrency` text: a whole number from 1 to ``maxConcurrency``; nil otherwise.
    static func concurrency(_ text: String) -> Int? {
        Int(text).flatMap { (1...maxConcurrency).contains($0) ? $0 : nil }
    }

    /// Only the `database` field of a configuration file (for commands that need no sources).
    /// - Throws: ``ConfigurationError`` when the file cannot be read or is not JSON.
    static func databaseSetting(in path: String) throws -> String? {
        try read(URL(fileURLWithPath: path)).text("database")
    }

    /// The key files the sources of the configuration file at `path` name (`keyFile`, resolved
    /// against the file's directory, as ``load(from:environment:requireKeys:)`` reads them).
    /// - Throws: ``ConfigurationError`` when the file cannot be read or is not JSON.
    static func keyFiles(in path: String) throws -> [String] {
        let url = URL(fileURLWithPath: path)
        return try (try read(url).list("sources") ?? []).enumerated().compactMap { index, value in
            try ConfigObject(value, place: "\(path): sources[\(index)]").text("keyFile")
                .map { URL(fileURLWithPath: $0, relativeTo: url.deletingLastPathComponent()).path }
        }
    }

    private static func read(_ url: URL) throws -> ConfigObject {
        switch FileText.read(url.path, limit: 1 << 20) {
        case .text(let text):
            return try ConfigObject.parse(Data(text.utf8), file: url.path)
        case .missing:
            throw ConfigurationError("the configuration file \(url.path) does not exist; check --config (an example: docs/operator.md, \"Configure a key and the sources\")")
        case .unreadable(let reason):
            throw ConfigurationError("cannot read the configuration file \(url.path): \(reason); make it a file this user may read")
        case .notText(let reason):
            throw ConfigurationError("the configuration file \(url.path) \(reason); it must be a JSON text file in UTF-8 (check --config)")
        }
    }

    /// The configuration used without `--config`: one GITS source keyed by `GITS_SERVICE_KEY`
    /// (and `GITS_BASE_URL`, when set, overriding the provider's URL).
    /// - Throws: ``ConfigurationError`` when the variable is not set, whatever the command: a
    ///   listing without configuration shows no imaginary source (issue 20).
    static func fromEnvironment(_ environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        guard environment["GITS_SERVICE_KEY"]?.isEmpty == false else {
            throw ConfigurationError("no sources configured: no --config, no \(Context.systemConfigurationFile), and GITS_SERVICE_KEY is not set; "
                                     + "pass --config FILE or create \(Context.systemConfigurationFile) (see docs/operator.md, \"Configure a key and the sources\")")
        }
        var fields: [String: ConfigValue] = ["name": .text("gits"), "provider": .text("gits"), "keyEnv": .text("GITS_SERVICE_KEY")]
        fields["baseURL"] = environment["GITS_BASE_URL"].map(ConfigValue.text)
        var keyProblems: [KeyProblem] = []
        var configuration = Configuration(sources: [try definition(of: ConfigObject(fields: fields, place: "environment"),
                                                                   environment: environment, baseDirectory: URL(fileURLWithPath: "."),
                                                                   requireKeys: requireKeys, keyProblems: &keyProblems)])
        configuration.keyProblems = keyProblems
        return configuration
    }

    /// One source: the common fields, then its provider's options as the provider declares them.
    /// - Parameter keyProblems: when keys are not required, why a source has no key is
    ///   appended here instead of being thrown.
    static func definition(of source: ConfigObject, environment: [String: String], baseDirectory: URL,
                           requireKeys: Bool, keyProblems: inout [KeyProblem]) throws -> SourceDefinition {
        let place = source.place
        let providerName = try source.requiredText("provider")
        guard let provider = ProviderRegistry.provider(named: providerName) else {
            throw ConfigurationError("\(place): unknown provider '\(providerName)' (known: \(ProviderRegistry.names.joined(separator: ", ")))")
        }
        try source.refuseUnknownFields(known: sourceFields + provider.options.map(\.name), what: " for provider \(providerName)")
        var definition = SourceDefinition(name: try source.requiredText("name").nfc,
                                          provider: providerName)
        // A provider whose key is optional (Open511, WZDx) reads one only when a field names it.
        if provider.requiresKey || source["keyEnv"] != nil || source["keyFile"] != nil {
            do {
                definition.key = try key(of: source, environment: environment, baseDirectory: baseDirectory)
            } catch var problem as KeyProblem {
                if requireKeys { throw problem.error }
                problem.source = definition.name
                keyProblems.append(problem)
            }
        }
        if let text = try source.text("baseURL") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  url.host != nil else {
                throw ConfigurationError("\(place): baseURL '\(Redaction.redact(text))' is not an http(s) URL")
            }
            // A password in the URL (`http://user:secret@proxy/…`) is a secret like a key.
            Redaction.register(passwordIn: url)
            // A key written into the URL would be stored in the configuration, shown by every
            // command, and sent twice by providers that add their own.
            let credentialNames = Set((ProviderRegistry.all.flatMap { $0.keyParameterNames } + Self.credentialParameterNames).map { $0.lowercased() })
            if let named = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
                .first(where: { credentialNames.contains($0.name.lowercased()) && !($0.value ?? "").isEmpty }) {
                if let value = named.value { Redaction.register(secret: value) }
                throw ConfigurationError("\(place): baseURL carries a key in its query parameter '\(named.name)'; keys never go in the "
                                         + "configuration: remove it from baseURL and give it with keyEnv or keyFile")
            }
            definition.baseURL = url
        }
        if let seconds = try source.duration("interval") {
            definition.intervalSeconds = seconds
        }
        if let seconds = try source.duration("timeout") {
            definition.requestTimeoutSeconds = Double(seconds)
        }
        if let seconds = try source.duration("attemptTimeout") {
            definition.attemptTimeoutSeconds = Double(seconds)
        }
        if let retry = try source.object("retry") {
            definition.retryPolicy = try retryPolicy(retry)
        }
        for option in provider.options {
            guard let value = source[option.name] else { continue }
            do {
                try definition.options.set(option, from: value)
            } catch {
                throw ConfigurationError("\(place): \(option.name) \(error.message)")
            }
        }
        return definition
    }

    /// The source's API key from its `keyEnv` variable or its `keyFile`.
    /// - Throws: ``KeyProblem`` saying exactly what is wrong and what to do: neither field, the
    ///   variable unset or empty, the file missing, unreadable (with the system's reason) or
    ///   empty, or text that is not one word; ``ConfigurationError`` when both fields are given.
    static func key(of source: ConfigObject, environment: [String: String], baseDirectory: URL) throws -> APIKey {
        let place = source.place
        func problem(_ kind: KeyProblem.Kind, _ text: String) -> KeyProblem {
            KeyProblem(kind: kind, error: ConfigurationError("\(place): \(text)"))
        }
        switch (try source.text("keyEnv"), try source.text("keyFile")) {
        case (let variable?, nil):
            guard !variable.isEmpty else {
                throw problem(.missing, "keyEnv is empty; give the name of the environment variable that holds the API key")
            }
            // A key pasted where its variable's name goes must not be echoed into a log.
            guard EnvironmentFile.isVariableName(variable) else {
                throw problem(.invalid, "keyEnv is not the name of an environment variable (letters, digits and _, not starting with a digit); "
                              + "it is not shown, since it may be the key itself: put the key in a variable and give its name")
            }
            guard let value = environment[variable] else {
                throw problem(.missing, "the environment variable \(variable) (keyEnv) is not set; export it with the API key")
            }
            guard !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw problem(.missing, "the environment variable \(variable) (keyEnv) is empty; set it to the API key")
            }
            return try key(value, from: "the environment variable \(variable)", problem)
        case (nil, let path?):
            let file = URL(fileURLWithPath: path, relativeTo: baseDirectory).path
            let text: String
            switch FileText.read(file, limit: 64 << 10) {
            case .text(let read): text = read
            case .missing:
                throw problem(.missing, "the key file \(file) (keyFile) does not exist; create it with the API key on one line")
            case .unreadable(let reason):
                throw problem(.unreadable, "cannot read the key file \(file) (keyFile): \(reason); make it a file this user may read")
            case .notText(let reason):
                throw problem(.invalid, "the key file \(file) (keyFile) \(reason); it must hold just the API key on one line")
            }
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw problem(.missing, "the key file \(file) (keyFile) is empty; put the API key in it on one line")
            }
            return try key(text, from: "the key file \(file)", problem)
        case (nil, nil):
            throw problem(.missing, "no keyEnv or keyFile: name the environment variable (keyEnv) or the file (keyFile) that holds the API key")
        case (.some, .some):
            throw ConfigurationError("\(place): give either keyEnv or keyFile, not both")
        }
    }

    /// An API key: one line without spaces (surrounding whitespace and the final newline of a
    /// key file are ignored). A key with a space or a second line is a mistake, not a key.
    private static func key(_ text: String, from origin: String,
                            _ problem: (KeyProblem.Kind, String) -> KeyProblem) throws -> APIKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.contains(where: \.isWhitespace) else {
            throw problem(.invalid, "\(origin) holds more than one word or line; it must hold just the API key")
        }
        return APIKey(trimmed)
    }

    /// The retry policy of a source's `retry` (defaults for what is not given; delays in
    /// seconds), each value within sane bounds.
    static func retryPolicy(_ retry: ConfigObject) throws -> RetryPolicy {
        try retry.refuseUnknownFields(known: retryFields)
        let d = RetryPolicy.default
        let policy = (maxRetries: try retry.integer("maxRetries") ?? d.maxRetries, baseDelay: try retry.number("baseDelay") ?? d.baseDelay,
                      factor: try retry.number("factor") ?? d.factor, maxDelay: try retry.number("maxDelay") ?? d.maxDelay,
                      maxRetryAfter: try retry.number("maxRetryAfter") ?? d.maxRetryAfter)
        let problems = [
            (0...10).contains(policy.maxRetries) ? nil : "maxRetries must be 0 to 10",
            (0...60).contains(policy.baseDelay) ? nil : "baseDelay must be 0 to 60 (seconds)",
            (1...10).contains(policy.factor) ? nil : "factor must be 1 to 10",
            (0...600).contains(policy.maxDelay) ? nil : "maxDelay must be 0 to 600 (seconds)",
            (0...3600).contains(policy.maxRetryAfter) ? nil : "maxRetryAfter must be 0 to 3600 (seconds)",
        ].compactMap { $0 }
        if let problem = problems.first { throw ConfigurationError("\(retry.place): \(problem)") }
        return RetryPolicy(maxRetries: policy.maxRetries, baseDelay: policy.baseDelay, factor: policy.factor,
                           maxDelay: policy.maxDelay, jitter: try retry.choice("jitter", RetryPolicy.Jitter.self) ?? d.jitter,
                           maxRetryAfter: policy.maxRetryAfter)
    }

    func validate(place: String) throws {
        guard !sources.isEmpty else { throw ConfigurationError("\(place): no sources; add at least one to \"sources\"") }
        try Self.validateNames(sources.map(\.name), of: "source", place: place)
        try Self.validateNames(watches.map(\.name), of: "watch", place: place)
    }

    /// Refuses a name that is not letters, digits, '-', '_' or '.', and a name given twice.
    private static func validateNames(_ names: [String], of what: String, place: String) throws {
        var seen = Set<String>()
        for name in names {
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw ConfigurationError("\(place): \(what) name '\(name)' must be letters, digits, '-', '_' or '.'")
            }
            guard seen.insert(name).inserted else {
                throw ConfigurationError("\(place): two \(what == "watch" ? "watches" : what + "s") are named '\(name)'; names must be unique")
            }
        }
    }
}

/// An invalid or unreadable configuration: says which file and field, and what to do. Exit
/// status 78.
struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Why a source has no usable API key: the error `run` stops with, kept by commands that
/// list sources without requiring keys (`check-config` shows each).
struct KeyProblem: Error, Equatable, Sendable {
    enum Kind: String, Sendable {
        /// No key field, an unset or empty variable, a missing or empty file.
        case missing
        /// The key file exists but cannot be read.
        case unreadable
        /// The text is not one word.
        case invalid
    }

    /// The source's name (set once the source is named).
    var source = ""
    var kind: Kind
    var error: ConfigurationError
}

/// A text file read with the system's reason when it cannot be: for key and configuration
/// files, whose messages must say exactly what is wrong.
enum FileText {
    enum Outcome: Equatable {
        case text(String)
        /// No such file (`ENOENT`), or a directory on its path is missing (`ENOTDIR`).
        case missing
        /// Exists but cannot be read: `strerror(3)`'s text (`Permission denied`, `Is a
        /// directory`).
        case unreadable(String)
        /// Read, but not what the caller reads: larger than its limit (`/dev/zero`, a log
        /// named by mistake) or not UTF-8: `is larger than 1 MiB`, `is not UTF-8 text`.
        case notText(String)
    }

    /// Reads the UTF-8 text of the file at `path`, at most `limit` bytes (one byte more is
    /// read to tell a larger file, so a device or a huge file never fills the memory).
    static func read(_ path: String, limit: Int) -> Outcome {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable(String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        // open(2) succeeds on a directory; read(2) would fail with EISDIR.
        var status = stat()
        if fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR { return .unreadable(String(cString: strerror(EISDIR))) }
        var data = Data()
        do {
            while data.count <= limit, let chunk = try handle.read(upToCount: limit + 1 - data.count), !chunk.isEmpty {
                data.append(chunk)
            }
        } catch {
            return .unreadable((error as NSError).localizedDescription)
        }
        if data.count > limit { return .notText("is larger than \(ByteCountFormatter.string(fromByteCount: Int64(limit), countStyle: .binary))") }
        guard let text = String(data: data, encoding: .utf8) else { return .notText("is not UTF-8 text") }
        return .text(text)
    }
}
