import IncidentCore
internal import CSQLite3

/// A compiled SQL statement. Owns the `sqlite3_stmt*` and finalizes it in `deinit`.
///
/// Parameters are named (`:source`), never numbered: `init` refuses SQL with a `?` or `?NN`
/// parameter, so no caller counts positions. Values are bound by name, all at once with an
/// arity check (``bind(_:)``, as GRDB's `StatementArguments`: every parameter bound, no
/// unknown name), or one by one through a ``Parameter`` resolved once (hot paths).
/// Result columns are read by name through ``column(_:)``.
public final class Statement: ListingRow {
    let handle: OpaquePointer
    unowned let database: Database
    /// The SQL text, for error messages.
    public let sql: String
    /// Parameter names (with their `:`) by 1-based index.
    private let parameterNames: [String: Int32]
    private lazy var columnIndexes: [String: Int32] = {
        var indexes: [String: Int32] = [:]
        for index in 0..<columnCount where indexes[columnName(at: index)] == nil { indexes[columnName(at: index)] = index }
        return indexes
    }()

    /// A named parameter resolved to its index once.
    public struct Parameter: Sendable {
        let index: Int32
    }

    init(database: Database, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw database.error(rc, sql: sql)
        }
        var names: [String: Int32] = [:]
        let count = sqlite3_bind_parameter_count(statement)
        if count > 0 {
            for index in 1...count {
                guard let name = sqlite3_bind_parameter_name(statement, index).map({ String(cString: $0) }),
                      name.hasPrefix(":") else {
                    sqlite3_finalize(statement)
                    throw SQLiteError(code: .error, message: "parameter \(index) is not named (:name); bind parameters by name", sql: sql)
                }
                names[name] = index
            }
        }
        self.handle = statement
        self.database = database
        self.sql = sql
        self.parameterNames = names
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement for another run and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding

    /// The parameter `name` (`:source`, or `source`).
    /// - Throws: ``SQLiteError`` when the statement has no such parameter.
    public func parameter(_ name: String) throws -> Parameter {
        let key = name.hasPrefix(":") ? name : ":" + name
        guard let index = parameterNames[key] else {
            throw SQLiteError(code: .error, message: "the statement has no parameter \(key)", sql: sql)
        }
        return Parameter(index: index)
    }

    /// Whether the statement has the parameter `name` (`:source`, or `source`).
    public func hasParameter(_ name: String) -> Bool {
        parameterNames[name.hasPrefix(":") ? name : ":" + name] != nil
    }

    /// Binds every parameter of the statement by name (with or without the `:`).
    /// - Throws: ``SQLiteError`` when a parameter is left unbound or a name is not a parameter.
    public func bind(_ arguments: [String: SQLiteValue]) throws {
        var bound = Set<Int32>()
        for (name, value) in arguments {
            let parameter = try parameter(name)
            try bind(value, to: parameter)
            bound.insert(parameter.index)
        }
        if bound.count != parameterNames.count {
            let missing = parameterNames.filter { !bound.contains($0.value) }.map(\.key).sorted()
            throw SQLiteError(code: .error, message: "no value for \(missing.joined(separator: ", "))", sql: sql)
        }
    }

    public func bind(_ value: SQLiteValue, to parameter: Parameter) throws {
        switch value {
        case .null: try check(sqlite3_bind_null(handle, parameter.index))
        case .integer(let v): try bind(v, to: parameter)
        case .real(let v): try bind(v, to: parameter)
        case .text(let v): try bind(v, to: parameter)
        }
    }

    public func bind(_ value: String?, to parameter: Parameter) throws {
        guard var text = value else { return try check(sqlite3_bind_null(handle, parameter.index)) }
        // Native Swift strings are contiguous UTF-8: bind those bytes with their length,
        // avoiding a C-string copy. SQLITE_TRANSIENT makes SQLite take its own copy.
        let rc = text.withUTF8 { bytes -> Int32 in
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_text(handle, parameter.index, "", 0, csqlite3_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, parameter.index, $0, Int32(bytes.count), csqlite3_transient())
            }
        }
        try check(rc)
    }

    /// Binds an instant as RFC 3339 UTC text (`2023-03-21T05:13:00Z`), formatted on the stack:
    /// ingestion binds four per record, and a String for each cost more than the insert.
    public func bind(_ value: UTCInstant?, to parameter: Parameter) throws {
        guard let value else { return try check(sqlite3_bind_null(handle, parameter.index)) }
        var text: (UInt64, UInt64, UInt32) = (0, 0, 0)  // 20 bytes
        let rc = withUnsafeMutableBytes(of: &text) { raw -> Int32 in
            value.writeRFC3339(into: raw.bindMemory(to: UInt8.self))
            // Signed and unsigned bytes may alias (CChar is Int8 here).
            return sqlite3_bind_text(handle, parameter.index, raw.baseAddress?.assumingMemoryBound(to: CChar.self), 20,
                                     csqlite3_transient())
        }
        try check(rc)
    }

    public func bind(_ value: Int64?, to parameter: Parameter) throws {
        guard let value else { return try check(sqlite3_bind_null(handle, parameter.index)) }
        try check(sqlite3_bind_int64(handle, parameter.index, value))
    }

    public func bind(_ value: Int?, to parameter: Parameter) throws {
        try bind(value.map(Int64.init), to: parameter)
    }

    public func bind(_ value: Double?, to parameter: Parameter) throws {
        guard let value else { return try check(sqlite3_bind_null(handle, parameter.index)) }
        try check(sqlite3_bind_double(handle, parameter.index, value))
    }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    // MARK: Stepping

    /// Advances to the next row. Returns true when a row is available, false when done.
    /// - Throws: ``SQLiteError`` (constraint violations, busy, I/O errors, …).
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion (for statements that return no rows).
    public func run() throws {
        while try step() {}
    }

    // MARK: Columns of the current row

    /// The index of the result column named `name`.
    /// - Throws: ``SQLiteError`` when the statement has no such column.
    public func column(_ name: String) throws -> Int32 {
        guard let index = columnIndexes[name] else {
            throw SQLiteError(code: .error, message: "the statement has no result column \(name)", sql: sql)
        }
        return index
    }

    public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The column's bytes as `sqlite3_column_text` gives them (``ListingRow``; `string(at:)`
    /// and `instant(at:)` read through it).
    public func text(at column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }

    public func columnIndex(_ name: String) -> Int32? {
        columnIndexes[name]
    }

    public func int64(at column: Int32) -> Int64? {
        isNull(at: column) ? nil : sqlite3_column_int64(handle, column)
    }

    public func int(at column: Int32) -> Int? {
        int64(at: column).map(Int.init)
    }

    public func double(at column: Int32) -> Double? {
        isNull(at: column) ? nil : sqlite3_column_double(handle, column)
    }

    /// The name of result column `column`.
    public func columnName(at column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }

    public var columnCount: Int32 { sqlite3_column_count(handle) }
}

/// A value for binding to a statement.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    /// An instant as RFC 3339 UTC text, or NULL.
    public static func instant(_ value: UTCInstant?) -> SQLiteValue {
        value.map { .text($0.rfc3339) } ?? .null
    }

    /// Text, or NULL.
    public static func optional(_ value: String?) -> SQLiteValue {
        value.map(SQLiteValue.text) ?? .null
    }
}

extension Database {
    /// Prepares `sql`, binds `arguments` by name, and runs it (statements that return no rows).
    public func run(_ sql: String, _ arguments: [String: SQLiteValue] = [:]) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.run()
    }

    /// How SQLite runs `sql`: the `detail` lines of `EXPLAIN QUERY PLAN`
    /// (<https://www.sqlite.org/eqp.html>), e.g. `SEARCH incidents USING INDEX incidents_by_road (road=?)`.
    public func queryPlan(_ sql: String, _ arguments: [String: SQLiteValue] = [:]) throws -> [String] {
        var lines: [String] = []
        try query("EXPLAIN QUERY PLAN " + sql, arguments) { lines.append($0.string(at: try $0.column("detail")) ?? "") }
        return lines
    }

    /// Prepares `sql`, binds `arguments` by name, and calls `row` for each result row.
    public func query(_ sql: String, _ arguments: [String: SQLiteValue] = [:], _ row: (Statement) throws -> Void) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while try statement.step() { try row(statement) }
    }
}
