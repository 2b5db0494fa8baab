import Foundation
import IncidentCore

/// `incidents changes --after CURSOR [--follow]`: the change feed (docs/analyst.md, "History and
/// changes"): each transition once, in order, with its cursor, the incident as it is now and
/// the run that logged it.
enum ChangesCommand {
    enum Format: String, CaseIterable, Sendable {
        case ndjson, json
    }

    static let after = ValueOption<Int64>("after", placeholder: "cursor",
                                          help: "Print the transitions after this cursor (0: from the start; the last one printed to resume).",
                                          default: "0", what: "a cursor (a whole number, 0 or more)") { Int64($0).flatMap { $0 >= 0 ? $0 : nil } }
    static let follow = Flag("follow", help: "Keep waiting for new transitions and print each as it is committed (ndjson).")
    static let interval = ValueOption<Int64>("interval", placeholder: "duration", help: "How often --follow looks for new transitions.",
                                              default: "1s", what: "a duration") { try ValueParsers.duration($0) }
    static let format = ValueOption<Format>(choice: "format", help: "One JSON object per line, or one JSON array.", default: "ndjson")

    /// Transitions read per query.
    static let page = 1000

    static func command(_ context: Context) -> Command {
        Command(
            name: "changes",
            abstract: "Print the transitions polls logged after a cursor: appeared, revised, ended, cleared, reopened, quarantined.",
            discussion: """
            Each transition comes once, in commit order, with its cursor: pass the last cursor printed as --after to resume
            without a gap or a repeat, also on PostgreSQL with several hosts committing at once. `cleared` comes only from a
            complete poll. Each line holds the transition, the incident as it is now (null for a record set aside whose id
            names no stored incident) and the run that logged it. Times are RFC 3339 UTC.
            """,
            options: QueryTool.databaseOptions + [after, follow, interval, format],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        var cursor = try arguments.value(after) ?? 0
        let following = arguments[follow]
        let array = try arguments.value(format) == .json
        if following && array { throw UsageError("--follow prints one JSON object per line: use --format ndjson") }
        let wait = Double(try arguments.value(interval) ?? 1)
        var stopped = false
        try QueryTool.reading(arguments, context) { reader in
            guard let feed = reader as? any ChangeFeedReader else { throw QueryError("this store has no change feed") }
            try feed.checkCursor(cursor)
            var lines: [String] = []
            while true {
                let changes = try feed.changes(after: cursor, limit: page)
                if let last = changes.last { cursor = last.transition.cursor }
                if array {
                    lines += changes.map { json($0, now: context.clock.now()) }
                } else if !changes.isEmpty {
                    context.output(changes.map { json($0, now: context.clock.now()) + "\n" }.joined())
                }
                if changes.count == page { continue }
                guard following else { break }
                // SIGINT or SIGTERM cancel the command's task: stop within a tenth of a second.
                let until = Date().addingTimeInterval(wait)
                while !Task.isCancelled && Date() < until { Thread.sleep(forTimeInterval: min(0.1, wait)) }
                if Task.isCancelled {
                    stopped = true
                    break
                }
            }
            if array { context.output(JSONText.array(lines)) }
        }
        // Exit 130 or 143 as any stopped command (everything printed so far is complete lines).
        if stopped { throw CancellationError() }
    }

    /// One change as a JSON object on one line: the transition's members, then `incident`
    /// (its fields as `list --format json` has them, its `status` at `now`) and `run` (as
    /// `runs --format json`).
    static func json(_ change: IncidentChange, now: UTCInstant) -> String {
        let t = change.transition
        let members = IncidentOutput.object([
            ("cursor", .integer(t.cursor)), ("kind", .text(t.kind.rawValue)), ("at", .instant(t.at)), ("source", .text(t.source)),
            ("external_id", .text(t.externalID)), ("incident_id", t.incidentID.map(FieldValue.integer) ?? .number(nil)),
            ("fields", .texts(t.fields)), ("run_id", t.runID.map(FieldValue.integer) ?? .number(nil)),
        ])
        let incident = change.incident.map {
            IncidentOutput.object(IncidentOutput.fields($0) + [("status", .text($0.status(at: now).rawValue))])
        } ?? "null"
        let run = change.run.map { IncidentOutput.object(IncidentOutput.fields($0)) } ?? "null"
        return members.dropLast() + ", \"incident\": \(incident), \"run\": \(run)}"
    }
}
