import Foundation
import IncidentCore
import IncidentSQLite

/// `incidents`: query the incidents `incident-scheduler` stored. Never writes to the database.
public enum QueryTool {
    public static let version = SchedulerTool.version

    public static func command(_ context: Context) -> Command {
        Command(
            name: "incidents",
            abstract: "Query the traffic incidents stored by incident-scheduler.",
            discussion: "Reads the database only; safe to run while an ingest is writing (it sees the last committed poll).",
            subcommands: [listCommand(context)])
    }

    enum Format: String, CaseIterable {
        case table, json
    }

    static func listCommand(_ context: Context) -> Command {
        Command(
            name: "list",
            abstract: "List incidents, newest start first.",
            options: [
                SchedulerTool.databaseOption,
                .flag("active", help: "Only incidents still listed by their source and not ended by the provider."),
                .repeating("source", placeholder: "name", help: "Only this source (repeat for several)."),
                .value("order", placeholder: IncidentOrder.allCases.map(\.rawValue).joined(separator: "|"),
                       help: "Sort order.", default: IncidentOrder.started.rawValue),
                .value("limit", short: "n", placeholder: "count", help: "At most this many incidents."),
                .value("format", placeholder: Format.allCases.map(\.rawValue).joined(separator: "|"),
                       help: "Output format: an aligned table for people, JSON for programs.", default: "table"),
            ],
            run: { arguments in
                // Validate everything before touching the database.
                let format = try arguments.value("format", as: "one of \(Format.allCases.map(\.rawValue).joined(separator: ", "))") {
                    Format(rawValue: $0)
                } ?? .table
                let order = try arguments.value("order", as: "one of \(IncidentOrder.allCases.map(\.rawValue).joined(separator: ", "))") {
                    IncidentOrder(rawValue: $0)
                } ?? .started
                let limit = try arguments.value("limit", as: "a whole number of at least 1") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
                let query = IncidentQuery(now: context.clock.now(), activeOnly: arguments.flag("active"),
                                          sources: arguments.all("source"), order: order, limit: limit)
                let path = context.databasePath(option: arguments.value("database"))
                let store: SQLiteIncidentStore
                do {
                    store = try SQLiteIncidentStore(readingFrom: path, clock: context.clock)
                } catch let error as StoreOpenError {
                    StandardError.writeLine("error: \(error)")
                    return ExitStatus.noInput
                }
                let incidents = try QueryIncidents(reader: store, clock: context.clock).list(query)
                switch format {
                case .json: context.output(IncidentJSON.array(incidents))
                case .table: context.output(table(incidents, width: Terminal.width(context.environment)))
                }
                return ExitStatus.success
            })
    }

    static func table(_ incidents: [StoredIncident], width: Int) -> String {
        var rows = [["ID", "SOURCE", "CATEGORY", "STARTED (UTC)", "ROAD", "LOCATION", "RESTRICTION", "DESCRIPTION"]]
        for stored in incidents {
            let incident = stored.incident
            rows.append([
                String(stored.id), incident.source, incident.category.rawValue,
                incident.startedAt.map { String($0.rfc3339.dropLast(4)).replacingOccurrences(of: "T", with: " ") } ?? "-",
                incident.road ?? "-", incident.location ?? "-", incident.restriction ?? "-", incident.description ?? "-",
            ])
        }
        return TextTable.render(rows, maxWidth: width)
    }
}

/// JSON for programs: one object per incident, snake_case keys named after the database
/// columns, numbers as JSON numbers, instants as RFC 3339 UTC text, absent values as null.
enum IncidentJSON {
    static func object(_ stored: StoredIncident) -> String {
        let i = stored.incident
        func text(_ value: String?) -> String { value.map(JSONText.quoted) ?? "null" }
        func number(_ value: Double?) -> String { value.map { "\($0)" } ?? "null" }
        func instant(_ value: UTCInstant?) -> String { text(value?.rfc3339) }
        let fields: [(String, String)] = [
            ("id", String(stored.id)), ("source", text(i.source)), ("external_id", text(i.externalID)),
            ("category", text(i.category.rawValue)), ("provider_category", text(i.providerCategory)),
            ("description", text(i.description)), ("road", text(i.road)), ("location", text(i.location)),
            ("direction", text(i.direction)), ("restriction", text(i.restriction)),
            ("latitude", number(i.coordinate?.latitude)), ("longitude", number(i.coordinate?.longitude)),
            ("link_id", text(i.linkID)), ("started_at", instant(i.startedAt)), ("confirmed_at", instant(i.confirmedAt)),
            ("expected_end_at", instant(i.expectedEndAt)), ("ended_at", instant(i.endedAt)),
            ("first_seen_at", instant(stored.firstSeenAt)), ("last_seen_at", instant(stored.lastSeenAt)),
            ("cleared_at", instant(stored.clearedAt)), ("revision", String(stored.revision)),
        ]
        return "{" + fields.map { "\(JSONText.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    static func array(_ incidents: [StoredIncident]) -> String {
        guard !incidents.isEmpty else { return "[]\n" }
        return "[\n" + incidents.map { "  " + object($0) }.joined(separator: ",\n") + "\n]\n"
    }
}
