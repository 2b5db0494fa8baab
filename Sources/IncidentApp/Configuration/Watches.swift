import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// One watch of the configuration's `watches` (docs/analyst.md, "Watches"): the transitions of
/// the change feed it wants, of the incidents its filters match, delivered as JSON to its
/// target: POSTed to a webhook, each signed with HMAC-SHA256 under the secret its `secretEnv`
/// variable holds, or given on the standard input of a command.
///
/// ```json
/// {"name": "suwon", "near": "37.27,127.03", "radius": "3km", "category": ["accident"],
///  "transitions": ["appeared", "cleared"], "url": "https://hooks.example/incidents", "secretEnv": "SUWON_HOOK_SECRET"}
/// {"name": "log", "command": ["/usr/local/bin/incident-to-mqtt", "--topic", "roads"], "from": "start"}
/// ```
struct WatchDefinition: Sendable, Equatable {
    var name: String
    /// The filters (``filterFields``) as the CLI reads them; matched by the store's own query.
    var query: IncidentQuery
    /// Whether any filter was given (a quarantined record of no stored incident matches only a
    /// watch without filters, or one that names its source only).
    var filtersIncident: Bool
    /// The transition kinds delivered; all when the configuration names none.
    var kinds: Set<TransitionKind>
    var target: Target
    /// The signing secret (registered with ``Redaction``: never logged); empty for a command
    /// without `secretEnv`.
    var secret: String
    /// Each attempt's timeout, seconds (`timeout`, default 10 s): a POST is cut, a command killed.
    var timeoutSeconds: Double = 10
    /// Retries of a failed delivery within one delivery turn (`retry`, with a source's fields
    /// and defaults: ``RetryPolicy/default``).
    var retryPolicy = RetryPolicy.default
    /// Where the watch starts when the database does not know it yet (`from`: `end`, the
    /// default, `start`, or a cursor); a watch the database knows keeps its position.
    var start = WatchStart.end
    /// The watch as written (and its secret): what tells a changed watch at a reload.
    private var written: [String: ConfigValue] = [:]

    /// Where a watch's deliveries go.
    enum Target: Sendable, Equatable {
        /// POST to this http(s) URL.
        case webhook(URL)
        /// Run this program with these arguments (no shell), the change on its standard input.
        case command([String])
    }

    /// The filters a watch may have: the names of `incidents list`'s options.
    static let filterFields: [IncidentFilter.Parameter] = [.near, .radius, .bbox, .road, .category, .source]
    /// Every field of a watch.
    static let fields = ["name", "transitions", "url", "command", "secretEnv", "timeout", "retry", "from"] + filterFields.map(\.rawValue)

    static func == (a: WatchDefinition, b: WatchDefinition) -> Bool {
        a.written == b.written && a.secret == b.secret
    }

    /// Reads one watch.
    /// - Throws: ``ConfigurationError`` naming the watch and field: an unknown field (a filter
    ///   outside ``filterFields``), a filter value the CLI would refuse, an unknown transition,
    ///   a URL that is not http(s), a command that is no executable file, both or neither of
    ///   `url` and `command`, a secret variable missing or empty, a `from` that is not `start`,
    ///   `end` or a cursor.
    /// - Parameters:
    ///   - baseDirectory: a command's program given as a relative path is resolved here (the
    ///     configuration file's directory); a bare name is looked up in the environment's PATH.
    ///   - requireSecret: when false (`check-config`, `sources`, `ingest`, as for keys), a
    ///     missing secret is appended to `secretProblems` instead of thrown, and the watch has none.
    static func read(_ object: ConfigObject, environment: [String: String], now: UTCInstant, baseDirectory: URL,
                     requireSecret: Bool, secretProblems: inout [ConfigurationError]) throws -> WatchDefinition {
        try object.refuseUnknownFields(known: fields, what: " for a watch (its filters: \(filterFields.map(\.rawValue).joined(separator: ", ")))")
        let name = try object.requiredText("name")
        var parameters: [(name: String, values: [String])] = []
        for filter in filterFields {
            guard let value = object[filter.rawValue] else { continue }
            switch value {
            case .list(let items) where filter.kind == .repeatable:
                parameters.append((filter.rawValue, try items.map {
                    guard case .text(let text) = $0 else { throw object.problem(filter.rawValue, "expected text or a list of text") }
                    return text
                }))
            default:
                guard let text = try object.text(filter.rawValue) else { continue }
                parameters.append((filter.rawValue, [text]))
            }
        }
        let query: IncidentQuery
        do {
            query = try IncidentQuery(parameters: parameters, context: .standard(now: now))
        } catch let error as QueryParameterError {
            throw object.problem(error.parameter, error.reason)
        }
        var kinds = Set(TransitionKind.allCases)
        if let listed = try object.list("transitions") {
            kinds = try Set(listed.map { item in
                guard case .text(let text) = item, let kind = TransitionKind(rawValue: text) else {
                    let given = if case .text(let text) = item { "'\(text)' is not a transition; " } else { "" }
                    throw object.problem("transitions", given + "expected a list of \(TransitionKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return kind
            })
            guard !kinds.isEmpty else { throw object.problem("transitions", "is empty; name the transitions to deliver, or remove it for all") }
        }
        let target: Target
        switch (try object.text("url"), try object.list("command")) {
        case (let text?, nil):
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                throw object.problem("url", "'\(Redaction.redact(text))' is not an http(s) URL")
            }
            Redaction.register(passwordIn: url)
            // A receiver's token in the query (`?token=…`) is a secret as a password is: never shown.
            for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            where Configuration.credentialParameterNames.contains(item.name.lowercased()) {
                Redaction.register(keyParameterName: item.name)
                if let value = item.value { Redaction.register(secret: value) }
            }
            target = .webhook(url)
        case (nil, let arguments?):
            target = .command(try command(arguments, object: object, environment: environment, baseDirectory: baseDirectory))
        case (.some, .some):
            throw ConfigurationError("\(object.place): give either url (a webhook) or command (a program), not both")
        case (nil, nil):
            throw ConfigurationError("\(object.place): missing field 'url' (a webhook) or 'command' (a program to run for each change)")
        }
        // A webhook is always signed; a command may be (its signature in INCIDENTS_SIGNATURE).
        var secret = ""
        if case .webhook = target, object["secretEnv"] == nil {
            throw ConfigurationError("\(object.place): missing field 'secretEnv' (the environment variable holding the secret that signs each delivery)")
        }
        if let variable = try object.text("secretEnv") {
            secret = environment[variable] ?? ""
            if secret.isEmpty {
                let problem = object.problem("secretEnv", "the environment variable \(variable) is not set or empty; export it with the secret that signs each delivery")
                if requireSecret { throw problem }
                secretProblems.append(problem)
            } else {
                Redaction.register(secret: secret)
            }
        }
        var watch = WatchDefinition(name: name, query: query, filtersIncident: parameters.contains { $0.name != IncidentFilter.Parameter.source.rawValue },
                                    kinds: kinds, target: target, secret: secret, written: object.fields)
        if let seconds = try object.duration("timeout") { watch.timeoutSeconds = Double(seconds) }
        if let retry = try object.object("retry") { watch.retryPolicy = try Configuration.retryPolicy(retry) }
        switch object["from"] {
        case nil, .text("end"): watch.start = .end
        case .text("start"): watch.start = .after(0)
        case .number(let cursor) where cursor >= 0 && cursor == cursor.rounded() && cursor < 9e15: watch.start = .after(Int64(cursor))
        default: throw object.problem("from", "expected \"end\" (the default: only transitions committed from now on), \"start\" (every transition in the log) or a cursor")
        }
        return watch
    }

    /// A command's argv: its program resolved to an executable file (relative to
    /// `baseDirectory`, or a bare name in PATH), its arguments as written.
    private static func command(_ items: [ConfigValue], object: ConfigObject, environment: [String: String], baseDirectory: URL) throws -> [String] {
        let arguments = try items.map { item in
            guard case .text(let text) = item, !text.contains("\0") else { throw object.problem("command", "expected a list of text: the program, then its arguments") }
            return text
        }
        guard let program = arguments.first, !program.isEmpty else {
            throw object.problem("command", "is empty; give the program, then its arguments (no shell runs it)")
        }
        let candidates = program.contains("/")
            ? [URL(fileURLWithPath: program, relativeTo: baseDirectory).path]
            : (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map { "\($0)/\(program)" }
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) && !isDirectory($0) }) else {
            throw object.problem("command", "'\(program)' is no executable file\(program.contains("/") ? "" : " in PATH")")
        }
        return [URL(fileURLWithPath: path).standardizedFileURL.path] + arguments.dropFirst()
    }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// The target for messages: the URL without credentials, or the command's program (its
    /// arguments may hold anything, so they are never shown).
    var targetDescription: String {
        switch target {
        case .webhook(let url): Redaction.redact(url)
        case .command(let arguments): arguments[0]
        }
    }
}
