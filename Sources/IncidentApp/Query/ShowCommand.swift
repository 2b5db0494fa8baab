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
        let now = context.clock.now()
        context.output(json ? self.json(history, now: now)
                            : text(history, now: now, zone: zone, width: Terminal.width(context.environment)))
    }

    /// One version of the incident: a revision, or the current row.
    struct Version {
        var revision: Int
        var incident: Incident
        var clearedAt: UTCInstant?
        /// When a poll first saw this version: first seen for revision 1, else when the
        /// previous version was superseded.
        var from: UTCInstant
        var isCurrent: Bool
    }

    /// Every version, oldest first, the current one last.
    static func versions(_ history: IncidentHistory) -> [Version] {
        let current = history.current
        var versions: [Version] = []
        var from = current.firstSeenAt
        for revision in history.revisions {
            versions.append(Version(revision: revision.revision, incident: revision.incident, clearedAt: revision.clearedAt,
                                    from: from, isCurrent: false))
            from = revision.supersededAt
        }
        versions.append(Version(revision: current.revision, incident: current.incident, clearedAt: current.clearedAt,
                                from: from, isCurrent: true))
        return versions
    }

    /// The fields a version has: every content field of ``IncidentOutput/fields(_:)``, and
    /// `cleared_at` when `cleared`.
    static func versionFields(_ version: Version, cleared: Bool = false) -> [(String, FieldValue)] {
        let snapshot = StoredIncident(id: 0, incident: version.incident, firstSeenAt: version.from, lastSeenAt: version.from,
                                      clearedAt: version.clearedAt, revision: version.revision)
        return IncidentOutput.fields(snapshot).filter {
            !["id", "source", "external_id", "first_seen_at", "last_seen_at", "revision"].contains($0.0)
                && (cleared || $0.0 != "cleared_at")
        }
    }

    /// The content fields whose value differs between `old` and `new`, in column order:
    /// (name, old, new). Clearing is not a field change: it happens during a version (its
    /// `clearedAt`), and the next version, if any, is a reopening.
    static func changes(from old: Version, to new: Version) -> [(String, FieldValue, FieldValue)] {
        zip(versionFields(old), versionFields(new)).compactMap { a, b in
            a.1.json == b.1.json ? nil : (a.0, a.1, b.1)
        }
    }

    // MARK: Text

    static func text(_ history: IncidentHistory, now: UTCInstant, zone: DisplayZone, width: Int) -> String {
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
        out += row("status", stored.status(at: now).rawValue)

        let versions = versions(history)
        out += "\nhistory (oldest first, times in \(zone.label)):\n"
        if versions.count == 1 { out += "  unchanged since first seen \(zone.rfc3339(stored.firstSeenAt))\n" }
        for (index, version) in versions.enumerated() where versions.count > 1 {
            var heading = "revision \(version.revision)  " + (index == 0 ? "first seen " : "from ") + zone.rfc3339(version.from)
            if index > 0 && versions[index - 1].clearedAt != nil { heading += ", reopened" }
            out += heading + (version.isCurrent ? " (current)" : "") + "\n"
            if index > 0 {
                let changed = changes(from: versions[index - 1], to: version)
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

    static func json(_ history: IncidentHistory, now: UTCInstant) -> String {
        let stored = history.current
        let versions = versions(history)
        let revisions = history.revisions.map { revision -> String in
            let version = Version(revision: revision.revision, incident: revision.incident, clearedAt: revision.clearedAt,
                                  from: stored.firstSeenAt, isCurrent: false)
            return IncidentOutput.object(versionFields(version, cleared: true) + [("revision", .integer(Int64(revision.revision))),
                                                                                 ("superseded_at", .instant(revision.supersededAt))])
        }
        let changes = versions.indices.dropFirst().map { index -> String in
            let fields = self.changes(from: versions[index - 1], to: versions[index]).map { name, old, new in
                "{\"field\": \(JSONString.quoted(name)), \"old\": \(old.json), \"new\": \(new.json)}"
            }
            return "{\"revision\": \(versions[index].revision), \"from\": \"\(versions[index].from.rfc3339)\", "
                + "\"reopened\": \(versions[index - 1].clearedAt != nil), \"fields\": [" + fields.joined(separator: ", ") + "]}"
        }
        let rejections = history.rejections.map { r in
            IncidentOutput.object([("run_id", .integer(r.runID)), ("rejected_at", .instant(r.rejectedAt)),
                                   ("external_id", .text(r.record.externalID)), ("position", .text(r.record.position)),
                                   ("reason", .text(r.record.reason)), ("excerpt", .text(r.record.excerpt))])
        }
        var fields = IncidentOutput.fields(stored).map { "\(JSONString.quoted($0.0)): \($0.1.json)" }
        fields.append("\"status\": \"\(stored.status(at: now).rawValue)\"")
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
