import Foundation
import IncidentCore

/// `incidents timeline --per hour|day [--by FIELD] [--since … --until …]`: how many incidents
/// were active in each hour or day, by the transition log (docs/analyst.md, "History and changes").
enum TimelineCommand {
    enum Format: String, CaseIterable, Sendable {
        case table, csv, json, chart
    }
    enum Grouping: String, CaseIterable, Sendable {
        case category, source, road
        var field: IncidentGrouping { switch self { case .category: .category; case .source: .source; case .road: .road } }
    }

    static let per = ValueOption<TimeBucket>(choice: "per", help: "The bucket: an hour or a day in --tz.", default: "hour")
    static let by = ValueOption<Grouping>(choice: "by", help: "Count each value of this field apart.")
    static let since = ValueOption<String>("since", placeholder: "instant", help: "The first bucket holds this instant.",
                                           default: "24 hours (--per hour) or 30 days (--per day) before --until")
    static let until = ValueOption<String>("until", placeholder: "instant", help: "The end of the window (excluded).", default: "now")
    static let format = ValueOption<Format>(choice: "format", help: "Output format; chart draws bars in the terminal.", default: "table")
    /// The filters that mean the same in a window of time (not --active, --status, --since or --until).
    static let filters: [any OptionDeclaration] = ([.source, .category, .road, .bbox, .near, .radius, .search] as [IncidentFilter.Parameter]).map(\.option)

    static func command(_ context: Context) -> Command {
        Command(
            name: "timeline",
            abstract: "Count the incidents active in each hour or day, by poll evidence.",
            discussion: """
            An incident counts in every bucket in which it was active at some moment: from the poll that first listed it (or
            listed it again) to the complete poll that no longer did, or to the provider's end time.

            Examples:
              incidents timeline --per hour --since 24h
              incidents timeline --per day --since 30d --by category --format csv
            """,
            options: QueryTool.databaseOptions + filters + [per, by, since, until, format, CommonOptions.timeZone, CommonOptions.wide],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        // --since and --until bound the buckets here, not the incidents' start as the filters of
        // those names do in `list`: an incident that started before --since counts while active.
        var (query, zone) = try QueryTool.query(arguments, context, excluding: [since.option.name, until.option.name])
        let size = try arguments.value(per) ?? .hour
        let now = context.clock.now()
        func instant(_ option: ValueOption<String>) throws -> UTCInstant? {
            try arguments.value(option) { try ValueParsers.instant($0, now: now, zone: zone) }
        }
        let end = try instant(until) ?? now
        let start = try instant(since) ?? end.adding(seconds: size == .hour ? -86_400 : -30 * 86_400)
        guard start < end else { throw UsageError("--since must be before --until") }
        guard (end.secondsSince1970 - start.secondsSince1970) / (size == .hour ? 3600 : 86_400) <= 100_000 else {
            throw UsageError("the window holds more than 100,000 buckets: narrow it or count --per day")
        }
        query.now = end
        let field = try arguments.value(by)?.field
        let counts = try QueryTool.reading(arguments, context) { reader in
            guard let counter = reader as? any TimelineCounter else { throw QueryError("this store has no transition log") }
            return try Timeline.count(counter, matching: query, by: field, per: size, since: start, until: end,
                                      offsetAt: zone.offsetSeconds(at:))
        }
        let groupName = try arguments.value(by)?.rawValue
        switch try arguments.value(format) ?? .table {
        case .table:
            var rows = [[size == .hour ? "HOUR (\(zone.label))" : "DAY (\(zone.label))"] + (groupName.map { [$0.uppercased()] } ?? []) + ["ACTIVE"]]
            rows += counts.map { [$0.bucket] + ($0.key.map { [StatsCommand.shown($0)] } ?? []) + [String($0.count)] }
            context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                            flexible: groupName == nil ? [] : [1]))
        case .csv:
            var text = ""
            var out = OutputBuffer { text += $0 }
            for row in [["start", groupName, "active"].compactMap { $0 }]
                + counts.map({ [$0.start.rfc3339] + ($0.key.map { [$0] } ?? []) + [String($0.count)] }) {
                for (index, cell) in row.enumerated() {
                    if index > 0 { out.write(ascii: ",") }
                    try out.writeCSVField(cell)
                }
                out.write(ascii: "\r")
                out.write(ascii: "\n")
            }
            try out.flush()
            context.output(text)
        case .json:
            context.output(JSONText.array(counts.map { count in
                IncidentOutput.object([("start", .instant(count.start)), ("bucket", .text(count.bucket))]
                    + (groupName.map { [($0, .text(count.key.flatMap { $0.isEmpty ? nil : $0 }))] } ?? []) + [("active", .integer(Int64(count.count)))])
            }))
        case .chart:
            let rows = counts.map { (label: $0.bucket + ($0.key.map { " " + StatsCommand.shown($0) } ?? ""), count: $0.count) }
            context.output(BarChart.render(rows, title: "Active incidents per \(size.rawValue) (\(zone.label))",
                                           width: Terminal.width(context.environment, wide: arguments[CommonOptions.wide])))
        }
    }
}
