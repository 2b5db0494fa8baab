import IncidentCore

/// How each column of `list` (``IncidentOutput/listColumns(withDistance:)``, by position) is
/// read from a listing row in place (``ListingRow``): the fast path of exports (issue 23),
/// which writes each cell straight from the statement's columns, with no ``Incident`` of Strings
/// and no closure per row. Every value is the one the decoded path (``StoredRowDecoder``,
/// ``ListedIncident``) gives for the same row, so both paths write the same bytes
/// (`StoredTextExportTests`). Resolved once per listing, from the first row's statement.
final class ListingCells {
    /// Where one list column's value comes from: plain values, so that reading a cell retains
    /// nothing.
    enum Cell {
        /// Stored text written as its bytes (``IncidentField/textPath`` fields, the identity);
        /// NULL is absent, or empty text with `nullIsEmpty` (the identity, as decoding gives "").
        case text(Int32, nullIsEmpty: Bool)
        /// An integer column (`id`, `revision`), `absent` when NULL.
        case integer(Int32, absent: Int64)
        /// An RFC 3339 column (``ListingRow/instant(at:)``), `absent` when NULL or not RFC 3339.
        case instant(Int32, absent: UTCInstant?)
        /// One degree of a coordinate: absent unless both are present and inside WGS84 (``Coordinate``).
        case degree(latitude: Int32, longitude: Int32, isLongitude: Bool)
        /// Text that must be a raw value of the enumeration `choice`, else its ``Choice/otherwise``.
        case choice(Int32, Choice)
        /// GeoJSON text, re-encoded as ``Geometry/geoJSON`` (absent when not GeoJSON).
        case geometry(Int32)
        /// ``StoredIncident/status(at:)`` at the query's `now`.
        case status
        /// Whole meters to the `--near` point (``Incident/distance(to:)``).
        case distance
        /// A content field this type does not read in place (``ListingCells/decoded`` at
        /// `field`), decoded through the field's closures as the decoded path does; `output` is
        /// the column's position among the field's columns.
        case decoded(field: Int, output: Int)
    }

    /// A text column holding the raw value of an enumeration.
    enum Choice {
        case category, validity

        /// The value of any other text, and of NULL (as ``IncidentField/content`` decodes it).
        var otherwise: String? {
            switch self {
            case .category: IncidentCategory.other.rawValue
            case .validity: nil
            }
        }
    }

    /// A cell's value, pointing into the row (valid until the next row).
    enum Value {
        case absent
        /// Stored UTF-8 text, as stored.
        case text(UnsafeBufferPointer<UInt8>)
        /// Text this program chose (a category, a status).
        case word(String)
        case integer(Int64)
        case number(Double)
        /// An instant, with its stored bytes when they are its RFC 3339 UTC text as written
        /// (``UTCInstant/rfc3339``), to be copied rather than formatted again.
        case instant(UTCInstant, UnsafeBufferPointer<UInt8>?)
        case geometry(Geometry)
    }

    let cells: [Cell]
    /// Whether each column is a time (`csv-excel` adds its local time after it).
    let isInstant: [Bool]
    /// The fields of ``Cell/decoded(field:output:)`` with their columns.
    private let decoded: [(field: IncidentField, columns: [Int32])]
    /// The raw values' bytes of ``Choice/category`` and ``Choice/validity``.
    private let categories = IncidentCategory.allCases.map { Array($0.rawValue.utf8) }
    private let validities = IncidentValidity.allCases.map { Array($0.rawValue.utf8) }
    private let query: IncidentQuery
    /// The columns ``StoredIncident/status(at:)`` reads.
    private let clearedAt, endedAt, startedAt, validity: Int32
    /// The columns of the position and geometry, for the distance and a GeoJSON geometry.
    private let latitude, longitude, geometry: Int32
    private let idColumn: Int32

    /// Resolves `names` (the list's columns) in `row`'s statement.
    /// - Throws: ``QueryError`` when the row lacks a column (a programming error).
    init(_ names: [String], in row: any ListingRow, query: IncidentQuery) throws {
        func column(_ name: String) throws -> Int32 {
            guard let index = row.columnIndex(name) else { throw QueryError("the store's rows have no column \(name)") }
            return index
        }
        self.query = query
        (clearedAt, endedAt, startedAt, validity) = (try column("cleared_at"), try column("ended_at"), try column("started_at"), try column("validity"))
        (latitude, longitude, geometry) = (try column("latitude"), try column("longitude"), try column("geometry"))
        idColumn = try column("id")
        var decoded: [(field: IncidentField, columns: [Int32])] = []
        var isInstant: [Bool] = []
        cells = try names.map { name -> Cell in
            isInstant.append(["first_seen_at", "last_seen_at", "cleared_at"].contains(name))
            switch name {
            case "id": return .integer(try column(name), absent: 0)
            case "revision": return .integer(try column(name), absent: 1)
            case "source", "external_id": return .text(try column(name), nullIsEmpty: true)
            case "first_seen_at", "last_seen_at": return .instant(try column(name), absent: UTCInstant(secondsSince1970: 0))
            case "cleared_at": return .instant(try column(name), absent: nil)
            case "status": return .status
            case "distance_m": return .distance
            default: break
            }
            guard let field = IncidentField.content.first(where: { $0.columns.contains(name) }) else {
                throw QueryError("no stored field has the column \(name)")
            }
            isInstant[isInstant.count - 1] = field.storage == .instant
            let columns = try field.columns.map(column)
            switch (field.storage, field.columns[0]) {
            case (.text, _) where field.textPath != nil: return .text(columns[0], nullIsEmpty: false)
            case (.text, "category"): return .choice(columns[0], .category)
            case (.text, "validity"): return .choice(columns[0], .validity)
            case (.instant, _): return .instant(columns[0], absent: nil)
            case (.coordinate, _): return .degree(latitude: columns[0], longitude: columns[1], isLongitude: name == field.columns[1])
            case (.geometry, _): return .geometry(columns[0])
            default:
                decoded.append((field, columns))
                return .decoded(field: decoded.count - 1, output: field.columns.firstIndex(of: name) ?? 0)
            }
        }
        self.decoded = decoded
        self.isInstant = isInstant
    }

    /// The value of `cell` in `row`.
    func value(_ cell: Cell, in row: any ListingRow) -> Value {
        switch cell {
        case .text(let column, let nullIsEmpty):
            if let text = row.text(at: column) { return .text(text) }
            return nullIsEmpty ? .word("") : .absent
        case .integer(let column, let absent):
            return .integer(row.int64(at: column) ?? absent)
        case .instant(let column, let absent):
            guard let text = row.text(at: column), let instant = UTCInstant(rfc3339: text) else {
                return absent.map { .instant($0, nil) } ?? .absent
            }
            // Parsed, 20 bytes with `T` and `Z` hold exactly the digits `rfc3339` writes.
            let canonical = text.count == 20 && text[10] == UInt8(ascii: "T") && text[19] == UInt8(ascii: "Z")
            return .instant(instant, canonical ? text : nil)
        case .degree(let latitude, let longitude, let isLongitude):
            guard let coordinate = Self.coordinate(row, latitude, longitude) else { return .absent }
            return .number(isLongitude ? coordinate.longitude : coordinate.latitude)
        case .choice(let column, let choice):
            if let text = row.text(at: column), Self.isOne(of: choice == .category ? categories : validities, text) { return .text(text) }
            return choice.otherwise.map(Value.word) ?? .absent
        case .geometry(let column):
            return row.string(at: column).flatMap(Geometry.init(geoJSON:)).map(Value.geometry) ?? .absent
        case .status:
            var incident = Incident(source: "", externalID: "", category: .other)
            incident.endedAt = row.instant(at: endedAt)
            incident.startedAt = row.instant(at: startedAt)
            incident.validity = row.string(at: validity).flatMap(IncidentValidity.init(rawValue:))
            let stored = StoredIncident(id: 0, incident: incident, firstSeenAt: query.now, lastSeenAt: query.now,
                                        clearedAt: row.instant(at: clearedAt), revision: 1)
            return .word(stored.status(at: query.now).rawValue)
        case .distance:
            guard let near = query.near, let meters = located(row).distance(to: near) else { return .absent }
            return .integer(Int64(meters.rounded()))
        case .decoded(let index, let output):
            let (field, columns) = decoded[index]
            var incident = Incident(source: "", externalID: "", category: .other)
            field.assign(&incident, field.value(in: row, columns: columns))
            switch field.value(incident) {
            case .null: return .absent
            case .text(let text): return .word(text)
            case .instant(let instant): return .instant(instant, nil)
            case .coordinate(let point): return .number(output == 0 ? point.latitude : point.longitude)
            case .geometry(let geometry): return .geometry(geometry)
            }
        }
    }

    /// The row's `id` (0 when NULL, as decoding gives).
    func id(_ row: any ListingRow) -> Int64 {
        row.int64(at: idColumn) ?? 0
    }

    /// The row's incident with only its position and geometry (what `distance` and a GeoJSON
    /// feature's geometry read).
    func located(_ row: any ListingRow) -> Incident {
        var incident = Incident(source: "", externalID: "", category: .other)
        incident.coordinate = Self.coordinate(row, latitude, longitude)
        incident.geometry = row.string(at: geometry).flatMap(Geometry.init(geoJSON:))
        return incident
    }

    /// The coordinate of two degree columns, as ``IncidentField/value(in:columns:)`` reads it.
    private static func coordinate(_ row: any ListingRow, _ latitude: Int32, _ longitude: Int32) -> Coordinate? {
        guard let latitude = row.double(at: latitude), let longitude = row.double(at: longitude) else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// Whether `text` is one of `values`.
    private static func isOne(of values: [[UInt8]], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        values.contains { $0.count == text.count && $0.elementsEqual(text) }
    }
}

extension ListingCells.Value {
    /// Writes the value as JSON, as ``FieldValue/writeJSON(to:)`` writes the decoded path's.
    func writeJSON(to out: inout OutputBuffer) throws {
        switch self {
        case .absent: try out.write("null")
        case .text(let utf8): try out.writeJSONString(utf8: utf8)
        case .word(let text): try out.writeJSONString(text)
        case .integer(let value): out.writeDecimal(value)
        case .number(let value): out.writeDecimal(value)
        case .instant(let instant, let canonical):
            out.write(ascii: "\"")
            out.writeRFC3339(instant, stored: canonical)
            out.write(ascii: "\"")
        case .geometry(let geometry): try out.write(geometry.geoJSON)
        }
    }
}
