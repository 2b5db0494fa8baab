import Foundation
import IncidentCore
import IncidentFeeds
import IncidentHTTP

/// `/runs`, `/status` and `/stats`: the JSON of `incidents runs --format json`, of
/// `incident-scheduler status --format json` and of `incidents stats --format json`.
enum StatusDocuments {
    static func json(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json", text: text, route: "")
    }

    /// Gives `handle` each parameter named in `known`, each at most once, and allows `f` once
    /// (its value is the route's format, checked by ``OGC/Format/negotiate(_:offered:)``).
    /// - Throws: ``UsageError`` for a repeated or unknown parameter, or what `handle` throws.
    static func eachParameter(_ parameters: [(name: String, value: String?)], known: [String],
                              _ handle: (String, String?) throws -> Void) throws {
        var seen: Set<String> = []
        for (name, value) in parameters {
            guard seen.insert(name).inserted else { throw UsageError("parameter \(ServerFilters.shown(name)): given more than once") }
            if name == "f" {
                continue
            } else if known.contains(name) {
                try handle(name, value)
            } else {
                throw UsageError("unknown parameter \(ServerFilters.shown(name)) (parameters: \((known + ["f"]).joined(separator: ", ")))")
            }
        }
    }

    /// The largest `limit` of `/runs`.
    static let maxRuns = 1000

    /// `source` and `limit` (1 or more, cut to ``maxRuns``; default 20) as `incidents runs` takes them.
    static func runs(_ parameters: [(name: String, value: String?)], _ readers: ServerReaders) throws -> HTTPResponse {
        var source: String?, limit = 20
        try eachParameter(parameters, known: ["source", "limit"]) { name, value in
            switch name {
            case "source":
                guard let text = value?.nonEmptyTrimmed?.nfc else { throw UsageError("parameter source: a source name is needed") }
                source = text
            case "limit":
                limit = try ServerFilters.pageSize("limit", value ?? "", maximum: maxRuns)
            default: break
            }
        }
        let runs = try readers.withReader { try $0.runs(source: source, limit: limit, failuresFirst: false) }
        return json(JSONText.array(runs.map { IncidentOutput.object(IncidentOutput.fields($0)) }))
    }

    /// `incident-scheduler status --format json`, from the same read (``IncidentReads/status(_:sources:staleAfter:now:)``)
    /// over the configured sources (`sources`, read for each request as `status` reads them
    /// for each run), with its exit status as the HTTP status (``StatusVerdict``): 200 when it
    /// exits 0, 503 when it exits 1 (a source failing) or 3 (one stale); each source's `health`
    /// says which. `stale-after` (intervals, default 3) is `status --stale-after`.
    /// - Throws: ``UsageError`` for a bad parameter; a 503 ``Problem`` for a configuration that
    ///   cannot be read (`status` exits 78); the store's errors.
    static func status(_ parameters: [(name: String, value: String?)], _ readers: ServerReaders, now: UTCInstant,
                       sources: () throws -> [SourceDefinition]) throws -> HTTPResponse {
        var intervals = 3
        let staleAfter = StatusCommand.staleAfter
        try eachParameter(parameters, known: [staleAfter.option.name]) { name, value in
            guard let text = value, let number = try staleAfter.convert(text) else {
                throw UsageError("parameter \(name): '\(ServerFilters.shown(value ?? ""))' is not \(staleAfter.what)")
            }
            intervals = number
        }
        let configured: [SourceDefinition]
        do {
            configured = try sources()
        } catch let error as ConfigurationError {
            throw Problem(503, "no sources to judge: \(error.message)")
        }
        let health = try readers.withReader { try IncidentReads.status($0, sources: configured, staleAfter: intervals, now: now) }
        return HTTPResponse(status: StatusVerdict(health).isOK ? 200 : 503, contentType: "application/json",
                            text: IncidentOutput.json(health, intervals: intervals), route: "")
    }

    /// `incidents stats --format json` of the filters (hours in UTC).
    static func stats(_ query: IncidentQuery, _ readers: ServerReaders) throws -> HTTPResponse {
        json(StatsCommand.json(try readers.withReader { try $0.statistics(matching: query, utcOffsetSeconds: 0) }))
    }
}
