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
/// `keyFile` a file that holds the key.
public struct Configuration: Sendable {
    /// From the file's `database`; nil when not given.
    public var database: String?
    public var sources: [SourceDefinition]
    /// `deadline`: seconds a whole `run --once` may take; sources still running then are
    /// cancelled (nothing of theirs is stored). Default 15 minutes.
    public var deadlineSeconds: Int64 = 900
    /// `retention`: after each run, prune incidents cleared and runs finished longer ago than
    /// this many seconds. nil (the default) keeps everything.
    public var retentionSeconds: Int64?

    public init(database: String? = nil, sources: [SourceDefinition]) {
        self.database = database
        self.sources = sources
    }

    /// The shape of the JSON file. Unknown fields are rejected by ``load(from:environment:)``
    /// so that a typo (`keyenv`) is an error instead of a silently missing key.
    struct File: Decodable {
        var database: String?
        var deadline: String?
        var retention: String?
        var sources: [Source]

        struct Source: Decodable {
            var name: String
            var provider: String
            var keyEnv: String?
            var keyFile: String?
            var baseURL: String?
            var interval: String?
            var bbox: [Double]?
            var eventType: String?
            var type: String?
            var format: String?
            var timeout: String?
            var retry: RetrySettings?
        }

        /// `retry`, as written (seconds as numbers); checked, then turned into a `RetryPolicy`.
        struct RetrySettings: Decodable {
            var maxRetries: Int?
            var baseDelay: Double?
            var factor: Double?
            var maxDelay: Double?
            var jitter: RetryPolicy.Jitter?
            var maxRetryAfter: Double?
        }

        static let fields = ["database", "deadline", "retention", "sources"]
        static let sourceFields = ["name", "provider", "keyEnv", "keyFile", "baseURL", "interval", "bbox",
                                   "eventType", "type", "format", "timeout", "retry"]
        static let retryFields = ["maxRetries", "baseDelay", "factor", "maxDelay", "jitter", "maxRetryAfter"]
    }

    /// Loads and validates a configuration file.
    /// - Throws: ``ConfigurationError`` naming the file, the field and what to do.
    ///
    /// - Parameter requireKeys: when false (file replays, listings), a key variable or file that
    ///   is missing leaves the source without a key instead of failing.
    public static func load(from url: URL, environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationError("cannot read configuration file \(url.path): \((error as NSError).localizedDescription)")
        }
        try checkFieldNames(data, file: url.path)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw ConfigurationError("\(url.path): \(describe(error))")
        }
        var sources: [SourceDefinition] = []
        for (index, source) in file.sources.enumerated() {
            let place = "\(url.path): sources[\(index)] (\(source.name))"
            sources.append(try definition(of: source, place: place, environment: environment,
                                          baseDirectory: url.deletingLastPathComponent(), requireKeys: requireKeys))
        }
        var configuration = Configuration(database: file.database, sources: sources)
        configuration.deadlineSeconds = try file.deadline.map { try duration($0, field: "deadline", place: url.path) } ?? 900
        configuration.retentionSeconds = try file.retention.map { try duration($0, field: "retention", place: url.path) }
        try configuration.validate(place: url.path)
        return configuration
    }

    /// Only the `database` field of a configuration file (for commands that need no sources).
    /// - Throws: ``ConfigurationError`` when the file cannot be read or is not JSON.
    static func databaseSetting(in path: String) throws -> String? {
        struct DatabaseOnly: Decodable { var database: String? }
        do {
            return try JSONDecoder().decode(DatabaseOnly.self, from: Data(contentsOf: URL(fileURLWithPath: path))).database
        } catch {
            throw ConfigurationError("cannot read the database setting of \(path): \(describe(error))")
        }
    }

    /// The configuration used without `--config`: one GITS source keyed by `GITS_SERVICE_KEY`
    /// (and `GITS_BASE_URL`, when set, overriding the provider's URL).
    /// - Throws: ``ConfigurationError`` when the variable is not set.
    public static func fromEnvironment(_ environment: [String: String], requireKeys: Bool = true) throws -> Configuration {
        guard environment["GITS_SERVICE_KEY"]?.isEmpty == false || !requireKeys else {
            throw ConfigurationError("no sources configured: set GITS_SERVICE_KEY to your GITS service key, or pass --config FILE (see README.md, \"Configuration\")")
        }
        let source = File.Source(name: "gits", provider: "gits", keyEnv: "GITS_SERVICE_KEY",
                                 baseURL: environment["GITS_BASE_URL"])
        return Configuration(sources: [try definition(of: source, place: "environment", environment: environment,
                                                      baseDirectory: URL(fileURLWithPath: "."), requireKeys: requireKeys)])
    }

    static func definition(of source: File.Source, place: String, environment: [String: String],
                           baseDirectory: URL, requireKeys: Bool) throws -> SourceDefinition {
        guard ProviderRegistry.provider(named: source.provider) != nil else {
            throw ConfigurationError("\(place): unknown provider '\(source.provider)' (known: \(ProviderRegistry.names.joined(separator: ", ")))")
        }
        var definition = SourceDefinition(name: source.name, provider: source.provider)
        switch (source.keyEnv, source.keyFile) {
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
                let reason = describe(error)
                throw ConfigurationError("\(place): cannot read the key file \(url.path) (keyFile): \(reason); put the API key in it on one line, readable by this user")
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
        if let text = source.baseURL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  url.host != nil else {
                throw ConfigurationError("\(place): baseURL '\(Redaction.redact(text))' is not an http(s) URL")
            }
            definition.baseURL = url
        }
        if let text = source.interval {
            definition.intervalSeconds = try duration(text, field: "interval", place: place)
        }
        if let text = source.timeout {
            definition.requestTimeoutSeconds = Double(try duration(text, field: "timeout", place: place))
        }
        if let retry = source.retry {
            definition.retryPolicy = try retryPolicy(retry, place: place)
        }
        definition.options = SourceOptions(bbox: source.bbox, eventType: source.eventType, roadType: source.type,
                                           format: source.format)
        do {
            try ProviderRegistry.validate(definition)
        } catch {
            throw ConfigurationError("\(place): \(error)")
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

    /// The retry policy of `settings` (defaults for what is not given), each within sane bounds.
    static func retryPolicy(_ settings: File.RetrySettings, place: String) throws -> RetryPolicy {
        let d = RetryPolicy.default
        let policy = (maxRetries: settings.maxRetries ?? d.maxRetries, baseDelay: settings.baseDelay ?? d.baseDelay,
                      factor: settings.factor ?? d.factor, maxDelay: settings.maxDelay ?? d.maxDelay,
                      maxRetryAfter: settings.maxRetryAfter ?? d.maxRetryAfter)
        let problems = [
            (0...10).contains(policy.maxRetries) ? nil : "maxRetries must be 0 to 10",
            (0...60).contains(policy.baseDelay) ? nil : "baseDelay must be 0 to 60 (seconds)",
            (1...10).contains(policy.factor) ? nil : "factor must be 1 to 10",
            (0...600).contains(policy.maxDelay) ? nil : "maxDelay must be 0 to 600 (seconds)",
            (0...3600).contains(policy.maxRetryAfter) ? nil : "maxRetryAfter must be 0 to 3600 (seconds)",
        ].compactMap { $0 }
        if let problem = problems.first { throw ConfigurationError("\(place): retry: \(problem)") }
        return RetryPolicy(maxRetries: policy.maxRetries, baseDelay: policy.baseDelay, factor: policy.factor,
                           maxDelay: policy.maxDelay, jitter: settings.jitter ?? d.jitter, maxRetryAfter: policy.maxRetryAfter)
    }

    static func duration(_ text: String, field: String, place: String) throws -> Int64 {
        do {
            return try ValueParsers.duration(text)
        } catch let error as UsageError {
            throw ConfigurationError("\(place): \(field): \(error.message)")
        }
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

    /// Rejects unknown field names, naming the closest known one.
    static func checkFieldNames(_ data: Data, file: String) throws {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw ConfigurationError("\(file) is not valid JSON: \(describe(error))")
        }
        guard let root = object as? [String: Any] else { throw ConfigurationError("\(file): the top level must be an object") }
        for key in root.keys where !File.fields.contains(key) {
            throw ConfigurationError("\(file): unknown field '\(key)' (known: \(File.fields.joined(separator: ", ")))")
        }
        for (index, source) in (root["sources"] as? [Any] ?? []).enumerated() {
            guard let source = source as? [String: Any] else { throw ConfigurationError("\(file): sources[\(index)] must be an object") }
            for key in source.keys.sorted() where !File.sourceFields.contains(key) {
                throw ConfigurationError("\(file): sources[\(index)]: unknown field '\(key)' (known: \(File.sourceFields.joined(separator: ", ")))")
            }
            for key in (source["retry"] as? [String: Any] ?? [:]).keys.sorted() where !File.retryFields.contains(key) {
                throw ConfigurationError("\(file): sources[\(index)].retry: unknown field '\(key)' (known: \(File.retryFields.joined(separator: ", ")))")
            }
        }
    }

    /// A decoding or reading error as one line for an operator: the field's path and what was
    /// expected, without Swift type names.
    static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the top level" : String(text.drop { $0 == "." })
        }
        func kind(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: "text"
            case is Double.Type, is Int.Type, is Int64.Type: "a number"
            case is Bool.Type: "true or false"
            case is [Any].Type: "a list"
            case is RetryPolicy.Jitter.Type: "one of \(RetryPolicy.Jitter.allCases.map(\.rawValue).joined(separator: ", "))"
            default: "an object"
            }
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)' in \(path(context))"
        case DecodingError.typeMismatch(let type, let context), DecodingError.valueNotFound(let type, let context):
            return "\(path(context)): expected \(kind(type))"
        case DecodingError.dataCorrupted(let context):
            let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            if context.codingPath.last?.stringValue == "jitter" {
                return "\(path(context)): expected one of \(RetryPolicy.Jitter.allCases.map(\.rawValue).joined(separator: ", "))"
            }
            return "\(path(context)): \(detail ?? context.debugDescription)"
        default:
            let ns = error as NSError
            let detail = ns.userInfo[NSDebugDescriptionErrorKey] as? String
            return detail.map { "\(ns.localizedDescription) (\($0))" } ?? ns.localizedDescription
        }
    }
}

/// An invalid configuration: says which file and field, and what to do. Exit status 78.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
