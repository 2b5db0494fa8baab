import Foundation
import IncidentCore
import IncidentJSON

/// `incidents stats`: how many incidents are active, ended by the provider and cleared, and
/// counts by source, category, road and hour of start; or by one chosen field (`--by`), per
/// day or hour (`--per`); as tables or bars (`--chart`).
enum StatsCommand {
    static let by = ValueOption<IncidentGrouping>(choice: "by", help: "Count by this field only (hour: of the day; day: the date; both in --tz).")
    static let per = ValueOption<TimeBucket>(choice: "per", help: "With --by FIELD: count each value per local day or hour of start.")
    static let chart = Flag("chart", help: "Draw the counts as bars fitted to the terminal width.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "stats",
            abstract: "Count incidents: active, ended and cleared; by source, category, road and hour of start, or --by a field.",
            discussion: """
            The first line adds up: total = active + ended (by the provider's end time, still listed) + cleared.
            Examples:
              incidents stats --by road --per day --tz KST
              incidents stats --by hour --chart --since 7d
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [by, per, chart, CommonOptions.tableOrJSON, CommonOptions.timeZone, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let (query, zone) = try QueryTool.query(arguments, context)
        let json = try arguments.value(CommonOptions.tableOrJSON) == .json
        let field = try arguments.value(by)
        let bucket = try arguments.value(per)
        if bucket != nil && (field == nil || field?.isTime == true) {
            throw UsageError("--per needs --by with a field that is not a time (source, category, road, provider-category, restriction, status)")
        }
        if json && arguments[chart] { throw UsageError("--chart draws a table's counts; leave it out with --format json") }
        let width = Terminal.width(context.environment, wide: arguments[CommonOptions.wide])
        let (stats, groups) = try QueryTool.reading(arguments, context) { store in
            (try IncidentReads.statistics(store, query, zone), try field.map { try IncidentReads.counts(store, query, by: $0, per: bucket, zone) })
        }
        let totals = "total \(stats.total)   active \(stats.active)   planned \(stats.planned)   suspended \(stats.suspended)   "
            + "ended \(stats.ended)   cleared \(stats.cleared)\n"
        if let field, let groups {
            let keyTitle = title(field.rawValue, time: field.isTime, zone)
            let bucketTitle = bucket.map { title($0.rawValue, time: true, zone) }
            if json { return context.output(groupsJSON(stats, field: field, bucket: bucket, groups)) }
            var out = totals + "\n"
            if arguments[chart] {
                let labelled = (field.isTime && bucket == nil ? filled(groups, field) : groups).map {
                    (($0.bucket.map { $0 + "  " } ?? "") + $0.key, $0.count)
                }
                out += BarChart.render(labelled, title: [bucketTitle, keyTitle].compactMap { $0 }.joined(separator: "  "), width: width)
            } else {
                let rows = groups.map { ($0.bucket.map { [$0] } ?? []) + [$0.key, String($0.count)] }
                out += TextTable.render([[bucketTitle, keyTitle, "COUNT"].compactMap { $0 }] + rows, maxWidth: width)
            }
            return context.output(out)
        }
        let sections = sections(stats)
        if json { return context.output(Self.json(stats)) }
        var out = totals
        for (name, pairs) in sections where !pairs.isEmpty {
            var heading = title(name, time: name == "hour", zone)
            if name == "road" && stats.distinctRoads > pairs.count { heading += " (top \(pairs.count) of \(stats.distinctRoads))" }
            out += "\n" + (arguments[chart]
                ? BarChart.render(pairs, title: heading, width: width)
                : TextTable.render([[heading, "COUNT"]] + pairs.map { [$0.0, String($0.1)] }, maxWidth: width))
        }
        context.output(out)
    }

    /// `--format json` without `--by` (also `incidents serve`'s `/stats`).
    static func json(_ stats: IncidentStatistics) -> String {
        func object(_ pairs: [(String, Int)]) -> String {
            "{" + pairs.map { "\(JSONString.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }
        return "{" + totalsJSON(stats) + ", \"distinct_roads\": \(stats.distinctRoads), "
            + sections(stats).map { "\"by_\($0.0)\": \(object($0.1))" }.joined(separator: ", ") + "}\n"
    }

    /// The counts by source, category, road and hour, in that order.
    static func sections(_ stats: IncidentStatistics) -> [(String, [(String, Int)])] {
        [("source", stats.bySource), ("category", stats.byCategory), ("road", stats.byRoad), ("hour", stats.byHour)]
    }

    /// `ROAD`, or `HOUR (+09:00)` for a time in the zone.
    static func title(_ name: String, time: Bool, _ zone: DisplayZone) -> String {
        time ? "\(name.uppercased()) (\(zone.label))" : name.uppercased()
    }

    /// Time groups with the hours of the day, or the dates from the first to the last, that
    /// have no incident added at zero, so that a chart's gaps show (`-`, no start, comes last).
    static func filled(_ groups: [GroupCount], _ field: IncidentGrouping) -> [GroupCount] {
        var counts = Dictionary(groups.map { ($0.key, $0.count) }, uniquingKeysWith: +)
        let noStart = counts.removeValue(forKey: "-")
        var keys: [String]
        if field == .hour {
            keys = (0..<24).map { String(format: "%02d", $0) }
        } else {
            let dates = counts.keys.compactMap { UTCInstant(rfc3339: $0 + "T00:00:00Z") }
            // Ten years of days at most: a stray date decades away would fill thousands of lines.
            guard let first = dates.min(), let last = dates.max(), last.secondsSince1970 - first.secondsSince1970 <= 3653 * 86_400
            else { return groups }
            keys = stride(from: first.secondsSince1970, through: last.secondsSince1970, by: 86_400).map {
                String(UTCInstant(secondsSince1970: $0).rfc3339.prefix(10))
            }
        }
        if noStart != nil { keys.append("-") }
        return keys.map { GroupCount(key: $0, count: $0 == "-" ? noStart ?? 0 : counts[$0] ?? 0) }
    }

    /// `"total": N, "active": N, "planned": N, "suspended": N, "ended": N, "cleared": N`.
    static func totalsJSON(_ stats: IncidentStatistics) -> String {
        "\"total\": \(stats.total), \"active\": \(stats.active), \"planned\": \(stats.planned), \"suspended\": \(stats.suspended), "
            + "\"ended\": \(stats.ended), \"cleared\": \(stats.cleared)"
    }

    static func groupsJSON(_ stats: IncidentStatistics, field: IncidentGrouping, bucket: TimeBucket?, _ groups: [GroupCount]) -> String {
        let rows = groups.map { group in
            "{" + (bucket.map { "\"\($0.rawValue)\": \(JSONString.quoted(group.bucket ?? "-")), " } ?? "")
                + "\(JSONString.quoted(field.rawValue)): \(JSONString.quoted(group.key)), \"count\": \(group.count)}"
        }
        return "{" + totalsJSON(stats) + ", \"by\": \(JSONString.quoted(field.rawValue)), \"per\": \(bucket.map { JSONString.quoted($0.rawValue) } ?? "null"), "
            + "\"groups\": " + JSONText.array(rows).dropLast() + "}\n"
    }
}
