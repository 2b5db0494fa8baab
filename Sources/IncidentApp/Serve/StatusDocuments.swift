import Foundation
import IncidentCore
import IncidentHTTP

/// `/runs`, `/status` and `/stats`: the JSON of `incidents runs --format json`, of each
/// source's run-log summary, and of `incidents stats --format json`.
enum StatusDocuments {
    static func json(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json", text: text, route: "")
    }

    /// `source` and `limit` (1…1000, default 20) as `incidents runs` takes them.
    static func runs(_ parameters: [(name: String, value: String?)], _ readers: ServerReaders) throws -> HTTPResponse {
        var source: String?, limit = 20
        var seen: Set<String> = []
        for (name, value) in parameters {
            guard seen.insert(name).inserted else { throw UsageError("parameter \(ServerFilters.shown(name)): given more than once") }
            switch name {
            case "source":
                guard let text = value?.nonEmptyTrimmed?.nfc else { throw UsageError("parameter source: a source name is needed") }
                source = text
            case "limit":
                guard let text = value, text.utf8.count <= 4, let number = Int(text), (1...1000).contains(number) else {
                    throw UsageError("parameter limit: '\(ServerFilters.shown(value ?? ""))' is not a whole number from 1 to 1000")
                }
                limit = number
            case "f":
                guard value == "json" else { throw UsageError("parameter f: only json here") }
            default:
                throw UsageError("unknown parameter \(ServerFilters.shown(name)) (parameters: source, limit, f)")
            }
        }
        let runs = try readers.withReader { try $0.runs(source: source, limit: limit, failuresFirst: false) }
        return json(JSONText.array(runs.map { IncidentOutput.object(IncidentOutput.fields($0)) }))
    }

    /// Each source of the run log: its last run and success, failures, quota pause, and the
    /// incidents active now.
    static func status(_ readers: ServerReaders, now: UTCInstant) throws -> HTTPResponse {
        let (summaries, active) = try readers.withReader { (try $0.sourceSummaries(), try $0.activeIncidentCounts(at: now)) }
        return json(JSONText.array(summaries.map { summary in
            IncidentOutput.object([
                ("source", .text(summary.source)), ("last_run_at", .instant(summary.lastRun?.finishedAt)),
                ("last_run_status", .text(summary.lastRun?.status.rawValue)), ("last_success_at", .instant(summary.lastSuccessAt)),
                ("failing_since", .instant(summary.failingSince)), ("consecutive_failures", .integer(Int64(summary.consecutiveFailures))),
                ("quota_paused_until", .instant(summary.quotaExhaustedUntil)), ("stale_runs", .integer(Int64(summary.staleRuns))),
                ("active_incidents", .integer(Int64(active[summary.source] ?? 0))),
            ])
        }))
    }

    /// `incidents stats --format json` of the filters (hours in UTC).
    static func stats(_ query: IncidentQuery, _ readers: ServerReaders) throws -> HTTPResponse {
        json(StatsCommand.json(try readers.withReader { try $0.statistics(matching: query, utcOffsetSeconds: 0) }))
    }
}
