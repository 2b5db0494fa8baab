import Foundation
import IncidentCore

/// `incidents list`: the incidents matching the filters, in a chosen format.
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
            Examples:
              incidents list --active --road 경부 --near 37.2636,127.0286 --radius 10km
              incidents list --since 2h --category accident --format geojson > accidents.geojson
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [order, limit, format, CommonOptions.timeZone],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        var (query, zone) = try QueryTool.query(arguments, context)
        let format = try arguments.value(format) ?? .table
        query.order = try arguments.value(order) ?? (query.near == nil ? .started : .distance)
        if query.order == .distance && query.near == nil { throw UsageError("--order distance needs --near LAT,LON") }
        query.limit = try arguments.value(limit)
        let incidents = try QueryTool.reading(arguments, context) { try QueryIncidents(reader: $0).list(query) }
        context.output(IncidentOutput.render(incidents, as: format, width: Terminal.width(context.environment), zone: zone))
    }
}
