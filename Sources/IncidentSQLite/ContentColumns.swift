import IncidentCore

/// The SQLite side of ``IncidentField/content``: the SQL fragments and the binding and decoding
/// that the insert, the update, the revision archive and every query share. A content field
/// added to the list appears in all of them; its column is added by a migration.
struct ContentColumns: Sendable {
    let fields: [IncidentField]
    /// Every column name, flattened (a coordinate is two).
    let names: [String]

    init(_ fields: [IncidentField] = IncidentField.content) {
        self.fields = fields
        self.names = fields.flatMap(\.columns)
    }

    /// `category, provider_category, …`
    var list: String { names.joined(separator: ", ") }
    /// `:category, :provider_category, …` (parameters named after the columns).
    var parameters: String { names.map { ":" + $0 }.joined(separator: ", ") }
    /// `category = :category, …`
    var assignments: String { names.map { "\($0) = :\($0)" }.joined(separator: ", ") }

    /// The values of `incident`, one per field, and their content hash.
    func values(of incident: Incident) -> (values: [IncidentValue], hash: Int64) {
        var hasher = FNV1a64()
        let values = fields.map { field in
            let value = field.value(incident)
            hasher.combine(value: value, of: field)
            return value
        }
        return (values, hasher.signed)
    }

    /// Binds values (from ``values(of:)``) to the statement's parameters named after the
    /// columns, resolved once per statement.
    struct Binder {
        let parameters: [[Statement.Parameter]]

        func bind(_ values: [IncidentValue], to statement: Statement) throws {
            for (value, parameters) in zip(values, self.parameters) {
                switch value {
                case .null:
                    for parameter in parameters { try statement.bind(nil as String?, to: parameter) }
                case .text(let text):
                    try statement.bind(text, to: parameters[0])
                case .instant(let instant):
                    try statement.bind(instant, to: parameters[0])
                case .coordinate(let coordinate):
                    try statement.bind(coordinate.latitude, to: parameters[0])
                    try statement.bind(coordinate.longitude, to: parameters[1])
                case .geometry(let geometry):
                    let box = geometry.boundingBox
                    try statement.bind(geometry.geoJSON, to: parameters[0])
                    try statement.bind(box.minLongitude, to: parameters[1])
                    try statement.bind(box.maxLongitude, to: parameters[2])
                    try statement.bind(box.minLatitude, to: parameters[3])
                    try statement.bind(box.maxLatitude, to: parameters[4])
                }
            }
        }
    }

    func binder(for statement: Statement) throws -> Binder {
        Binder(parameters: try fields.map { try $0.columns.map { try statement.parameter($0) } })
    }

    /// Reads the content columns of the current row by name, resolved once per statement.
    struct Decoder {
        let fields: [IncidentField]
        let columns: [[Int32]]

        func values(_ statement: Statement) -> [IncidentValue] {
            zip(fields, columns).map { field, columns in field.value(in: statement, columns: columns) }
        }
    }

    func decoder(for statement: Statement) throws -> Decoder {
        Decoder(fields: fields, columns: try fields.map { try $0.columns.map { try statement.column($0) } })
    }
}
