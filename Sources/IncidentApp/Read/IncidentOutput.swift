import Foundation
import IncidentCore
import IncidentJSON

/// One field of an incident as output: snake_case key named after the database column.
enum FieldValue {
    case text(String?)
    case number(Double?)
    case integer(Int64)
    /// An instant: RFC 3339 UTC text in every format (spreadsheet CSV adds a local-time column).
    case instant(UTCInstant?)
    /// A list of texts (a run's warnings).
    case texts([String])
    /// A GeoJSON geometry object (written as JSON, not as a string), or absent.
    case geometry(Geometry?)

    /// JSON text (RFC 8259): strings quoted, numbers bare, absent values `null`.
    var json: String {
        switch self {
        case .text(let value): value.map { JSONString.quoted($0) } ?? "null"
        case .number(let value): value.map { "\($0)" } ?? "null"
        case .integer(let value): String(value)
        case .instant(let value): value.map { "\"\($0.rfc3339)\"" } ?? "null"
        case .texts(let values): "[" + values.map { JSONString.quoted($0) }.joined(separator: ", ") + "]"
        case .geometry(let value): value?.geoJSON ?? "null"
        }
    }

    /// CSV cell text (empty when absent).
    var plain: String {
        switch self {
        case .text(let value): value ?? ""
        case .number(let value): value.map { "\($0)" } ?? ""
        case .integer(let value): String(value)
        case .instant(let value): value?.rfc3339 ?? ""
        case .texts(let values): values.joined(separator: "; ")
        case .geometry(let value): value?.geoJSON ?? ""
        }
    }

    /// Writes the JSON text of the value.
    func writeJSON(to out: inout OutputBuffer) throws {
        switch self {
        case .text(let value?): try out.writeJSONString(value)
        case .instant(let value?):
            out.write(ascii: "\"")
            out.writeRFC3339(value)
            out.write(ascii: "\"")
        case .integer(let value): out.writeDecimal(value)
        case .number(let value?): out.writeDecimal(value)
        default: try out.write(json)
        }
    }
}

/// An incident as `list` and `map` show it: what the store holds plus what the query adds.
struct ListedIncident {
    var stored: StoredIncident
    /// At the query's `now` (``StoredIncident/status(at:)``).
    var status: IncidentStatus
    /// Meters from the `--near` point to the incident (``Incident/distance(to:)``: to its line
    /// or points, else its position; the distance `--radius` and `--order distance` use); nil
    /// without `--near`.
    var distanceMeters: Double?

    init(_ stored: StoredIncident, query: IncidentQuery) {
        self.stored = stored
        status = stored.status(at: query.now)
        distanceMeters = query.near.flatMap { center in stored.incident.distance(to: center) }
    }
}

/// The output formats of `incidents list` and how each incident is written in them. Every
/// format is written row by row as the store reads the rows (``IncidentWriter``): memory does
/// not depend on the number of rows.
enum IncidentOutput {
    enum Format: String, CaseIterable {
        case table, json, ndjson, csv
        /// CSV for spreadsheets: UTF-8 byte order mark, formula guard, local-time columns.
        case csvExcel = "csv-excel"
        case geojson
        /// A spreadsheet workbook (``XLSXWriter``); written to a file (`--output`), never a terminal.
        case xlsx
    }

    /// What every writer needs besides the rows.
    struct Settings {
        /// Columns the table may use.
        var width: Int
        /// The zone of `--tz`, for the table's times and the spreadsheet's local-time columns.
        var zone: DisplayZone
        /// Whether rows carry a distance (`--near` was given): a DISTANCE column and a
        /// `distance_m` field.
        var withDistance: Bool
    }

    /// The writer of `format`, writing to `out`.
    static func writer(_ format: Format, to out: OutputBuffer, _ settings: Settings) -> any IncidentWriter {
        switch format {
        case .table: TableWriter(out, settings)
        case .json: JSONWriter(out, lines: false, withDistance: settings.withDistance)
        case .ndjson: JSONWriter(out, lines: true, withDistance: settings.withDistance)
        case .csv: CSVWriter(out, withDistance: settings.withDistance, spreadsheetZone: nil)
        case .csvExcel: CSVWriter(out, withDistance: settings.withDistance, spreadsheetZone: settings.zone)
        case .geojson: GeoJSONWriter(out, withDistance: settings.withDistance)
        case .xlsx: XLSXWriter(out, withDistance: settings.withDistance, zone: settings.zone)
        }
    }

    /// One output field: its name (snake_case, the database column's) and how a row gives it.
    struct Column<Row>: Sendable {
        let name: String
        let value: @Sendable (Row) -> FieldValue
    }

    /// The fields of a stored incident, in order: the identity, every content field of
    /// ``IncidentField/content`` (so a new content column appears in every format), then what
    /// the store adds. Built once; each row is read through these.
    static let storedColumns: [Column<StoredIncident>] = {
        var columns: [Column<StoredIncident>] = [
            Column(name: "id") { .integer($0.id) }, Column(name: "source") { .text($0.incident.source) },
            Column(name: "external_id") { .text($0.incident.externalID) },
        ]
        for field in IncidentField.content {
            // A geometry is one output field; its bounding-box columns are the store's.
            let names = field.storage == .geometry ? [field.columns[0]] : field.columns
            for (index, name) in names.enumerated() {
                columns.append(Column(name: name) { stored in
                    switch field.value(stored.incident) {
                    case .null:
                        switch field.storage {
                        case .coordinate: return .number(nil)
                        case .instant: return .instant(nil)
                        case .text: return .text(nil)
                        case .geometry: return .geometry(nil)
                        }
                    case .text(let text): return .text(text)
                    case .instant(let instant): return .instant(instant)
                    case .coordinate(let point): return .number(index == 0 ? point.latitude : point.longitude)
                    case .geometry(let geometry): return .geometry(geometry)
                    }
                })
            }
        }
        return columns + [
            Column(name: "first_seen_at") { .instant($0.firstSeenAt) }, Column(name: "last_seen_at") { .instant($0.lastSeenAt) },
            Column(name: "cleared_at") { .instant($0.clearedAt) }, Column(name: "revision") { .integer(Int64($0.revision)) },
        ]
    }()

    /// The columns of `list`: ``storedColumns``, then `status` and, with `withDistance`,
    /// `distance_m` (whole meters).
    static func listColumns(withDistance: Bool) -> [Column<ListedIncident>] {
        var columns = storedColumns.map { column in
            Column<ListedIncident>(name: column.name) { column.value($0.stored) }
        }
        columns.append(Column(name: "status") { .text($0.status.rawValue) })
        if withDistance {
            columns.append(Column(name: "distance_m") { row in row.distanceMeters.map { .integer(Int64($0.rounded())) } ?? .number(nil) })
        }
        return columns
    }

    /// The fields of one stored incident (``storedColumns``) with their values.
    static func fields(_ stored: StoredIncident) -> [(String, FieldValue)] {
        storedColumns.map { ($0.name, $0.value(stored)) }
    }

    /// A JSON object of `fields`, on one line.
    static func object(_ fields: [(String, FieldValue)]) -> String {
        var text = ""
        var out = OutputBuffer { text += $0 }
        // A buffer that collects into a string cannot fail.
        out.write(ascii: "{")
        for (index, (key, value)) in fields.enumerated() {
            try? writeMember(key, value, first: index == 0, to: &out)
        }
        out.write(ascii: "}")
        try? out.flush()
        return text
    }

    /// Writes `"key": value` of a JSON object on one line, after `, ` unless `first`.
    static func writeMember(_ key: String, _ value: FieldValue, first: Bool, to out: inout OutputBuffer) throws {
        try writeKey(key, first: first, to: &out)
        try value.writeJSON(to: &out)
    }

    /// The bytes that start each member `"key": ` of a JSON object on one line, after `, `
    /// but for the first (the fast path writes these per row, without a String).
    static func memberStarts(_ keys: [String]) -> [[UInt8]] {
        keys.enumerated().map { index, key in
            var text = ""
            var out = OutputBuffer { text += $0 }
            try? writeKey(key, first: index == 0, to: &out)  // a buffer that collects into a string cannot fail
            try? out.flush()
            return Array(text.utf8)
        }
    }

    /// Writes `"key": ` after `, ` unless `first`.
    private static func writeKey(_ key: String, first: Bool, to out: inout OutputBuffer) throws {
        if !first {
            out.write(ascii: ",")
            out.write(ascii: " ")
        }
        out.write(ascii: "\"")
        try out.write(key)
        out.write(ascii: "\"")
        out.write(ascii: ":")
        out.write(ascii: " ")
    }

    /// `350 m`, `1.2 km`, `123 km`.
    static func distanceText(_ meters: Double) -> String {
        if meters < 999.5 { return "\(Int(meters.rounded())) m" }
        if meters < 99_950 { return String(format: "%.1f km", meters / 1000) }
        return "\(Int((meters / 1000).rounded())) km"
    }
}

/// Writes incidents one at a time in one format, into the buffer it owns. `finish` ends the
/// document (closes the JSON array, prints a table shorter than its sample) and flushes.
protocol IncidentWriter {
    mutating func write(_ row: ListedIncident) throws
    mutating func finish() throws
    /// A copy of this writer as a ``ListingRowWriter`` when it is one, else nil (without the
    /// runtime's conformance scan of `as?`, as ``IncidentReader/listingRows``).
    var listingRowWriter: (any ListingRowWriter)? { get }
}

extension IncidentWriter {
    var listingRowWriter: (any ListingRowWriter)? { nil }
}

/// A writer that also takes the fast path of exports (``IncidentReads/listRows(_:_:_:)``):
/// rows read in place from the store's statement, each cell written from its columns
/// (``ListingCells``). Its output is byte for byte that of ``IncidentWriter/write(_:)`` of the
/// decoded incident.
protocol ListingRowWriter: IncidentWriter {
    mutating func write(_ row: any ListingRow, _ cells: ListingCells) throws
}

extension ListingRowWriter {
    var listingRowWriter: (any ListingRowWriter)? { self }
}

/// `json`: an array with one object per line, written as rows come; `ndjson`: one object per
/// line (RFC 8259 objects; newline-delimited JSON).
struct JSONWriter: ListingRowWriter {
    private var out: OutputBuffer
    let lines: Bool
    let columns: [IncidentOutput.Column<ListedIncident>]
    /// `"key": ` of each column, after `, ` but for the first (``IncidentOutput/memberStarts(_:)``).
    private let memberStarts: [[UInt8]]
    private var count = 0

    init(_ out: OutputBuffer, lines: Bool, withDistance: Bool) {
        self.out = out
        self.lines = lines
        columns = IncidentOutput.listColumns(withDistance: withDistance)
        memberStarts = IncidentOutput.memberStarts(columns.map(\.name))
    }

    mutating func write(_ row: ListedIncident) throws {
        try startObject()
        for (index, column) in columns.enumerated() {
            try IncidentOutput.writeMember(column.name, column.value(row), first: index == 0, to: &out)
        }
        try endObject()
    }

    mutating func write(_ row: any ListingRow, _ cells: ListingCells) throws {
        try startObject()
        for (index, cell) in cells.cells.enumerated() {
            try out.write(bytes: memberStarts[index])
            try cells.value(cell, in: row).writeJSON(to: &out)
        }
        try endObject()
    }

    private mutating func startObject() throws {
        if !lines { try out.write(count == 0 ? "[\n  " : ",\n  ") }
        out.write(ascii: "{")
    }

    private mutating func endObject() throws {
        out.write(ascii: "}")
        if lines { out.write(ascii: "\n") }
        count += 1
    }

    mutating func finish() throws {
        if !lines { try out.write(count == 0 ? "[]\n" : "\n]\n") }
        try out.flush()
    }
}

/// CSV. For programs (`csv`): RFC 4180, a header row, CRLF line ends, a field quoted (quotes
/// doubled) when it holds a comma, a quote, CR or LF. For spreadsheets (`csv-excel`), also:
/// a UTF-8 byte order mark first (without it Excel reads the file in the local ANSI code page
/// and garbles Hangul); feed text that starts with `=`, `+`, `-`, `@`, TAB or CR prefixed
/// with `'` (OWASP "CSV Injection": a spreadsheet would run it as a formula; numbers and times
/// written by this program are left as they are); and after each UTC time column, the same
/// time as local wall-clock time in `--tz` (`started_at (+09:00)`: `2024-01-01 08:10:00`).
struct CSVWriter: ListingRowWriter {
    private var out: OutputBuffer
    let columns: [IncidentOutput.Column<ListedIncident>]
    /// Non-nil for `csv-excel`: the zone of the local-time columns.
    let spreadsheetZone: DisplayZone?
    private var started = false

    init(_ out: OutputBuffer, withDistance: Bool, spreadsheetZone: DisplayZone?) {
        self.out = out
        columns = IncidentOutput.listColumns(withDistance: withDistance)
        self.spreadsheetZone = spreadsheetZone
    }

    /// The characters that make a spreadsheet read a cell as a formula (OWASP).
    static let formulaStarts: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D]

    private mutating func header() throws {
        started = true
        if spreadsheetZone != nil { try out.write("\u{FEFF}") }
        let placeholder = ListedIncident(StoredIncident.placeholder, query: IncidentQuery(now: UTCInstant(secondsSince1970: 0)))
        for (index, column) in columns.enumerated() {
            if index > 0 { out.write(ascii: ",") }
            try out.writeCSVField(column.name)
            if let zone = spreadsheetZone, case .instant = column.value(placeholder) {
                out.write(ascii: ",")
                try out.writeCSVField("\(column.name) (\(zone.label))")
            }
        }
        try out.write("\r\n")
    }

    mutating func write(_ row: ListedIncident) throws {
        if !started { try header() }
        for (index, column) in columns.enumerated() {
            if index > 0 { out.write(ascii: ",") }
            switch column.value(row) {
            case .text(let text?):
                var text = text
                try text.withUTF8 { try writeText($0) }
            case .instant(let instant):
                if let instant { out.writeRFC3339(instant) }
                if let zone = spreadsheetZone {
                    out.write(ascii: ",")
                    if let instant { out.writeRFC3339(zone.local(instant), wallClock: true) }
                }
            // Numbers as ``FieldValue/plain`` writes them, without a String per value (no
            // number needs quoting).
            case .integer(let value):
                out.writeDecimal(value)
            case .number(let value):
                if let value { out.writeDecimal(value) }
            case .text(nil):
                break
            case let value:
                try out.writeCSVField(value.plain)
            }
        }
        out.write(ascii: "\r")
        try out.write("\n")
    }

    mutating func write(_ row: any ListingRow, _ cells: ListingCells) throws {
        if !started { try header() }
        for (index, cell) in cells.cells.enumerated() {
            if index > 0 { out.write(ascii: ",") }
            let value = cells.value(cell, in: row)
            switch value {
            case .text(let utf8): try writeText(utf8)
            case .word(var text): try text.withUTF8 { try writeText($0) }
            case .integer(let value): out.writeDecimal(value)
            case .number(let value): out.writeDecimal(value)
            case .instant(let instant, let stored): out.writeRFC3339(instant, stored: stored)
            case .geometry(let geometry): try out.writeCSVField(geometry.geoJSON)
            case .absent: break
            }
            if let zone = spreadsheetZone, cells.isInstant[index] {
                out.write(ascii: ",")
                if case .instant(let instant, _) = value { out.writeRFC3339(zone.local(instant), wallClock: true) }
            }
        }
        out.write(ascii: "\r")
        try out.write("\n")
    }

    /// Writes feed text as a field, guarded for a spreadsheet (`'` first) when it starts like a formula.
    private mutating func writeText(_ utf8: UnsafeBufferPointer<UInt8>) throws {
        let guarded = spreadsheetZone != nil && utf8.first.map(Self.formulaStarts.contains) == true
        try out.writeCSVField(utf8: utf8, prefix: guarded ? UInt8(ascii: "'") : nil)
    }

    mutating func finish() throws {
        if !started { try header() }
        try out.flush()
    }
}

/// A GeoJSON FeatureCollection (RFC 7946), one Feature per line, written as rows come. The
/// geometry is the incident's own (a LineString of a work zone, …) when it has one, else a
/// Point at its position in `[longitude, latitude]` order, WGS84; an incident without a
/// position gets a null geometry, as §3.2 allows. The properties are the fields of `json`
/// without the coordinates.
struct GeoJSONWriter: ListingRowWriter {
    private var out: OutputBuffer
    /// The properties, each with its position among the list's columns (``ListingCells``).
    let properties: [(position: Int, column: IncidentOutput.Column<ListedIncident>)]
    /// `"key": ` of each property, after `, ` but for the first (``IncidentOutput/memberStarts(_:)``).
    private let memberStarts: [[UInt8]]
    private var count = 0

    init(_ out: OutputBuffer, withDistance: Bool) {
        self.out = out
        properties = IncidentOutput.listColumns(withDistance: withDistance).enumerated().filter {
            !["latitude", "longitude", "geometry"].contains($0.element.name)
        }.map { ($0.offset, $0.element) }
        memberStarts = IncidentOutput.memberStarts(properties.map(\.column.name))
    }

    /// The RFC 7946 geometry object of an incident, or `null`.
    static func geometry(_ incident: Incident) -> String {
        var text = ""
        var out = OutputBuffer { text += $0 }
        try? writeGeometry(incident, to: &out)  // a buffer that collects into a string cannot fail
        try? out.flush()
        return text
    }

    /// Writes ``geometry(_:)`` without a String per feature (a point's degrees as their `description`).
    static func writeGeometry(_ incident: Incident, to out: inout OutputBuffer) throws {
        if let geometry = incident.geometry { return try out.write(geometry.geoJSON) }
        guard let point = incident.coordinate else { return try out.write("null") }
        try out.write("{\"type\": \"Point\", \"coordinates\": [")
        out.writeDecimal(point.longitude)
        try out.write(", ")
        out.writeDecimal(point.latitude)
        try out.write("]}")
    }

    mutating func write(_ row: ListedIncident) throws {
        try startFeature(id: row.stored.id, row.stored.incident)
        for (index, (_, column)) in properties.enumerated() {
            try IncidentOutput.writeMember(column.name, column.value(row), first: index == 0, to: &out)
        }
        try out.write("}}")
        count += 1
    }

    mutating func write(_ row: any ListingRow, _ cells: ListingCells) throws {
        try startFeature(id: cells.id(row), cells.located(row))
        for (index, (position, _)) in properties.enumerated() {
            try out.write(bytes: memberStarts[index])
            try cells.value(cells.cells[position], in: row).writeJSON(to: &out)
        }
        try out.write("}}")
        count += 1
    }

    /// Writes the feature's start up to its properties' first member: `located` gives its geometry.
    private mutating func startFeature(id: Int64, _ located: Incident) throws {
        if count == 0 { try out.write("{\"type\": \"FeatureCollection\", \"features\": [\n") }
        try out.write(count == 0 ? "  {\"type\": \"Feature\", \"id\": " : ",\n  {\"type\": \"Feature\", \"id\": ")
        out.writeDecimal(id)
        try out.write(", \"geometry\": ")
        try Self.writeGeometry(located, to: &out)
        try out.write(", \"properties\": {")
    }

    mutating func finish() throws {
        try finish(members: "")
    }

    /// Ends the collection with more members of the FeatureCollection object after its
    /// features (`members`: `, "links": […]` for OGC API – Features), as the rows were counted.
    mutating func finish(members: String) throws {
        try out.write((count == 0 ? "{\"type\": \"FeatureCollection\", \"features\": [\n\n]" : "\n]") + members + "}\n")
        try out.flush()
    }
}

/// The aligned table for people (``StreamingTable``): ID, DISTANCE (with `--near`), STATUS,
/// SOURCE, CATEGORY, STARTED in `--tz`, LAST SEEN (by a poll, in `--tz`: a 2023 backfill does
/// not read as news), ROAD, LOCATION (the section, or the direction when
/// that is all the provider gives), RESTRICTION, DESCRIPTION.
struct TableWriter: IncidentWriter {
    private var table: StreamingTable
    let settings: IncidentOutput.Settings

    init(_ out: OutputBuffer, _ settings: IncidentOutput.Settings) {
        self.settings = settings
        let header = ["ID"] + (settings.withDistance ? ["DISTANCE"] : []) + ["STATUS", "SOURCE", "CATEGORY",
                      "STARTED (\(settings.zone.label))", "LAST SEEN", "ROAD", "LOCATION", "RESTRICTION", "DESCRIPTION"]
        func column(_ name: String) -> Int { header.firstIndex(of: name) ?? 0 }
        // Description and location are cut first; on a narrow terminal, location, restriction,
        // source and category are left out.
        table = StreamingTable(header: header, maxWidth: settings.width, flexible: ["DESCRIPTION", "LOCATION"].map(column),
                               droppable: ["LOCATION", "RESTRICTION", "SOURCE", "CATEGORY", "LAST SEEN"].map(column),
                               uncut: Set(["ID", "DISTANCE"].compactMap { header.firstIndex(of: $0) }), out: out)
    }

    mutating func write(_ row: ListedIncident) throws {
        let i = row.stored.incident
        var cells = [String(row.stored.id)]
        if settings.withDistance { cells.append(row.distanceMeters.map(IncidentOutput.distanceText) ?? "-") }
        cells += [row.status.rawValue, i.source, i.category.rawValue, i.startedAt.map(settings.zone.shortTime) ?? "-",
                  settings.zone.shortTime(row.stored.lastSeenAt), i.road ?? "-", i.location ?? i.direction ?? "-", i.restriction ?? "-", i.description ?? "-"]
        try table.add(cells)
    }

    mutating func finish() throws {
        try table.finish()
    }
}

extension StoredIncident {
    /// A row with every field present, for the CSV header.
    static let placeholder = StoredIncident(
        id: 0, incident: Incident(source: "", externalID: "", category: .other),
        firstSeenAt: UTCInstant(secondsSince1970: 0), lastSeenAt: UTCInstant(secondsSince1970: 0), clearedAt: nil, revision: 1)
}
