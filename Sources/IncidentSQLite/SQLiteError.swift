internal import CSQLite3

/// An error reported by SQLite: its result code, message and the statement that failed.
///
/// Shaped after GRDB's `DatabaseError`: the primary result code is kept with named constants so
/// callers can branch on it (`error.code == .busy`) without seeing C types.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A SQLite result code (<https://www.sqlite.org/rescode.html>).
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The primary code (the low 8 bits of an extended code).
        public var primary: Code { Code(rawValue: rawValue & 0xFF) }

        public static let error = Code(rawValue: SQLITE_ERROR)
        public static let busy = Code(rawValue: SQLITE_BUSY)
        public static let locked = Code(rawValue: SQLITE_LOCKED)
        public static let readOnly = Code(rawValue: SQLITE_READONLY)
        public static let interrupt = Code(rawValue: SQLITE_INTERRUPT)
        public static let corrupt = Code(rawValue: SQLITE_CORRUPT)
        public static let cantOpen = Code(rawValue: SQLITE_CANTOPEN)
        public static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
        public static let notADatabase = Code(rawValue: SQLITE_NOTADB)
        public static let full = Code(rawValue: SQLITE_FULL)
        public static let ioError = Code(rawValue: SQLITE_IOERR)
    }

    public var code: Code
    /// SQLite's message (`sqlite3_errmsg`) or this library's explanation.
    public var message: String
    /// The SQL that failed, when there was one.
    public var sql: String?

    public init(code: Code, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " (while running: \(sql.prefix(120)))" }
        if code.primary == .busy || code.primary == .locked {
            text += "; another process holds the database: retry later"
        } else if code.primary == .corrupt || code.primary == .notADatabase {
            text += "; the file is damaged or not an incidents database: restore it from a backup or start a new one"
        } else if code.primary == .full {
            text += "; the disk is full: free space and run again"
        } else if code.primary == .readOnly {
            text += "; this user may not write the database file or its directory (SQLite writes the -wal and -shm files beside it): "
                + "run as the owner, or fix the permissions"
        } else if code.primary == .cantOpen {
            text += "; check that the path names a file (not a directory) and that this user may read it and its directory"
        } else if code.primary == .ioError {
            text += "; check the path (a directory, a file this user may not read or write) and the disk"
        }
        return text
    }
}
