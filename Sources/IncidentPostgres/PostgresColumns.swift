import IncidentCore

/// The PostgreSQL side of ``IncidentField/content``: the column list and types, the COPY
/// encoding and the row decoding that the poll's staging table, the insert, the update, the
/// revision archive and every query share. A content field added to the list appears in all of
/// them; its column is added by a migration.
struct PostgresColumns: Sendable {
    let fields: [IncidentField]
    /// Every column name, flattened (a coordinate is two, a geometry five).
    let names: [String]

    /// Whether `fields` is ``IncidentField/content`` (every store but some tests' own lists).
    let isContent: Bool

    init(_ fields: [IncidentField] = IncidentField.content) {
        self.fields = fields
        self.names = fields.flatMap(\.columns)
        isContent = names == IncidentField.content.flatMap(\.columns)
    }

    /// `category, provider_category, …`, each prefixed with `prefix` (`e.`) when given.
    func list(_ prefix: String = "") -> String {
        names.map { prefix + $0 }.joined(separator: ", ")
    }

    /// `category = s.category, …`
    func assignments(from prefix: String) -> String {
        names.map { "\($0) = \(prefix)\($0)" }.joined(separator: ", ")
    }

    /// `category text, …, latitude double precision, …` for a staging table.
    var definitions: String {
        fields.flatMap { field in
            field.columns.map { column -> String in
                switch field.storage {
                case .text: "\(column) text COLLATE \"C\""
                case .instant: "\(column) timestamptz"
                case .coordinate: "\(column) double precision"
                case .geometry: column == field.columns[0] ? "\(column) text COLLATE \"C\"" : "\(column) double precision"
                }
            }
        }.joined(separator: ", ")
    }

    /// The values of `incident`, one per field, and their content hash.
    func values(of incident: Incident) -> (values: [IncidentValue], hash: Int64) {
        incident.contentValues(fields: fields)
    }

    /// The values of `incident`, one per field, their content hash, and the hash without the
    /// fields migrations added (``Incident/hashWithoutAddedFields``), in one pass when the fields are the content's.
    func valuesAndBaseHash(of incident: Incident) -> (values: [IncidentValue], hash: Int64, baseHash: Int64) {
        guard isContent else {
            let (values, hash) = incident.contentValues(fields: fields)
            return (values, hash, incident.hashWithoutAddedFields)
        }
        return incident.contentValuesAndBaseHash(fields: fields)
    }

    /// Writes `values` as COPY fields. Returns false when a text holds U+0000, which
    /// PostgreSQL cannot store (the caller discards the row).
    func copy(_ values: [IncidentValue], to writer: CopyWriter) -> Bool {
        for (field, value) in zip(fields, values) {
            switch value {
            case .null:
                for _ in field.columns { writer.null() }
            case .text(let text):
                guard writer.text(text) else { return false }
            case .instant(let instant):
                writer.instant(instant)
            case .coordinate(let coordinate):
                writer.real(coordinate.latitude)
                writer.real(coordinate.longitude)
            case .geometry(let geometry):
                // The GeoJSON, then its bounding box (the spatial index's key).
                guard writer.text(geometry.geoJSON) else { return false }
                let box = geometry.boundingBox
                for degrees in [box.minLongitude, box.maxLongitude, box.minLatitude, box.maxLatitude] { writer.real(degrees) }
            }
        }
        return true
    }

    /// Reads the content columns of a result by name, resolved once per result shape.
    struct Decoder {
        let fields: [IncidentField]
        let columns: [[Int32]]

        func values(_ result: Result, _ row: Int32) -> [IncidentValue] {
            zip(fields, columns).map { field, columns in
                switch field.storage {
                case .text:
                    return result.string(row, columns[0]).map(IncidentValue.text) ?? .null
                case .instant:
                    return result.instant(row, columns[0]).map(IncidentValue.instant) ?? .null
                case .coordinate:
                    guard let latitude = result.double(row, columns[0]), let longitude = result.double(row, columns[1]),
                          let coordinate = Coordinate(latitude: latitude, longitude: longitude) else { return .null }
                    return .coordinate(coordinate)
                case .geometry:
                    return result.string(row, columns[0]).flatMap(Geometry.init(geoJSON:)).map(IncidentValue.geometry) ?? .null
                }
            }
        }
    }

    func decoder(for result: Result) throws -> Decoder {
        Decoder(fields: fields, columns: try fields.map { try $0.columns.map { try result.column($0) } })
    }
}

/// Decodes incidents from a result that selected the lifecycle and content columns, with the
/// column indexes resolved once.
struct StoredIncidentDecoder {
    /// The lifecycle columns selected with the content columns.
    static let lifecycleColumns = "id, source, external_id, revision, first_seen_at, last_seen_at, cleared_at"

    let decoder: PostgresColumns.Decoder
    let id, source, externalID, revision, firstSeenAt, lastSeenAt, clearedAt: Int32

    init(_ result: Result, columns: PostgresColumns) throws {
        decoder = try columns.decoder(for: result)
        (id, source, externalID, revision) = (try result.column("id"), try result.column("source"),
                                              try result.column("external_id"), try result.column("revision"))
        (firstSeenAt, lastSeenAt, clearedAt) = (try result.column("first_seen_at"), try result.column("last_seen_at"),
                                                try result.column("cleared_at"))
    }

    func stored(_ r: Result, _ row: Int32) -> StoredIncident {
        StoredIncident(
            id: r.int64(row, id) ?? 0,
            incident: Incident(source: r.string(row, source) ?? "", externalID: r.string(row, externalID) ?? "",
                               values: decoder.values(r, row), fields: decoder.fields),
            firstSeenAt: r.instant(row, firstSeenAt) ?? UTCInstant(secondsSince1970: 0),
            lastSeenAt: r.instant(row, lastSeenAt) ?? UTCInstant(secondsSince1970: 0),
            clearedAt: r.instant(row, clearedAt), revision: r.int(row, revision) ?? 1)
    }
}
