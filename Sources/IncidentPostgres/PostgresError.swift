/// An error reported by PostgreSQL or libpq: what the store was doing, the server's message and
/// its SQLSTATE code.
///
/// Shaped like ``IncidentSQLite/SQLiteError``: callers branch on the code (``isConnectionFailure``,
/// ``sqlState``) without seeing C types. The text never holds a password: libpq's messages
/// name the host and the user, never the password, and connection strings are shown
/// redacted (``PostgresLocation/description``).
public struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The SQLSTATE code (five characters, e.g. `23505` unique violation,
    /// <https://www.postgresql.org/docs/15/errcodes-appendix.html>); nil when the failure was
    /// the connection's or libpq's own (no server answer).
    public var sqlState: String?
    /// The server's primary message (or libpq's), on one line.
    public var message: String
    /// The server's detail and hint, when it sent them.
    public var detail: String?
    /// What the store was doing, e.g. `connecting to postgresql://ingest@db/incidents`.
    public var context: String

    public init(sqlState: String? = nil, message: String, detail: String? = nil, context: String) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.context = context
    }

    /// The connection is lost or could not be made (SQLSTATE class 08, or libpq reported no
    /// server answer): the next use of the store reconnects.
    public var isConnectionFailure: Bool {
        sqlState.map { $0.hasPrefix("08") || $0 == "57P01" || $0 == "57P02" || $0 == "57P03" } ?? true
    }

    /// The database named in the connection string does not exist (SQLSTATE 3D000).
    public var isMissingDatabase: Bool {
        sqlState == "3D000" || (message.contains("FATAL:  database \"") && message.contains("\" does not exist"))
    }

    public var description: String {
        var text = "PostgreSQL error while \(context): \(message)"
        if let detail, !detail.isEmpty { text += " (\(detail))" }
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        return text
    }
}

/// The configured connection string cannot be used: says what to change.
public struct PostgresConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
