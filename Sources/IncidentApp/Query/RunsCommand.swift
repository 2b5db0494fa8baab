import Foundation
import IncidentCore

/// `incidents runs`: the run log, newest first.
enum RunsCommand {
    static let source = ValueOption<String>("source", placeholder: "name", help: "Only this source.",
                                            what: "a source name") { $0.nonEmptyTrimmed?.nfc }
    static let failuresFirst = Flag("failures-first", help: "Failed, cancelled and skipped runs before those that stored records.")
    static let limit = CommonOptions.limit(help: "At most this many runs.", default: "20")

    static func command(_ context: Context) -> Command {
        Command(
            name: "runs",
            abstract: "List recent ingest runs (the run log), newest first.",
            discussion: """
            ORIGIN is `live` for a poll of the API, or the name of a replayed file (ingest --file). STATUS
            incomplete means the records were stored but nothing was cleared; stale, that the document was
            older than one already applied, so it was stored as history only; DETAIL says why, and holds the
            error of a run that stored nothing. REJECTED counts records set aside with their reason.
            --format json adds the file's path, when the response was observed and when its document says
            it was published, duplicates, warnings and the host that ran the poll.
            """,
            options: QueryTool.databaseOptions + [source, failuresFirst, limit, CommonOptions.tableOrJSON, CommonOptions.timeZone, CommonOptions.wide],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let limit = try arguments.value(limit) ?? 20
        let json = try arguments.value(CommonOptions.tableOrJSON) == .json
        let zone = try arguments.timeZone()
        let sourceName = try arguments.value(source)
        let runs = try QueryTool.reading(arguments, context) {
            try IncidentReads.runs($0, source: sourceName, limit: limit, failuresFirst: arguments[failuresFirst])
        }
        if json {
            context.output(JSONText.array(runs.map { IncidentOutput.object(IncidentOutput.fields($0)) }))
            return
        }
        var rows = [["ID", "SOURCE", "STARTED (\(zone.label))", "SECONDS", "STATUS", "ORIGIN", "FETCHED", "NEW", "CHANGED",
                     "CLEARED", "REJECTED", "DETAIL"]]
        for run in runs {
            let c = run.counts
            rows.append([String(run.id ?? 0), run.source, zone.shortTime(run.startedAt),
                         String(run.finishedAt.secondsSince1970 - run.startedAt.secondsSince1970), run.status.rawValue,
                         originText(run.origin), String(c.fetched), String(c.inserted), String(c.updated + c.reopened),
                         String(c.cleared), String(c.rejected),
                         ([run.error].compactMap { $0 } + run.warnings).joined(separator: "; ").nonEmptyTrimmed ?? "-"])
        }
        // DETAIL is cut first; on a narrow terminal SECONDS, ORIGIN, REJECTED, CLEARED, CHANGED, NEW and FETCHED are
        // left out in that order, so that the times and statuses are never cut.
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                        flexible: [11], droppable: [3, 5, 10, 9, 8, 7, 6]))
    }

    /// `live`, or the replayed file's name (`--format json` has its path).
    static func originText(_ origin: FeedOrigin) -> String {
        switch origin {
        case .live: "live"
        case .file(let path, _): URL(fileURLWithPath: path).lastPathComponent
        }
    }
}
