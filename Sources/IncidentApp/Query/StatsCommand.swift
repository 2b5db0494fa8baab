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
    static let format = ValueOption<Format>(choice: "format", help: "Output format.", default: "table")
    static let top = ValueOption<Int>("top", placeholder: "count", help: "Only the N values with the most incidents (of each list; with --per, over all buckets).",
                                      what: "a whole number of at least 1") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }

    /// `table` and `json` as before; `csv` (RFC 4180), `ndjson` (one object per count) and
    /// `xlsx` (a workbook, one sheet per list) for programs and spreadsheets: the rows of
    /// ``countTables(_:field:bucket:_:_:)``.
    enum Format: String, CaseIterable, Sendable {
        case table, json, csv, ndjson, xlsx
    }

    static func command(_ context: Context) -> Command {
        Command(
            name: "stats",
            abstract: "Count incidents: active, ended and cleared; by source, category, road and hour of start, or --by a field.",
            discussion: """
            The first line adds up: total = active + ended (by the provider's end time, still listed) + cleared.
            --format csv and ndjson give one row per count (without --by: list, key, count; the totals first as list
            status); xlsx gives a workbook with a sheet per list (--output FILE), days as dates.
            Examples:
              incidents stats --by road --per day --tz KST
              incidents stats --by road --top 5 --format csv
              incidents stats --since 7d --format xlsx --output week-stats.xlsx
              incidents stats --by hour --chart --since 7d
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [by, per, chart, format, top, ListCommand.output, CommonOptions.timeZone, CommonOptions.wide],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let (query, zone) = try QueryTool.query(arguments, context)
        let format = try arguments.value(format) ?? .table
        let json = format == .json
        let field = try arguments.value(by)
        let bucket = try arguments.value(per)
        if bucket != nil && (field == nil || field?.isTime == true) {
            throw UsageError("--per needs --by with a field that is not a time (source, category, road, provider-category, restriction, status)")
        }
        if format != .table && arguments[chart] { throw UsageError("--chart draws a table's counts; leave it out with --format \(format.rawValue)") }
        let width = Terminal.width(context.environment, wide: arguments[CommonOptions.wide])
        // To stdout, or to --output FILE.
        func emit(_ text: String) throws {
            try ListCommand.written(to: arguments, false, context) { out in
                var out = out
                try out.write(text)
                try out.flush()
            }
        }
        var (stats, groups) = try QueryTool.reading(arguments, context) { store in
            let stats = try IncidentReads.statistics(store, query, zone)
            if stats.total == 0 { try ListCommand.explainEmpty(store, arguments, zone, context) }
            return (stats, try field.map { try IncidentReads.counts(store, query, by: $0, per: bucket, zone) })
        }
        if let limit = try arguments.value(top) {
            groups = groups.map { Self.topValues(limit, of: $0) }
            stats.bySource = Array(stats.bySource.prefix(limit))
            stats.byCategory = Array(stats.byCategory.prefix(limit))
            stats.byRoad = Array(stats.byRoad.prefix(limit))
        }
        if [.csv, .ndjson, .xlsx].contains(format) {
            let tables = countTables(stats, field: field, bucket: bucket, groups, zone)
            return try ListCommand.written(to: arguments, format == .xlsx, context) { out in
                var out = out
                switch format {
                case .xlsx: try writeWorkbook(tables, to: &out)
                case .ndjson: try writeNDJSON(tables, to: &out)
                default: try writeCSV(tables, to: &out)
                }
            }
        }
        let totals = "total \(stats.total)   active \(stats.active)   planned \(stats.planned)   suspended \(stats.suspended)   "
            + "ended \(stats.ended)   cleared \(stats.cleared)\n"
        if let field, let groups {
            let keyTitle = title(field.rawValue, time: field.isTime, zone)
            let bucketTitle = bucket.map { title($0.rawValue, time: true, zone) }
            if json { return try emit(groupsJSON(stats, field: field, bucket: bucket, groups)) }
            var out = totals + "\n"
            if arguments[chart] {
                let labelled = (field.isTime && bucket == nil ? filled(groups, field) : groups).map {
                    (($0.bucket.map { shown($0) + "  " } ?? "") + shown($0.key), $0.count)
                }
                out += BarChart.render(labelled, title: [bucketTitle, keyTitle].compactMap { $0 }.joined(separator: "  "), width: width)
            } else {
                let rows = groups.map { ($0.bucket.map { [shown($0)] } ?? []) + [shown($0.key), String($0.count)] }
                out += TextTable.render([[bucketTitle, keyTitle, "COUNT"].compactMap { $0 }] + rows, maxWidth: width)
            }
            return try emit(out)
        }
        let sections = sections(stats)
        if json { return try emit(Self.json(stats)) }
        var out = totals
        for (name, pairs) in sections where !pairs.isEmpty {
            var heading = title(name, time: name == "hour", zone)
            if name == "road" && stats.distinctRoads > pairs.count { heading += " (top \(pairs.count) of \(stats.distinctRoads))" }
            let labelled = pairs.map { (shown($0.0), $0.1) }
            out += "\n" + (arguments[chart]
                ? BarChart.render(labelled, title: heading, width: width)
                : TextTable.render([[heading, "COUNT"]] + labelled.map { [$0.0, String($0.1)] }, maxWidth: width))
        }
        try emit(out)
    }

    /// A group's key or bucket as a table shows it: `-` for none (the empty key, ``GroupCount``).
    static func shown(_ key: String) -> String { key.isEmpty ? "-" : key }

    /// The `n` values with the most incidents, in their order; per bucket, the `n` values with
    /// the most incidents over all buckets, each with all of its buckets.
    static func topValues(_ n: Int, of groups: [GroupCount]) -> [GroupCount] {
        var totals: [String: Int] = [:]
        var firstSeen: [String: Int] = [:]
        for (index, group) in groups.enumerated() {
            totals[group.key, default: 0] += group.count
            if firstSeen[group.key] == nil { firstSeen[group.key] = index }
        }
        let ranked = firstSeen.sorted { a, b in
            let (countA, countB) = (totals[a.key] ?? 0, totals[b.key] ?? 0)
            return countA != countB ? countA > countB : a.value < b.value
        }
        let kept = Set(ranked.prefix(n).map(\.key))
        return groups.filter { kept.contains($0.key) }
    }

    /// A list of counts as rows: its name (a sheet's), column names, and the rows.
    struct CountTable {
        var name: String
        var header: [String]
        var rows: [[SheetCell]]
    }

    /// The counts as tables: with `--by`, one (the bucket, the field, `count`); without, the
    /// totals (`status`) and one per list (`source`, `category`, `road`, `hour`), each `key`,
    /// `count`. Days are dates, counts numbers, no value an empty cell (`null` in NDJSON).
    static func countTables(_ stats: IncidentStatistics, field: IncidentGrouping?, bucket: TimeBucket?, _ groups: [GroupCount]?,
                            _ zone: DisplayZone) -> [CountTable] {
        func cell(_ text: String, day: Bool) -> SheetCell {
            if text.isEmpty { return .empty }
            if day, let date = UTCInstant(rfc3339: text + "T00:00:00Z") { return .date(date) }
            return .text(text)
        }
        if let field, let groups {
            let header = (bucket.map { [$0.rawValue] } ?? []) + [field.rawValue, "count"]
            return [CountTable(name: field.rawValue, header: header, rows: groups.map { group in
                (bucket.map { [cell(group.bucket ?? "", day: $0 == .day)] } ?? []) + [cell(group.key, day: field == .day), .number(Double(group.count))]
            })]
        }
        let totals = [("total", stats.total), ("active", stats.active), ("planned", stats.planned), ("suspended", stats.suspended),
                      ("ended", stats.ended), ("cleared", stats.cleared)]
        return [("status", totals), ("source", stats.bySource), ("category", stats.byCategory), ("road", stats.byRoad),
                ("hour", stats.byHour)].map { name, pairs in
            CountTable(name: name, header: ["key", "count"], rows: pairs.map { [cell($0.0, day: false), .number(Double($0.1))] })
        }
    }

    /// The text of a cell in CSV and NDJSON: days as `yyyy-mm-dd`, counts as whole numbers.
    static func plain(_ cell: SheetCell) -> String {
        switch cell {
        case .text(let text): text
        case .number(let value): String(Int(value))
        case .date(let date), .dateTime(let date): String(date.rfc3339.prefix(10))
        case .empty: ""
        }
    }

    /// The rows of `tables` as one list; with several tables, each row starts with its table's
    /// name under `list`.
    private static func rows(_ tables: [CountTable]) -> (header: [String], rows: [[SheetCell]]) {
        guard tables.count > 1 else { return (tables.first?.header ?? [], tables.first?.rows ?? []) }
        return (["list"] + (tables.first?.header ?? []), tables.flatMap { table in table.rows.map { [.text(table.name)] + $0 } })
    }

    static func writeCSV(_ tables: [CountTable], to out: inout OutputBuffer) throws {
        let (header, rows) = rows(tables)
        for line in [header] + rows.map({ $0.map(plain) }) {
            for (index, field) in line.enumerated() {
                if index > 0 { out.write(ascii: ",") }
                try out.writeCSVField(field)
            }
            try out.write("\r\n")
        }
        try out.flush()
    }

    static func writeNDJSON(_ tables: [CountTable], to out: inout OutputBuffer) throws {
        let (header, rows) = rows(tables)
        for row in rows {
            let fields = zip(header, row).map { name, cell -> (String, FieldValue) in
                if case .number(let value) = cell { return (name, .integer(Int64(value))) }
                if case .empty = cell { return (name, .text(nil)) }
                return (name, .text(plain(cell)))
            }
            try out.write(IncidentOutput.object(fields) + "\n")
        }
        try out.flush()
    }

    /// One sheet per table, in a workbook copied to `out`.
    static func writeWorkbook(_ tables: [CountTable], to out: inout OutputBuffer) throws {
        let workbook = try Workbook()
        for table in tables {
            try workbook.addSheet(table.name, header: table.header)
            for row in table.rows { try workbook.write(row) }
        }
        try workbook.close()
        try workbook.copy(to: &out)
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
    /// have no incident added at zero, so that a chart's gaps show (no start comes last).
    static func filled(_ groups: [GroupCount], _ field: IncidentGrouping) -> [GroupCount] {
        var counts = Dictionary(groups.map { ($0.key, $0.count) }, uniquingKeysWith: +)
        let noStart = counts.removeValue(forKey: "")
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
        if noStart != nil { keys.append("") }
        return keys.map { GroupCount(key: $0, count: $0.isEmpty ? noStart ?? 0 : counts[$0] ?? 0) }
    }

    /// `"total": N, "active": N, "planned": N, "suspended": N, "ended": N, "cleared": N`.
    static func totalsJSON(_ stats: IncidentStatistics) -> String {
        "\"total\": \(stats.total), \"active\": \(stats.active), \"planned\": \(stats.planned), \"suspended\": \(stats.suspended), "
            + "\"ended\": \(stats.ended), \"cleared\": \(stats.cleared)"
    }

    static func groupsJSON(_ stats: IncidentStatistics, field: IncidentGrouping, bucket: TimeBucket?, _ groups: [GroupCount]) -> String {
        func value(_ key: String) -> String { key.isEmpty ? "null" : JSONString.quoted(key) }
        let rows = groups.map { group in
            "{" + (bucket.map { "\"\($0.rawValue)\": \(value(group.bucket ?? "")), " } ?? "")
                + "\(JSONString.quoted(field.rawValue)): \(value(group.key)), \"count\": \(group.count)}"
        }
        return "{" + totalsJSON(stats) + ", \"by\": \(JSONString.quoted(field.rawValue)), \"per\": \(bucket.map { JSONString.quoted($0.rawValue) } ?? "null"), "
            + "\"groups\": " + JSONText.array(rows).dropLast() + "}\n"
    }
}
