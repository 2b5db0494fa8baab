import Foundation
import IncidentCore
import IncidentFeeds

/// `incidents`: query the incidents `incident-scheduler` stored. Never changes them (the only
/// write is bringing the derived search index up to date for `--search`). Each subcommand is
/// its own file; this one holds the root and what they share.
public enum QueryTool {
    public static func command(_ context: Context) -> Command {
        Command(
            name: "incidents",
            abstract: "Query the traffic incidents stored by incident-scheduler.",
            discussion: """
            Reads a consistent snapshot; safe while an ingest is writing (it sees the last committed poll).
            Instants: RFC 3339 (2023-03-21T05:13:00Z), a date (2023-03-21), a local time ("2023-03-21 14:13")
            read in --tz, or a duration ago (90s, 15m, 2h, 7d). Times are shown in --tz (default UTC).
            """,
            subcommands: [ListCommand.command(context), ShowCommand.command(context), StatsCommand.command(context),
                          MapCommand.command(context), RunsCommand.command(context),
                          // History and changes (issue 22).
                          ChangesCommand.command(context), TimelineCommand.command(context)])
    }

    /// `--database` and `--config` (whose `database` is used), as for the scheduler.
    static let databaseOptions: [any OptionDeclaration] = [CommonOptions.database, CommonOptions.queryConfig]

    // MARK: Filters shared by list and stats

    static let active = Flag("active", help: "Only incidents in force now: listed by their source, started, not suspended, not ended (--status active).")
    static let status = RepeatingOption<IncidentStatus>(
        "status", placeholder: IncidentStatus.allCases.map(\.rawValue).joined(separator: "|"),
        help: "Only incidents in this state now (repeatable).",
        what: "one of \(IncidentStatus.allCases.map(\.rawValue).joined(separator: ", "))") { IncidentStatus(rawValue: $0) }
    static let source = RepeatingOption<String>("source", placeholder: "name", help: "Only this source (repeatable).",
                                                what: "a source name") { $0.nonEmptyTrimmed?.nfc }
    static let category = RepeatingOption<IncidentCategory>(
        "category", placeholder: IncidentCategory.allCases.map(\.rawValue).joined(separator: "|"), help: "Only this category (repeatable).",
        what: "one of \(IncidentCategory.allCases.map(\.rawValue).joined(separator: ", "))") { IncidentCategory(rawValue: $0) }
    static let since = ValueOption<String>("since", placeholder: "instant", help: "Started at or after this instant.")
    static let until = ValueOption<String>("until", placeholder: "instant", help: "Started before this instant.")
    static let seenSince = ValueOption<String>("seen-since", placeholder: "instant", help: "Seen by a poll at or after this instant.")
    /// Text compared with stored text, which is NFC: normalized to NFC too, so that decomposed
    /// Hangul (as some clipboards produce) finds what it looks like.
    static let road = ValueOption<String>("road", placeholder: "text", help: "The road name contains this text (e.g. 경부).",
                                          what: "a text") { $0.nonEmptyTrimmed?.nfc }
    static let bbox = ValueOption<BoundingBox>("bbox", placeholder: "minLon,minLat,maxLon,maxLat",
                                               help: "Only positions inside this WGS84 box.", what: "a box") { try ValueParsers.boundingBox($0) }
    static let near = ValueOption<Coordinate>("near", placeholder: "lat,lon", help: "Only positions within --radius of this WGS84 point.",
                                              what: "a point") { try ValueParsers.point($0) }
    static let radius = ValueOption<Double>("radius", placeholder: "distance", help: "Radius for --near: 500m, 5km.", default: "5km",
                                            what: "a distance") { try ValueParsers.distance($0) }
    static let search = ValueOption<String>("search", placeholder: "text",
                                            help: "Every word occurs in the description or location (full-text).",
                                            what: "a text") { $0.nonEmptyTrimmed?.nfc }

    static let filterOptions: [any OptionDeclaration] = [active, status, source, category, since, until, seenSince, road, bbox, near, radius, search]

    /// Parses the shared filters (the validate step: nothing is opened before this succeeds).
    static func query(_ arguments: ParsedArguments, _ context: Context) throws -> (IncidentQuery, zone: DisplayZone) {
        let now = context.clock.now()
        let zone = try arguments.timeZone()
        func instant(_ option: ValueOption<String>) throws -> UTCInstant? {
            try arguments.value(option) { try ValueParsers.instant($0, now: now, zone: zone) }
        }
        var query = IncidentQuery(now: now, activeOnly: arguments[active], sources: try arguments.values(source))
        let statuses = try arguments.values(status)
        if !statuses.isEmpty {
            guard !arguments[active] else { throw UsageError("--active is --status active; give one or the other") }
            query.statuses = statuses
        }
        query.categories = try arguments.values(category)
        query.startedSince = try instant(since)
        query.startedUntil = try instant(until)
        query.seenSince = try instant(seenSince)
        query.roadContains = try arguments.value(road)
        query.roadReference = query.roadContains.flatMap(KoreanRoads.canonical(query:))
        query.boundingBox = try arguments.value(bbox)
        query.near = try arguments.value(near)
        if let radius = try arguments.value(radius) {
            guard query.near != nil else { throw UsageError("--radius needs --near LAT,LON") }
            query.radiusMeters = radius
        }
        query.search = try arguments.value(search)
        return (query, zone)
    }

    /// Opens the store for reading and runs `body` with it. A store error is a
    /// ``DatabaseFailure`` naming the database (exit 1); a query the store cannot run as given
    /// stays a ``QueryError`` (exit 64), and an output file that cannot be written an ``OutputFailure``.
    /// - Throws: ``StoreMissing`` when the database does not exist (exit 66).
    static func reading<Result>(_ arguments: ParsedArguments, _ context: Context,
                                _ body: (any IncidentReader) throws -> Result) throws -> Result {
        let path = try context.databasePath(arguments)
        do {
            return try body(try Stores.openForReading(path, clock: context.clock))
        } catch let error as StoreMissing {
            throw error
        } catch let error as QueryError {
            throw error
        } catch let error as OutputFailure {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
    }
}
