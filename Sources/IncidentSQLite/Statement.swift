import IncidentCore
internal import CSQLite3

/// A compiled SQL statement. Owns the `sqlite3_stmt*` and finalizes it in `deinit`.
///
/// Parameters are 1-based, as in SQLite (`?1`, or positional `?` in order).
public final class Statement {
    let handle: OpaquePointer
    unowned let database: Database
    /// The SQL text, for error messages.
    public let sql: String

    init(database: Database, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw database.error(rc, sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
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

    public func bind(_ value: String?, at index: Int32) throws {
        guard var text = value else { return try bindNull(at: index) }
        // Native Swift strings are contiguous UTF-8: bind those bytes with their length,
        // avoiding a C-string copy. SQLITE_TRANSIENT makes SQLite take its own copy.
        let rc = text.withUTF8 { bytes -> Int32 in
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_text(handle, index, "", 0, csqlite3_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), csqlite3_transient())
            }
        }
        try check(rc)
    }

    /// Binds an instant as RFC 3339 UTC text (`2023-03-21T05:13:00Z`), formatted on the stack:
    /// ingestion binds four per record, and a String for each cost more than the insert.
    public func bind(_ value: UTCInstant?, at index: Int32) throws {
        guard let value else { return try bindNull(at: index) }
        var text: (UInt64, UInt64, UInt32) = (0, 0, 0)  // 20 bytes
        let rc = withUnsafeMutableBytes(of: &text) { raw -> Int32 in
            value.writeRFC3339(into: raw.bindMemory(to: UInt8.self))
            // Signed and unsigned bytes may alias (CChar is Int8 here).
            return sqlite3_bind_text(handle, index, raw.baseAddress?.assumingMemoryBound(to: CChar.self), 20,
                                     csqlite3_transient())
        }
        try check(rc)
    }

    public func bind(_ value: Int64?, at index: Int32) throws {
        guard let value else { return try bindNull(at: index) }
        try check(sqlite3_bind_int64(handle, index, value))
    }

    public func bind(_ value: Int?, at index: Int32) throws {
        try bind(value.map(Int64.init), at: index)
    }

    public func bind(_ value: Double?, at index: Int32) throws {
        guard let value else { return try bindNull(at: index) }
        try check(sqlite3_bind_double(handle, index, value))
    }

    public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds `values` to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: try bindNull(at: index)
            case .integer(let v): try bind(v, at: index)
            case .real(let v): try bind(v, at: index)
            case .text(let v): try bind(v, at: index)
            }
        }
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

    // MARK: Columns of the current row (0-based)

    public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    public func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
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
}
