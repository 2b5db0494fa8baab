import Foundation
import IncidentCore

/// `incidents stats`: counts by source, category, road and hour of start.
enum StatsCommand {
    static let format = ValueOption<TableOrJSON>(choice: "format", help: "Output format.", default: "table")

    static func command(_ context: Context) -> Command {
        Command(
            name: "stats",
            abstract: "Count incidents by source, category, road and hour of start; active vs cleared.",
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [format, CommonOptions.timeZone],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let (query, zone) = try QueryTool.query(arguments, context)
        let json = try arguments.value(format) == .json
        let stats = try QueryTool.reading(arguments, context) { store in
            var stats = try store.statistics(matching: query, utcOffsetSeconds: zone.fixedOffsetSeconds ?? 0)
            if zone.fixedOffsetSeconds == nil { stats.byHour = try hours(store, query, zone) }
            return stats
        }
        let groups = [("source", stats.bySource), ("category", stats.byCategory), ("road", stats.byRoad), ("hour", stats.byHour)]
        if json {
            func object(_ pairs: [(String, Int)]) -> String {
                "{" + pairs.map { "\(JSONText.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
            }
            context.output("{\"total\": \(stats.total), \"active\": \(stats.active), \"cleared\": \(stats.cleared), "
                           + groups.map { "\"by_\($0.0)\": \(object($0.1))" }.joined(separator: ", ") + "}\n")
            return
        }
        var out = "total \(stats.total)   active \(stats.active)   cleared \(stats.cleared)\n"
        for (name, pairs) in groups where !pairs.isEmpty {
            let title = name == "hour" ? "HOUR (\(zone.label))" : name.uppercased()
            out += "\n" + TextTable.render([[title, "COUNT"]] + pairs.map { [$0.0, String($0.1)] },
                                           maxWidth: Terminal.width(context.environment))
        }
        context.output(out)
    }

    /// Counts by local hour of start in a zone whose offset changes (daylight saving time): each
    /// start at the offset in force then, which the store's fixed-offset grouping cannot do.
    /// Keys `00`…`23`, and `-` for no start, in key order, as the store gives them.
    static func hours(_ store: any IncidentReader, _ query: IncidentQuery, _ zone: DisplayZone) throws -> [(String, Int)] {
        var all = query
        all.limit = nil
        var counts: [String: Int] = [:]
        try store.forEachIncident(matching: all) { stored in
            let key = stored.incident.startedAt.map { String(zone.shortTime($0).dropFirst(11).prefix(2)) } ?? "-"
            counts[key, default: 0] += 1
        }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
