import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// One watch of the configuration's `watches` (README, "Watches"): the transitions of the change
/// feed it wants, of the incidents its filters match, POSTed as JSON to its webhook, each signed
/// with HMAC-SHA256 under the secret its `secretEnv` variable holds.
///
/// ```json
/// {"name": "suwon", "near": "37.27,127.03", "radius": "3km", "category": ["accident"],
///  "transitions": ["appeared", "cleared"], "url": "https://hooks.example/incidents", "secretEnv": "SUWON_HOOK_SECRET"}
/// ```
struct WatchDefinition: Sendable {
    var name: String
    /// The filters (``filterFields``) as the CLI reads them; matched by the store's own query.
    var query: IncidentQuery
    /// Whether any filter was given (a quarantined record of no stored incident matches only a
    /// watch without filters, or one that names its source only).
    var filtersIncident: Bool
    /// The transition kinds delivered; all when the configuration names none.
    var kinds: Set<TransitionKind>
    var url: URL
    /// The signing secret (registered with ``Redaction``: never logged).
    var secret: String
    /// Each POST's timeout, seconds (`timeout`, default 10 s).
    var timeoutSeconds: Double = 10
    /// Retries of a failed POST within one delivery turn (`retry`, with a source's fields and
    /// defaults: ``RetryPolicy/default``).
    var retryPolicy = RetryPolicy.default

    /// The filters a watch may have: the names of `incidents list`'s options.
    static let filterFields: [IncidentFilter.Parameter] = [.near, .radius, .bbox, .road, .category, .source]
    /// Every field of a watch.
    static let fields = ["name", "transitions", "url", "secretEnv", "timeout", "retry"] + filterFields.map(\.rawValue)

    /// Reads one watch.
    /// - Throws: ``ConfigurationError`` naming the watch and field: an unknown field (a filter
    ///   outside ``filterFields``), a filter value the CLI would refuse, an unknown transition,
    ///   a URL that is not http(s), a secret variable missing or empty.
    /// - Parameter requireSecret: when false (`check-config`, `sources`, `ingest`, as for keys),
    ///   a missing secret is appended to `secretProblems` instead of thrown, and the watch has none.
    static func read(_ object: ConfigObject, environment: [String: String], now: UTCInstant,
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
                    throw object.problem("transitions", "expected a list of \(TransitionKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return kind
            })
            guard !kinds.isEmpty else { throw object.problem("transitions", "is empty; name the transitions to deliver, or remove it for all") }
        }
        let text = try object.requiredText("url")
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw object.problem("url", "'\(Redaction.redact(text))' is not an http(s) URL")
        }
        Redaction.register(passwordIn: url)
        let variable = try object.requiredText("secretEnv")
        let secret = environment[variable] ?? ""
        if secret.isEmpty {
            let problem = object.problem("secretEnv", "the environment variable \(variable) is not set or empty; export it with the secret that signs each delivery")
            if requireSecret { throw problem }
            secretProblems.append(problem)
        } else {
            Redaction.register(secret: secret)
        }
        var watch = WatchDefinition(name: name, query: query, filtersIncident: parameters.contains { $0.name != IncidentFilter.Parameter.source.rawValue },
                                    kinds: kinds, url: url, secret: secret)
        if let seconds = try object.duration("timeout") { watch.timeoutSeconds = Double(seconds) }
        if let retry = try object.object("retry") { watch.retryPolicy = try Configuration.retryPolicy(retry) }
        return watch
    }
}
