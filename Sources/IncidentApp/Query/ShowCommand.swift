import Foundation
import IncidentCore

/// `incidents show ID`: every field of one incident and its revision history.
enum ShowCommand {
    static let format = ValueOption<TextOrJSON>(choice: "format", help: "Output format.", default: "text")

    static func command(_ context: Context) -> Command {
        Command(
            name: "show",
            abstract: "Show every field of one incident and its revision history.",
            options: QueryTool.databaseOptions + [format, CommonOptions.timeZone],
            positionals: [Positional("id", help: "The incident's id (the ID column of `incidents list`).")],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        guard let id = Int64(arguments.positionals[0]), id > 0 else {
            throw UsageError("'\(arguments.positionals[0])' is not an incident id (a positive whole number)")
        }
        let json = try arguments.value(format) == .json
        let zone = try arguments.timeZone()
        guard let history = try QueryTool.reading(arguments, context, { try $0.history(ofIncident: id) }) else {
            throw NoSuchIncident(id: id)
        }
        let (stored, revisions) = (history.current, history.revisions)
        if json {
            let history = revisions.map { revision -> String in
                let snapshot = StoredIncident(id: stored.id, incident: revision.incident, firstSeenAt: stored.firstSeenAt,
                                              lastSeenAt: stored.lastSeenAt, clearedAt: revision.clearedAt, revision: revision.revision)
                let fields = IncidentOutput.fields(snapshot).filter {
                    !["id", "source", "external_id", "first_seen_at", "last_seen_at"].contains($0.0)
                } + [("superseded_at", FieldValue.text(revision.supersededAt.rfc3339))]
                return IncidentOutput.object(fields)
            }
            var fields = IncidentOutput.fields(stored).map { "\(JSONText.quoted($0.0)): \($0.1.json)" }
            fields.append("\"revisions\": [" + history.joined(separator: ", ") + "]")
            context.output("{" + fields.joined(separator: ", ") + "}\n")
            return
        }
        var out = ""
        for (key, value) in IncidentOutput.fields(stored) {
            out += key.padding(toLength: 17, withPad: " ", startingAt: 0) + " "
                + (value.plain.isEmpty ? "-" : TextTable.singleLine(value.plain)) + "\n"
        }
        out += "\nrevisions (previous values, oldest first):\n"
        if revisions.isEmpty { out += "  none: unchanged since first seen\n" }
        var rows = [["REV", "UNTIL (\(zone.label))", "CATEGORY", "RESTRICTION", "CLEARED", "DESCRIPTION"]]
        for revision in revisions {
            rows.append([String(revision.revision), zone.shortTime(revision.supersededAt),
                         revision.incident.category.rawValue, revision.incident.restriction ?? "-",
                         revision.clearedAt == nil ? "no" : "yes", revision.incident.description ?? "-"])
        }
        if !revisions.isEmpty { out += TextTable.render(rows, maxWidth: Terminal.width(context.environment)) }
        context.output(out)
    }
}

/// `incidents show ID` of an id that does not exist (exit 1).
struct NoSuchIncident: Error, CustomStringConvertible {
    var id: Int64
    var description: String { "no incident with id \(id); `incidents list` shows the ids" }
}
