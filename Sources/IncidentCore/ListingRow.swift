/// The current row of a store's listing, read in place from its statement (SQLite: the
/// columns of the row `sqlite3_step` reached): valid only inside the callback that receives it.
/// The fast path of exports (``ListingRowReader``) writes stored text as these bytes instead
/// of building an ``Incident`` of Strings per row; every store's row decoding reads through it
/// too (``IncidentField/value(in:columns:)``), so both paths read a column the same way.
public protocol ListingRow {
    /// The index of the result column named `name` (a column of ``IncidentField/columns``, or
    /// one of the store's lifecycle columns `id`, `source`, `external_id`, `revision`,
    /// `first_seen_at`, `last_seen_at`, `cleared_at`), nil when the statement has none.
    func columnIndex(_ name: String) -> Int32?
    /// The UTF-8 bytes of a column as text (numbers as the store writes them as text), nil
    /// when NULL; valid until the next row.
    func text(at column: Int32) -> UnsafeBufferPointer<UInt8>?
    func int64(at column: Int32) -> Int64?
    func double(at column: Int32) -> Double?
}

extension ListingRow {
    public func string(at column: Int32) -> String? {
        text(at: column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// An RFC 3339 column as an instant (``UTCInstant/init(rfc3339:)``), nil when NULL or not RFC 3339.
    public func instant(at column: Int32) -> UTCInstant? {
        text(at: column).flatMap(UTCInstant.init(rfc3339:))
    }
}

/// A store that can hand the rows of a listing in place (``ListingRow``).
public protocol ListingRowReader: IncidentReader {
    /// Calls `row` for each row ``IncidentReader/forEachIncident(matching:_:)`` would give for
    /// `query` (the same statement: same rows, same order), as the statement holds it: the
    /// same ``ListingRow`` each time, at the next row. Its selected columns are the lifecycle
    /// columns and every column of ``IncidentField/content``.
    /// - Throws: as ``IncidentReader/forEachIncident(matching:_:)``.
    func forEachListingRow(matching query: IncidentQuery, _ row: (any ListingRow) throws -> Void) throws
}

extension ListingRowReader {
    public var listingRows: (any ListingRowReader)? { self }
}

extension IncidentField {
    /// The field's stored value in `row`, read from its columns (indexes of ``columns``, in
    /// order): NULL text is absent; an instant that is not RFC 3339, a coordinate outside WGS84
    /// or with a NULL degree, and a geometry that is not GeoJSON are absent too.
    public func value(in row: some ListingRow, columns: [Int32]) -> IncidentValue {
        switch storage {
        case .text:
            return row.string(at: columns[0]).map(IncidentValue.text) ?? .null
        case .instant:
            return row.instant(at: columns[0]).map(IncidentValue.instant) ?? .null
        case .coordinate:
            guard let latitude = row.double(at: columns[0]), let longitude = row.double(at: columns[1]),
                  let coordinate = Coordinate(latitude: latitude, longitude: longitude) else { return .null }
            return .coordinate(coordinate)
        case .geometry:
            return row.string(at: columns[0]).flatMap(Geometry.init(geoJSON:)).map(IncidentValue.geometry) ?? .null
        }
    }
}

/// Decodes listing rows (the lifecycle columns and every column of `fields`, resolved once by
/// name) into ``StoredIncident``s: the one decoding of a stored incident row of every store
/// that reads through ``ListingRow``.
public struct StoredRowDecoder: Sendable {
    public let fields: [IncidentField]
    /// The row's columns of each field of `fields`.
    let columns: [[Int32]]
    let id, source, externalID, revision, firstSeenAt, lastSeenAt, clearedAt: Int32

    /// - Parameter column: the index of the result column of a name; throws when there is none.
    public init(fields: [IncidentField] = IncidentField.content, column: (String) throws -> Int32) rethrows {
        self.fields = fields
        columns = try fields.map { try $0.columns.map(column) }
        (id, source, externalID, revision) = (try column("id"), try column("source"), try column("external_id"), try column("revision"))
        (firstSeenAt, lastSeenAt, clearedAt) = (try column("first_seen_at"), try column("last_seen_at"), try column("cleared_at"))
    }

    /// The incident of the current row.
    public func stored(_ row: some ListingRow) -> StoredIncident {
        var incident = Incident(source: row.string(at: source) ?? "", externalID: row.string(at: externalID) ?? "", category: .other)
        for (field, columns) in zip(fields, columns) {
            field.assign(&incident, field.value(in: row, columns: columns))
        }
        return StoredIncident(
            id: row.int64(at: id) ?? 0, incident: incident,
            firstSeenAt: row.instant(at: firstSeenAt) ?? UTCInstant(secondsSince1970: 0),
            lastSeenAt: row.instant(at: lastSeenAt) ?? UTCInstant(secondsSince1970: 0),
            clearedAt: row.instant(at: clearedAt), revision: (row.int64(at: revision)).map(Int.init) ?? 1)
    }
}
