import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// `incident-scheduler sources`: the configured sources, their last run and quota state.
enum SourcesCommand {
    static let clearQuota = ValueOption<String>(
        "clear-quota", placeholder: "source",
        help: "Let a source whose quota is exhausted run again at once (after the provider raised or reset it).")

    static func command(_ context: Context) -> Command {
        Command(
            name: "sources",
            abstract: "List the configured sources, their last run and quota state (keys are never shown).",
            options: [CommonOptions.config, CommonOptions.envFile, CommonOptions.database, clearQuota, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let path = try context.databasePath(arguments, configured: configuration.database)
        if let name = try arguments.value(clearQuota)?.nfc {
            guard configuration.sources.contains(where: { $0.name == name }) else {
                throw UsageError("--clear-quota: no configured source is named '\(name)'")
            }
            try SchedulerTool.requireDatabase(path)
            let cleared: Bool
            do {
                cleared = try Stores.openForWriting(path, clock: context.clock).clearQuota(source: name)
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            context.output(cleared ? "\(name): quota back-off cleared; the next run polls it\n"
                                   : "\(name): its quota was not exhausted; nothing to clear\n")
            return
        }
        var summaries: [String: SourceSummary] = [:]
        if Stores.mayExist(path) {
            do {
                for summary in try Stores.openForReading(path, clock: context.clock).sourceSummaries() {
                    summaries[summary.source] = summary
                }
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
        }
        let now = context.clock.now()
        var rows: [[String]] = [["SOURCE", "LAST RUN", "STATUS", "PAUSED UNTIL", "INTERVAL", "FETCHED", "KEY", "PROVIDER", "BASE URL"]]
        for source in configuration.sources {
            let run = summaries[source.name]?.lastRun
            rows.append([
                source.name, run?.finishedAt.rfc3339 ?? "never", run?.status.rawValue ?? "-",
                summaries[source.name]?.quotaExhaustedUntil.flatMap { $0 > now ? $0.rfc3339 : nil } ?? "-",
                ValueParsers.durationText(source.intervalSeconds), run.map { String($0.counts.fetched) } ?? "-",
                configuration.keyState(of: source),
                source.provider,
                source.baseURL.map { Redaction.redact($0.absoluteString) } ?? "(provider default)",
            ])
        }
        // The times and statuses are never cut: BASE URL is cut, then left out, then PROVIDER,
        // KEY, FETCHED and INTERVAL.
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                        flexible: [8], droppable: [8, 7, 6, 5, 4]))
    }
}
