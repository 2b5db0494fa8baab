import Foundation
import IncidentCore
import IncidentJSON

/// `incidents show ID`: every field of one incident, what changed from each revision to the
/// next, and the records of it that polls quarantined.
enum ShowCommand {
    static let format = ValueOption<TextOrJSON>(choice: "format", help: "Output format.", default: "text")

    static func command(_ context: Context) -> Command {
        Command(
            name: "show",
            abstract: "Show every field of one incident, the changes between its revisions and its quarantined records.",
            discussion: """
            The history lists each revision with the fields that changed from the one before, old → new, in full,
            and when the incident was cleared (no longer listed by its source) and reopened.
            Every time is shown in --tz (RFC 3339 with the offset); --format json keeps UTC.
            """,
            options: QueryTool.databaseOptions + [format, CommonOptions.timeZone],
            positionals: [Positional("id", help: "The incident's id (the ID column of `incidents list`).")],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        guard let id = Int64(arguments.positionals[0]), id > 0 else {
            throw UsageError("'\(arguments.positionals[0])' is not an incident id (a positive whole number)")
        }
        let json = try arguments.value(format) == .json
        let zone = try arguments.timeZone()
        let now = context.clock.now()
        guard let detail = try QueryTool.reading(arguments, context, { try IncidentReads.show($0, id: id, now: now) }) else {
            throw NoSuchIncident(id: id)
        }
        context.output(json ? self.json(detail) : text(detail, zone: zone, width: Terminal.width(context.environment)))
    }

    // MARK: Text

    static func text(_ detail: IncidentDetail, zone: DisplayZone, width: Int) -> String {
        let history = detail.history
        func shown(_ value: FieldValue) -> String {
            switch value {
            case .instant(let instant?): return zone.rfc3339(instant)
            default: return value.plain.isEmpty ? "-" : TextTable.singleLine(value.plain)
            }
        }
        func row(_ key: String, _ value: String) -> String {
            key.padding(toLength: 17, withPad: " ", startingAt: 0) + " " + value + "\n"
        }
        let stored = history.current
        var out = ""
        for (key, value) in IncidentOutput.fields(stored) { out += row(key, shown(value)) }
        out += row("status", detail.status.rawValue)

        let versions = detail.versions
        out += "\nhistory (oldest first, times in \(zone.label)):\n"
        if versions.count == 1 { out += "  unchanged since first seen \(zone.rfc3339(stored.firstSeenAt))\n" }
        for (index, version) in versions.enumerated() where versions.count > 1 {
            var heading = "revision \(version.revision)  " + (index == 0 ? "first seen " : "from ") + zone.rfc3339(version.from)
            if index > 0 && detail.changes[index - 1].reopened { heading += ", reopened" }
            out += heading + (version.isCurrent ? " (current)" : "") + "\n"
            if index > 0 {
                let changed = detail.changes[index - 1].fields
                if changed.isEmpty { out += "  no field changed\n" }
                for (name, old, new) in changed {
                    let label = "  " + name.padding(toLength: 17, withPad: " ", startingAt: 0)
                    let oneLine = label + shown(old) + " → " + shown(new)
                    out += TextTable.displayWidth(oneLine) <= width
                        ? oneLine + "\n"
                        : label + shown(old) + "\n" + String(repeating: " ", count: 17) + "→ " + shown(new) + "\n"
                }
            }
            if let cleared = version.clearedAt {
                out += "  cleared \(zone.rfc3339(cleared)): a complete poll of its source no longer listed it\n"
            }
        }
        if !history.rejections.isEmpty {
            out += "\nquarantined records of this incident (newest first):\n"
            for rejection in history.rejections {
                out += "  \(zone.rfc3339(rejection.rejectedAt))  run \(rejection.runID)  \(TextTable.singleLine(rejection.record.position)): "
                    + TextTable.singleLine(rejection.record.reason) + "\n"
                if let excerpt = rejection.record.excerpt { out += "    " + TextTable.singleLine(excerpt) + "\n" }
            }
        }
        return out
    }

    // MARK: JSON

    static func json(_ detail: IncidentDetail) -> String {
        let history = detail.history
        let stored = history.current
        let revisions = history.revisions.map { revision -> String in
            let version = IncidentDetail.Version(revision: revision.revision, incident: revision.incident, clearedAt: revision.clearedAt,
                                                 from: stored.firstSeenAt, isCurrent: false)
            return IncidentOutput.object(IncidentDetail.fields(version, cleared: true)
                                         + [("revision", .integer(Int64(revision.revision))), ("superseded_at", .instant(revision.supersededAt))])
        }
        let changes = detail.changes.map { change -> String in
            let fields = change.fields.map { name, old, new in
                "{\"field\": \(JSONString.quoted(name)), \"old\": \(old.json), \"new\": \(new.json)}"
            }
            return "{\"revision\": \(change.revision), \"from\": \"\(change.from.rfc3339)\", "
                + "\"reopened\": \(change.reopened), \"fields\": [" + fields.joined(separator: ", ") + "]}"
        }
        let rejections = history.rejections.map { r in
            IncidentOutput.object([("run_id", .integer(r.runID)), ("rejected_at", .instant(r.rejectedAt)),
                                   ("external_id", .text(r.record.externalID)), ("position", .text(r.record.position)),
                                   ("reason", .text(r.record.reason)), ("excerpt", .text(r.record.excerpt))])
        }
        var fields = IncidentOutput.fields(stored).map { "\(JSONString.quoted($0.0)): \($0.1.json)" }
        fields.append("\"status\": \"\(detail.status.rawValue)\"")
        fields.append("\"revisions\": [" + revisions.joined(separator: ", ") + "]")
        fields.append("\"changes\": [" + changes.joined(separator: ", ") + "]")
        fields.append("\"rejections\": [" + rejections.joined(separator: ", ") + "]")
        return "{" + fields.joined(separator: ", ") + "}\n"
    }
}

/// `incidents show ID` of an id that does not exist (exit 1).
struct NoSuchIncident: Error, CustomStringConvertible {
    var id: Int64
    var description: String { "no incident with id \(id); `incidents list` shows the ids" }
}
