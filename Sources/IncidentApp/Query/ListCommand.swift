import Foundation
import IncidentCore

/// `incidents list`: the incidents matching the filters, in a chosen format, written as the
/// store reads them.
enum ListCommand {
    static let order = ValueOption<IncidentOrder>(choice: "order", help: "Sort order (distance needs --near).",
                                                  default: "started, or distance with --near")
    static let limit = CommonOptions.limit(help: "At most this many incidents.")
    static let format = ValueOption<IncidentOutput.Format>(choice: "format", help: "Output format.", default: "table")

    static func command(_ context: Context) -> Command {
        Command(
            name: "list",
            abstract: "List incidents (newest start first), filtered.",
            discussion: """
            STATUS is active, ended (the provider's end time has passed) or cleared (no longer listed by its
            source). With --near, DISTANCE is the great-circle distance to the point (distance_m in other formats).
            The table's column widths are fitted to the first \(StreamingTable.sampleRows) rows; later rows are cut to them.
            --format csv is RFC 4180 for programs; csv-excel is for spreadsheets (BOM, formula guard, local times in --tz).

            Examples:
              incidents list --active --road 경부 --near 37.2636,127.0286 --radius 10km
              incidents list --since 2h --category accident --format geojson > accidents.geojson
              incidents list --since 7d --tz KST --format csv-excel > week.csv
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [ListAtMoment.at]
                + [order, limit, format, CommonOptions.timeZone, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let query = try listQuery(arguments, context)
        let format = try arguments.value(format) ?? .table
        var writer = IncidentOutput.writer(format, to: OutputBuffer(context), IncidentOutput.Settings(
            width: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]), zone: query.zone,
            withDistance: query.query.near != nil))
        try QueryTool.reading(arguments, context) { reader in
            if let instant = query.query.listedAt {
                try ListAtMoment.show(reader, at: instant, zone: query.zone, onStdout: format == .table, context)
            }
            try IncidentReads.list(reader, query.query) { try writer.write($0) }
        }
        try writer.finish()
    }

    /// The filters plus `--order` and `--limit` (shared with `map`).
    static func listQuery(_ arguments: ParsedArguments, _ context: Context) throws -> (query: IncidentQuery, zone: DisplayZone) {
        var (query, zone) = try QueryTool.query(arguments, context)
        query.order = try arguments.value(order) ?? (query.near == nil ? .started : .distance)
        if query.order == .distance && query.near == nil { throw UsageError("--order distance needs --near LAT,LON") }
        query.limit = try arguments.value(limit)
        try ListAtMoment.apply(arguments, context, zone: zone, to: &query)
        return (query, zone)
    }
}
