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

    static let defaultConcurrency = 4
    static let maxConcurrency = 64

    init(database: String? = nil, sources: [SourceDefinition]) {
        self.database = database
        self.sources = sources
    }

    /// The fields of the file's top level.
    static let fields = ["database", "deadline", "retention", "concurrency", "sources"]
    /// The fields every source may have, whatever its provider.
    static let sourceFields = ["name", "provider", "keyEnv", "keyFile", "baseURL", "interval", "timeout", "attemptTimeout", "retry"]
    /// The fields of a source's `retry`.
    static let retryFields = ["maxRetries", "baseDelay", "factor", "maxDelay", "jitter", "maxRetryAfter"]

    /// Loads and validates a configuration file.
    /// - Throws: ``ConfigurationError`` naming the file, the field and what to do.
    ///
    /// - Parameter requireKeys: when false (file replays, listings), a key variable or file that
    ///   is missing leaves the source without a key instead of failing.
    static func load(from url: URL, environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        let file = try read(url)
        try file.refuseUnknownFields(known: fields)
        var sources: [SourceDefinition] = []
        for (index, value) in (try file.list("sources") ?? []).enumerated() {
            let place = "\(url.path): sources[\(index)]"
            let object = try ConfigObject(value, place: place)
            let named = ConfigObject(fields: object.fields, place: "\(place) (\(try object.requiredText("name")))")
            sources.append(try definition(of: named, environment: environment, baseDirectory: url.deletingLastPathComponent(),
                                          requireKeys: requireKeys))
        }
        var configuration = Configuration(database: try file.text("database"), sources: sources)
        configuration.deadlineSeconds = try file.duration("deadline") ?? 900
        configuration.retentionSeconds = try file.duration("retention")
        if let concurrency = try file.integer("concurrency") {
            guard (1...maxConcurrency).contains(concurrency) else {
                throw file.problem("concurrency", "must be 1 to \(maxConcurrency)")
            }
            configuration.concurrency = concurrency
        }
        try configuration.validate(place: url.path)
        return configuration
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

    private static func read(_ url: URL) throws -> ConfigObject {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationError("cannot read configuration file \(url.path): \((error as NSError).localizedDescription)")
        }
        return try ConfigObject.parse(data, file: url.path)
    }

    /// The configuration used without `--config`: one GITS source keyed by `GITS_SERVICE_KEY`
    /// (and `GITS_BASE_URL`, when set, overriding the provider's URL).
    /// - Throws: ``ConfigurationError`` when the variable is not set.
    static func fromEnvironment(_ environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        guard environment["GITS_SERVICE_KEY"]?.isEmpty == false || !requireKeys else {
            throw ConfigurationError("no sources configured: set GITS_SERVICE_KEY to your GITS service key, or pass --config FILE (see README.md, \"Configuration\")")
        }
        var fields: [String: ConfigValue] = ["name": .text("gits"), "provider": .text("gits"), "keyEnv": .text("GITS_SERVICE_KEY")]
        fields["baseURL"] = environment["GITS_BASE_URL"].map(ConfigValue.text)
        return Configuration(sources: [try definition(of: ConfigObject(fields: fields, place: "environment"), environment: environment,
                                                      baseDirectory: URL(fileURLWithPath: "."), requireKeys: requireKeys)])
    }

    /// One source: the common fields, then its provider's options as the provider declares them.
    static func definition(of source: ConfigObject, environment: [String: String], baseDirectory: URL,
                           requireKeys: Bool) throws -> SourceDefinition {
        let place = source.place
        let providerName = try source.requiredText("provider")
        guard let provider = ProviderRegistry.provider(named: providerName) else {
            throw ConfigurationError("\(place): unknown provider '\(providerName)' (known: \(ProviderRegistry.names.joined(separator: ", ")))")
        }
        try source.refuseUnknownFields(known: sourceFields + provider.options.map(\.name), what: " for provider \(providerName)")
        var definition = SourceDefinition(name: try source.requiredText("name").nfc,
                                          provider: providerName)
        switch (try source.text("keyEnv"), try source.text("keyFile")) {
        case (let variable?, nil):
            guard let value = environment[variable], !value.isEmpty else {
                if !requireKeys { break }
                throw ConfigurationError("\(place): the environment variable \(variable) (keyEnv) is not set; export it with the API key")
            }
            definition.key = try key(value, from: "the environment variable \(variable)", place: place)
        case (nil, let path?):
            let url = URL(fileURLWithPath: path, relativeTo: baseDirectory)
            let text: String
            do {
                text = try String(contentsOf: url, encoding: .utf8)
            } catch {
                if !requireKeys { break }
                throw ConfigurationError("\(place): cannot read the key file \(url.path) (keyFile): \((error as NSError).localizedDescription); put the API key in it on one line, readable by this user")
            }
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                if !requireKeys { break }
                throw ConfigurationError("\(place): the key file \(url.path) (keyFile) is empty; put the API key in it on one line")
            }
            definition.key = try key(text, from: "the key file \(url.path)", place: place)
        case (nil, nil):
            break
        case (.some, .some):
            throw ConfigurationError("\(place): give either keyEnv or keyFile, not both")
        }
        if let text = try source.text("baseURL") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  url.host != nil else {
                throw ConfigurationError("\(place): baseURL '\(Redaction.redact(text))' is not an http(s) URL")
            }
            // A password in the URL (`http://user:secret@proxy/…`) is a secret like a key.
            Redaction.register(passwordIn: url)
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

    /// An API key: one line without spaces (surrounding whitespace and the final newline of a
    /// key file are ignored). A key with a space or a second line is a mistake, not a key.
    static func key(_ text: String, from origin: String, place: String) throws -> APIKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.contains(where: \.isWhitespace) else {
            throw ConfigurationError("\(place): \(origin) holds more than one word or line; it must hold just the API key")
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
        var seen = Set<String>()
        for source in sources {
            guard !source.name.isEmpty, source.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw ConfigurationError("\(place): source name '\(source.name)' must be letters, digits, '-', '_' or '.'")
            }
            guard seen.insert(source.name).inserted else {
                throw ConfigurationError("\(place): two sources are named '\(source.name)'; names must be unique")
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
