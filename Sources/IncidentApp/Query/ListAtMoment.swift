import Foundation
import IncidentCore

/// `incidents list --at T` (docs/analyst.md, "History and changes"): what each source had listed as
/// active at T, by poll evidence only, with each source's "as of" (its last poll at or before
/// T), so that a source that was down then shows it.
enum ListAtMoment {
    static let at = ValueOption<String>("at", placeholder: "instant",
                                        help: "What each source had listed as active at this instant (by the transition log), with each source's last poll before it.")

    /// The `--at` instant, set on `query`; nil when not given.
    /// - Throws: ``UsageError`` with `--active` or `--status` (states now, not at the instant).
    static func apply(_ arguments: ParsedArguments, _ context: Context, zone: DisplayZone, to query: inout IncidentQuery) throws {
        guard let instant = try arguments.value(at, { try ValueParsers.instant($0, now: context.clock.now(), zone: zone) }) else { return }
        try list(at: instant, &query, asked: "--at", statesNow: "--active and --status")
    }

    /// Sets `query` to list what was active at `instant` (``IncidentQuery/listedAt``): `--at`,
    /// and `incidents serve`'s `datetime` instant.
    /// - Throws: ``UsageError`` when `query` asks for states now (`statesNow`, beside `asked`).
    static func list(at instant: UTCInstant, _ query: inout IncidentQuery, asked: String, statesNow: String) throws {
        guard query.statuses.isEmpty else { throw UsageError("\(asked) lists what was active at that instant; \(statesNow) are states now") }
        query.listedAt = instant
    }

    /// One line per source: the moment, its last poll then, and its last run when that failed.
    static func asOfLines(_ sources: [SourceAsOf], at instant: UTCInstant, zone: DisplayZone) -> [String] {
        sources.map { entry in
            var line = "as of \(zone.shortTime(instant)): \(entry.source) "
            if let poll = entry.lastPoll {
                line += "last polled \(zone.shortTime(poll.observedAt)) (\(poll.status.rawValue)"
                    + (poll.origin == .live ? ")" : ", replayed from a file at \(zone.shortTime(poll.startedAt)))")
            } else {
                line += "not polled yet"
            }
            if let run = entry.lastRun, run.id != entry.lastPoll?.id {
                line += "; then \(run.status.rawValue) at \(zone.shortTime(run.startedAt))"
                if let error = run.error { line += ": \(error)" }
            }
            return line
        }
    }

    /// Writes the "as of" lines: before a table, on stdout; with any other format, on stderr
    /// (the data stays as the format has it).
    static func show(_ reader: any IncidentReader, at instant: UTCInstant, zone: DisplayZone, onStdout: Bool, _ context: Context) throws {
        guard let feed = reader as? any ChangeFeedReader else { throw QueryError("this store has no transition log") }
        let text = asOfLines(try feed.sourcesAsOf(instant), at: instant, zone: zone).map { $0 + "\n" }.joined()
        if onStdout { context.output(text + "\n") } else { FileHandle.standardError.write(Data(text.utf8)) }
    }
}
