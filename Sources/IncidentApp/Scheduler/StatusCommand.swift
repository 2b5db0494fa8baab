import Foundation
import IncidentCore
import IncidentFeeds

/// `incident-scheduler status`: the health of each configured source, for people and for
/// monitoring (its exit status says whether any source is stale).
enum StatusCommand {
    static let staleAfter = ValueOption<Int>(
        "stale-after", placeholder: "intervals",
        help: "A source is stale when its last success is older than this many of its intervals (or it never succeeded).",
        default: "3", what: "a whole number from 1 to 10000") { Int($0).flatMap { (1...10_000).contains($0) ? $0 : nil } }

    static let metricsFile = ValueOption<String>(
        "metrics-file", placeholder: "path",
        help: "Also check the scheduler's metrics file (run --metrics-file): stale like a source when it is missing or older than --stale-after of the shortest interval.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "status",
            abstract: "Show each configured source's health: last success, failures, quota pause, active incidents.",
            discussion: """
            HEALTH is ok, failing (its last runs failed, but it is not stale yet), paused (its request quota is
            exhausted) or stale (no poll stored records for more than --stale-after intervals, or none ever did).
            Below the table, one line per source that is not ok says why, with its last error in full.
            With --metrics-file, the file counts as stale when it is missing or older than --stale-after of the shortest interval.
            Exit 0 when every source is ok (or paused for its quota), 1 when one is failing now (its last runs failed)
            and none is stale, 3 when one is stale (for monitoring: a check can run this command), 66 when the
            database does not exist yet, 78 when the configuration is invalid.
            """,
            options: [CommonOptions.config, CommonOptions.envFile, CommonOptions.database, staleAfter, metricsFile, CommonOptions.tableOrJSON,
                      CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let intervals = try arguments.value(staleAfter) ?? 3
        let json = try arguments.value(CommonOptions.tableOrJSON) == .json
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let path = try context.databasePath(arguments, configured: configuration.database)
        let health: [SourceHealth]
        let now = context.clock.now()
        do {
            let reader = try Stores.openForReading(path, clock: context.clock)
            health = try IncidentReads.status(reader, sources: configuration.sources, staleAfter: intervals, now: now)
        } catch let error as StoreMissing {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        context.output(json ? IncidentOutput.json(health, intervals: intervals)
                            : table(health, intervals: intervals, width: Terminal.width(context.environment, wide: arguments[CommonOptions.wide])))
        var verdict = StatusVerdict(health)
        // A metrics file that stopped being written hides every source from the monitor that reads it.
        if let metrics = try arguments.value(metricsFile) {
            let horizon = Int64(intervals) * (configuration.sources.map(\.intervalSeconds).min() ?? 300)
            let written = (try? FileManager.default.attributesOfItem(atPath: metrics)[.modificationDate] as? Date)
                .map { Int64($0.timeIntervalSince1970.rounded(.down)) }
            if let written, now.secondsSince1970 - written <= horizon {
                if !json { context.output("metrics: \(metrics) written at \(UTCInstant(secondsSince1970: written).rfc3339)\n") }
            } else {
                verdict.stale.append("the metrics file")
                if !json {
                    context.output("metrics: \(metrics) " + (written.map { "not written for more than \(ValueParsers.durationText(horizon)) (last at \(UTCInstant(secondsSince1970: $0).rfc3339))" }
                        ?? "does not exist") + "; the scheduler's metrics writes fail (run logs metrics.failed) or it stopped\n")
                }
            }
        }
        try verdict.check(intervals: intervals)
    }

    static func table(_ health: [SourceHealth], intervals: Int, width: Int) -> String {
        var rows = [["SOURCE", "HEALTH", "LAST SUCCESS", "FAILING SINCE", "ACTIVE", "INTERVAL"]]
        var notes: [String] = []
        for h in health {
            rows.append([h.source.name, h.state, h.summary.lastSuccessAt?.rfc3339 ?? "never", h.summary.failingSince?.rfc3339 ?? "-",
                         String(h.activeIncidents), ValueParsers.durationText(h.source.intervalSeconds)])
            let name = h.source.name
            if h.summary.lastSuccessAt == nil {
                notes.append("\(name): no poll has stored records yet")
            } else if h.stale {
                notes.append("\(name): stale: no poll has stored records for more than \(Plural.count(intervals, "interval")) "
                             + "(\(ValueParsers.durationText(Int64(intervals) * h.source.intervalSeconds)))")
            }
            if let pausedUntil = h.pausedUntil {
                notes.append("\(name): its request quota is exhausted; polls resume at \(pausedUntil.rfc3339)")
            }
            if let since = h.summary.failingSince {
                notes.append("\(name): failing since \(since.rfc3339) (\(Plural.count(h.summary.consecutiveFailures, "failed run")))"
                             + (h.lastError.map { ": \($0)" } ?? ""))
            }
        }
        // Times are never cut; on a narrow terminal INTERVAL is left out. The notes are whole lines.
        return TextTable.render(rows, maxWidth: width, droppable: [5]) + notes.map { TextTable.singleLine($0) + "\n" }.joined()
    }

}

/// `status` found sources whose last success is too old (exit 3, like a run that left a
/// source not fresh).
struct StaleSources: Error, CustomStringConvertible {
    var sources: [String]
    var intervals: Int
    var description: String {
        "stale: \(sources.joined(separator: ", ")) (no poll stored records for more than \(Plural.count(intervals, "interval"))); see the notes above"
    }
}

/// `status` found sources failing now: their last runs failed, though they are not stale yet
/// (exit 1, as a run in which a source failed).
struct FailingSources: Error, CustomStringConvertible {
    var sources: [String]
    var description: String {
        "failing: \(sources.joined(separator: ", ")) (the last runs failed; not stale yet); see the notes above"
    }
}
