import Foundation
import IncidentCore

/// `incidents list`: the incidents matching the filters, in a chosen format, written as the
/// store reads them.
enum ListCommand {
    static let order = ValueOption<IncidentOrder>(choice: "order", help: "Sort order (distance needs --near).",
                                                  default: "started, or distance with --near")
    static let limit = CommonOptions.limit(help: "At most this many incidents.")
    static let format = ValueOption<IncidentOutput.Format>(choice: "format", help: "Output format.", default: "table")
    static let output = ValueOption<String>("output", short: "o", placeholder: "file",
                                            help: "Write to this file (replaced once complete) instead of stdout; --format xlsx needs it.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "list",
            abstract: "List incidents (newest start first), filtered.",
            discussion: """
            STATUS is active, ended (the provider's end time has passed) or cleared (no longer listed by its
            source). With --near, DISTANCE is the great-circle distance to the point (distance_m in other formats).
            The table's column widths are fitted to the first \(StreamingTable.sampleRows) rows; later rows are cut to them.
            --format csv is RFC 4180 for programs; csv-excel is for spreadsheets (BOM, formula guard, local times in --tz);
            xlsx is a workbook (times as dates in --tz, numbers as numbers, frozen header, autofilter) written with --output.

            Examples:
              incidents list --active --road 경부 --near 37.2636,127.0286 --radius 10km
              incidents list --since 2h --category accident --format geojson > accidents.geojson
              incidents list --since 7d --tz KST --format csv-excel > week.csv
              incidents list --since 7d --tz KST --format xlsx --output week.xlsx
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions + [ListAtMoment.at]
                + [order, limit, format, output, CommonOptions.timeZone, CommonOptions.wide],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let query = try listQuery(arguments, context)
        let format = try arguments.value(format) ?? .table
        // A table for a person at a terminal is a page, as `runs` is; a pipe or a file gets every row.
        let page = format == .table && arguments.values[limit.option.name] == nil && arguments.values[output.option.name] == nil
            && Terminal.isInteractive(context) ? Terminal.pageRows(context.environment) : nil
        var (shown, more) = (0, 0)
        try written(to: arguments, format == .xlsx, context) { out in
            var writer = IncidentOutput.writer(format, to: out, IncidentOutput.Settings(
                width: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]), zone: query.zone,
                withDistance: query.query.near != nil))
            try QueryTool.reading(arguments, context) { reader in
                if let instant = query.query.listedAt {
                    try ListAtMoment.show(reader, at: instant, zone: query.zone, onStdout: format == .table, context)
                }
                if var fast = writer.listingRowWriter, let rows = reader.listingRows {
                    // Exports from a store that reads rows in place: written from the statement's columns (issue 23).
                    try IncidentReads.listRows(rows, query.query) { row, cells in
                        shown += 1
                        try fast.write(row, cells)
                    }
                    try fast.finish()
                } else {
                    try IncidentReads.list(reader, query.query) { row in
                        if let page, shown == page { return more += 1 }
                        shown += 1
                        try writer.write(row)
                    }
                    try writer.finish()
                }
                if shown == 0 { try explainEmpty(reader, arguments, query.zone, listedAt: query.query.listedAt, context) }
            }
        }
        if more > 0 { context.output("\(more) more; use --limit or a pipe (| less) to see them\n") }
    }

    /// Says on stderr which filter emptied a result and the filter it may have been confused
    /// with (``IncidentReads/emptyingFilters(_:parameters:context:)``): `--since` filters by
    /// start, `--seen-since` by when a poll last saw the incident. With `--at` (`listedAt`), says
    /// whether anything at all was listed then, since the other filters' counts are of now.
    static func explainEmpty(_ reader: any IncidentReader, _ arguments: ParsedArguments, _ zone: DisplayZone, listedAt: UTCInstant? = nil,
                             _ context: Context) throws {
        let parameters = arguments.filterParameters
        if let listedAt {
            var any = IncidentQuery(now: listedAt)
            any.listedAt = listedAt
            any.limit = 1
            var listed = false
            try IncidentReads.list(reader, any) { _ in listed = true }
            return StandardError.writeLine(listed
                ? "note: no incident listed as active at \(zone.shortTime(listedAt)) matches these filters"
                : "note: no incident was listed as active at \(zone.shortTime(listedAt)) by any source (see each source's last poll)")
        }
        guard !parameters.isEmpty else { return StandardError.writeLine("note: the database holds no incidents yet") }
        let culprits = try IncidentReads.emptyingFilters(reader, parameters: parameters, context: zone.filterContext(now: context.clock.now()))
        guard !culprits.isEmpty else {
            return StandardError.writeLine("note: no incident matches these filters, nor with any one of them left out")
        }
        for culprit in culprits {
            let given = "--\(culprit.name)" + (culprit.values == ["true"] ? "" : " " + culprit.values.joined(separator: " "))
            var line = "note: no incident matches; without \(given), \(culprit.matchesWithout) would"
            let value = culprit.values.last ?? ""
            switch IncidentFilter.Parameter(rawValue: culprit.name) {
            case .since?: line += " (--since filters by start time; --seen-since \(value) keeps those a poll saw since then)"
            case .until?: line += " (--until filters by start time)"
            case .seenSince?: line += " (--seen-since filters by when a poll last saw them; --since \(value) keeps those that started since then)"
            case .near?: line += " (try a larger --radius)"
            default: break
            }
            StandardError.writeLine(line)
        }
    }

    /// Runs `body` with a buffer to `--output FILE` (``OutputFile``), or to stdout without it.
    /// - Throws: ``UsageError`` for a binary format (`xlsx`) without a file.
    static func written(to arguments: ParsedArguments, _ binary: Bool, _ context: Context, _ body: (OutputBuffer) throws -> Void) throws {
        guard let path = try arguments.value(output) else {
            if binary { throw UsageError("--format xlsx writes a workbook file: add --output FILE.xlsx") }
            return try body(OutputBuffer(context))
        }
        if binary && path == "-" { throw UsageError("--format xlsx writes a workbook file, not stdout: give --output FILE.xlsx") }
        try OutputFile.write(path, context, body)
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
