import Foundation
import IncidentCore

/// `incidents`: query the incidents `incident-scheduler` stored. Never changes them (the only
/// write is bringing the derived search index up to date for `--search`).
public enum QueryTool {
    public static let version = SchedulerTool.version

    public static func command(_ context: Context) -> Command {
        Command(
            name: "incidents",
            abstract: "Query the traffic incidents stored by incident-scheduler.",
            discussion: """
            Reads a consistent snapshot; safe while an ingest is writing (it sees the last committed poll).
            Instants: RFC 3339 (2023-03-21T05:13:00Z), a date (2023-03-21), a local time ("2023-03-21 14:13")
            read in --tz, or a duration ago (90s, 15m, 2h, 7d). Times are shown in --tz (default UTC).
            """,
            subcommands: [listCommand(context), showCommand(context), statsCommand(context), runsCommand(context)])
    }

    /// `--database` and `--config` (whose `database` is used), as for the scheduler.
    static let databaseOptions = [
        SchedulerTool.databaseOption,
        Option.value("config", short: "c", placeholder: "file", help: "The scheduler's JSON configuration; its database setting is used."),
    ]

    static let tzOption = Option.value("tz", placeholder: "zone",
        help: "Time zone for local times given and shown: UTC, KST, +09:00 or Asia/Seoul.", default: "UTC")

    static func formatOption(_ formats: [String], default value: String = "table") -> Option {
        .value("format", placeholder: formats.joined(separator: "|"), help: "Output format.", default: value)
    }

    /// The filter options shared by `list` and `stats`.
    static let filterOptions: [Option] = [
        .flag("active", help: "Only incidents still listed by their source and not ended by the provider."),
        .repeating("source", placeholder: "name", help: "Only this source (repeatable)."),
        .repeating("category", placeholder: IncidentCategory.allCases.map(\.rawValue).joined(separator: "|"),
                   help: "Only this category (repeatable)."),
        .value("since", placeholder: "instant", help: "Started at or after this instant."),
        .value("until", placeholder: "instant", help: "Started before this instant."),
        .value("seen-since", placeholder: "instant", help: "Seen by a poll at or after this instant."),
        .value("road", placeholder: "text", help: "The road name contains this text (e.g. 경부)."),
        .value("bbox", placeholder: "minLon,minLat,maxLon,maxLat", help: "Only positions inside this WGS84 box."),
        .value("near", placeholder: "lat,lon", help: "Only positions within --radius of this WGS84 point."),
        .value("radius", placeholder: "distance", help: "Radius for --near: 500m, 5km.", default: "5km"),
        .value("search", placeholder: "text", help: "Every word occurs in the description or location (full-text)."),
    ]

    /// Parses the shared filters (the validate step: nothing is opened before this succeeds).
    static func query(_ arguments: ParsedArguments, _ context: Context) throws -> (IncidentQuery, tz: Int) {
        let now = context.clock.now()
        let tz = try timeZone(arguments)
        func instant(_ name: String) throws -> UTCInstant? {
            try arguments.value(name, as: "an instant") { try ValueParsers.instant($0, now: now, utcOffsetSeconds: tz) }
        }
        var query = IncidentQuery(now: now, activeOnly: arguments.flag("active"), sources: arguments.all("source"))
        query.categories = try arguments.all("category").map { text in
            guard let category = IncidentCategory(rawValue: text) else {
                throw UsageError("--category: '\(text)' is not one of \(IncidentCategory.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return category
        }
        query.startedSince = try instant("since")
        query.startedUntil = try instant("until")
        query.seenSince = try instant("seen-since")
        query.roadContains = try arguments.value("road", as: "a text") { $0.nonEmptyTrimmed }
        query.boundingBox = try arguments.value("bbox", as: "a box") { try ValueParsers.boundingBox($0) }
        query.near = try arguments.value("near", as: "a point") { try ValueParsers.point($0) }
        if let radius = try arguments.value("radius", as: "a distance", { try ValueParsers.distance($0) }) {
            guard query.near != nil else { throw UsageError("--radius needs --near LAT,LON") }
            query.radiusMeters = radius
        }
        query.search = try arguments.value("search", as: "a text") { $0.nonEmptyTrimmed }
        return (query, tz)
    }

    /// `--format` for commands with a text form and JSON: true for JSON.
    static func wantsJSON(_ arguments: ParsedArguments, text: String) throws -> Bool {
        try arguments.value("format", as: "\(text) or json") { [text, "json"].contains($0) ? $0 : nil } == "json"
    }

    /// The store, or nil (the message printed) when the database does not exist: exit 66.
    /// Other failures (not a database, a newer or older schema) are thrown: exit 1.
    static func openStore(_ arguments: ParsedArguments, _ context: Context) throws -> (any IncidentReader)? {
        let path = try context.databasePath(arguments)
        do {
            return try Stores.openForReading(path, clock: context.clock)
        } catch let error as StoreMissing {
            StandardError.writeLine("error: \(error)")
            return nil
        }
    }

    /// `--tz` as seconds east of UTC (0 when absent).
    static func timeZone(_ arguments: ParsedArguments) throws -> Int {
        try arguments.value("tz", as: "a time zone") { try ValueParsers.timeZone($0) } ?? 0
    }

    /// `--limit` (or `-n`), a whole number of at least 1.
    static func limit(_ arguments: ParsedArguments) throws -> Int? {
        try arguments.value("limit", as: "a whole number of at least 1") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
    }

    // MARK: list

    static func listCommand(_ context: Context) -> Command {
        Command(
            name: "list",
            abstract: "List incidents (newest start first), filtered.",
            discussion: """
            Examples:
              incidents list --active --road 경부 --near 37.2636,127.0286 --radius 10km
              incidents list --since 2h --category accident --format geojson > accidents.geojson
            """,
            options: databaseOptions + filterOptions + [
                .value("order", placeholder: IncidentOrder.allCases.map(\.rawValue).joined(separator: "|"),
                       help: "Sort order (distance needs --near).", default: "started, or distance with --near"),
                .value("limit", short: "n", placeholder: "count", help: "At most this many incidents."),
                formatOption(IncidentOutput.Format.allCases.map(\.rawValue)), tzOption,
            ],
            run: { arguments in
                var (query, tz) = try query(arguments, context)
                let format = try arguments.value("format", as: "one of \(IncidentOutput.Format.allCases.map(\.rawValue).joined(separator: ", "))") {
                    IncidentOutput.Format(rawValue: $0)
                } ?? .table
                query.order = try arguments.value("order", as: "one of \(IncidentOrder.allCases.map(\.rawValue).joined(separator: ", "))") {
                    IncidentOrder(rawValue: $0)
                } ?? (query.near == nil ? .started : .distance)
                if query.order == .distance && query.near == nil { throw UsageError("--order distance needs --near LAT,LON") }
                query.limit = try limit(arguments)
                guard let store = try openStore(arguments, context) else { return ExitStatus.noInput }
                let incidents = try QueryIncidents(reader: store).list(query)
                context.output(IncidentOutput.render(incidents, as: format, width: Terminal.width(context.environment),
                                                     utcOffsetSeconds: tz))
                return ExitStatus.success
            })
    }

    // MARK: show

    static func showCommand(_ context: Context) -> Command {
        Command(
            name: "show",
            abstract: "Show every field of one incident and its revision history.",
            options: databaseOptions + [formatOption(["text", "json"], default: "text"), tzOption],
            positionals: [Positional("id", help: "The incident's id (the ID column of `incidents list`).")],
            run: { arguments in
                guard let id = Int64(arguments.positionals[0]), id > 0 else {
                    throw UsageError("'\(arguments.positionals[0])' is not an incident id (a positive whole number)")
                }
                let json = try wantsJSON(arguments, text: "text")
                let tz = try timeZone(arguments)
                guard let store = try openStore(arguments, context) else { return ExitStatus.noInput }
                guard let history = try store.history(ofIncident: id) else {
                    StandardError.writeLine("error: no incident with id \(id); `incidents list` shows the ids")
                    return ExitStatus.failure
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
                } else {
                    var out = ""
                    for (key, value) in IncidentOutput.fields(stored) {
                        out += key.padding(toLength: 17, withPad: " ", startingAt: 0) + " "
                            + (value.plain.isEmpty ? "-" : TextTable.singleLine(value.plain)) + "\n"
                    }
                    out += "\nrevisions (previous values, oldest first):\n"
                    if revisions.isEmpty { out += "  none: unchanged since first seen\n" }
                    var rows = [["REV", "UNTIL (\(IncidentOutput.offsetLabel(tz)))", "CATEGORY", "RESTRICTION", "CLEARED", "DESCRIPTION"]]
                    for revision in revisions {
                        rows.append([String(revision.revision), IncidentOutput.shortTime(revision.supersededAt, utcOffsetSeconds: tz),
                                     revision.incident.category.rawValue, revision.incident.restriction ?? "-",
                                     revision.clearedAt == nil ? "no" : "yes", revision.incident.description ?? "-"])
                    }
                    if !revisions.isEmpty { out += TextTable.render(rows, maxWidth: Terminal.width(context.environment)) }
                    context.output(out)
                }
                return ExitStatus.success
            })
    }

    // MARK: stats

    static func statsCommand(_ context: Context) -> Command {
        Command(
            name: "stats",
            abstract: "Count incidents by source, category, road and hour of start; active vs cleared.",
            options: databaseOptions + filterOptions + [formatOption(["table", "json"]), tzOption],
            run: { arguments in
                let (query, tz) = try query(arguments, context)
                let json = try wantsJSON(arguments, text: "table")
                guard let store = try openStore(arguments, context) else { return ExitStatus.noInput }
                let stats = try store.statistics(matching: query, utcOffsetSeconds: tz)
                let groups = [("source", stats.bySource), ("category", stats.byCategory), ("road", stats.byRoad),
                              ("hour", stats.byHour)]
                if json {
                    func object(_ pairs: [(String, Int)]) -> String {
                        "{" + pairs.map { "\(JSONText.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
                    }
                    context.output("{\"total\": \(stats.total), \"active\": \(stats.active), \"cleared\": \(stats.cleared), "
                                   + groups.map { "\"by_\($0.0)\": \(object($0.1))" }.joined(separator: ", ") + "}\n")
                } else {
                    var out = "total \(stats.total)   active \(stats.active)   cleared \(stats.cleared)\n"
                    for (name, pairs) in groups where !pairs.isEmpty {
                        let title = name == "hour" ? "HOUR (\(IncidentOutput.offsetLabel(tz)))" : name.uppercased()
                        out += "\n" + TextTable.render([[title, "COUNT"]] + pairs.map { [$0.0, String($0.1)] },
                                                       maxWidth: Terminal.width(context.environment))
                    }
                    context.output(out)
                }
                return ExitStatus.success
            })
    }

    // MARK: runs

    static func runsCommand(_ context: Context) -> Command {
        Command(
            name: "runs",
            abstract: "List recent ingest runs (the run log), newest first.",
            options: databaseOptions + [
                .value("source", placeholder: "name", help: "Only this source."),
                .flag("failures-first", help: "Failed, cancelled and skipped runs before successful ones."),
                .value("limit", short: "n", placeholder: "count", help: "At most this many runs.", default: "20"),
                formatOption(["table", "json"]), tzOption,
            ],
            run: { arguments in
                let limit = try limit(arguments) ?? 20
                let json = try wantsJSON(arguments, text: "table")
                let tz = try timeZone(arguments)
                guard let store = try openStore(arguments, context) else { return ExitStatus.noInput }
                let runs = try store.runs(source: arguments.value("source"), limit: limit, failuresFirst: arguments.flag("failures-first"))
                if json {
                    let objects = runs.map { run -> String in
                        let c = run.counts
                        return IncidentOutput.object([
                            ("id", .integer(run.id ?? 0)), ("source", .text(run.source)), ("status", .text(run.status.rawValue)),
                            ("started_at", .text(run.startedAt.rfc3339)), ("finished_at", .text(run.finishedAt.rfc3339)),
                            ("fetched", .integer(Int64(c.fetched))), ("inserted", .integer(Int64(c.inserted))),
                            ("updated", .integer(Int64(c.updated))), ("unchanged", .integer(Int64(c.unchanged))),
                            ("reopened", .integer(Int64(c.reopened))), ("cleared", .integer(Int64(c.cleared))),
                            ("error", .text(run.error)),
                        ])
                    }
                    context.output(JSONText.array(objects))
                } else {
                    var rows = [["ID", "SOURCE", "STARTED (\(IncidentOutput.offsetLabel(tz)))", "SECONDS", "STATUS", "FETCHED", "NEW",
                                 "CHANGED", "CLEARED", "ERROR"]]
                    for run in runs {
                        rows.append([String(run.id ?? 0), run.source, IncidentOutput.shortTime(run.startedAt, utcOffsetSeconds: tz),
                                     String(run.finishedAt.secondsSince1970 - run.startedAt.secondsSince1970), run.status.rawValue,
                                     String(run.counts.fetched), String(run.counts.inserted),
                                     String(run.counts.updated + run.counts.reopened), String(run.counts.cleared), run.error ?? "-"])
                    }
                    context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment)))
                }
                return ExitStatus.success
            })
    }
}
