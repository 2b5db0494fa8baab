import Foundation
internal import CSQLite3

/// One SQLite connection. Owns the `sqlite3*` handle and closes it in `deinit`.
///
/// Not thread-safe by itself: one thread at a time (``SQLiteIncidentStore`` serializes access).
/// Every connection gets WAL mode (file databases), `synchronous=NORMAL` (durable at each
/// checkpoint, safe against corruption in WAL mode: <https://www.sqlite.org/pragma.html#pragma_synchronous>),
/// foreign keys on, and a busy timeout so that concurrent processes wait instead of failing.
public final class Database {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Read and write; create the file if missing.
        case readWriteCreate
        /// Read and write an existing file.
        case readWrite
        /// Queries only, on an existing file (`SQLITE_OPEN_READONLY`): works for a user who may
        /// read the file but not write it. WAL readers never block writers.
        case readOnly
    }

    let handle: OpaquePointer
    /// The path given to `init` (`:memory:` for an in-memory database).
    public let path: String
    private var statementCache: [String: Statement] = [:]

    /// Opens (or creates) the database at `path`; `:memory:` opens a private in-memory database.
    ///
    /// - Parameter busyTimeout: seconds to wait for another connection's lock before failing
    ///   with ``SQLiteError/Code/busy``.
    /// - Throws: ``SQLiteError`` (e.g. `cantOpen` when the directory does not exist, `notADatabase`).
    public init(path: String, mode: Mode = .readWriteCreate, busyTimeout: Double = 10) throws {
        _ = Self.configureOnce
        self.path = path
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard let db else { throw SQLiteError(code: .init(rawValue: rc), message: "cannot open \(path)") }
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close(db)  // a failed open still allocates a handle (sqlite3_open_v2 docs)
            throw SQLiteError(code: .init(rawValue: rc), message: "cannot open \(path): \(message)")
        }
        handle = db
        sqlite3_busy_timeout(db, Int32(max(0, busyTimeout) * 1000))
        // Fail early and clearly on a file that is not a database (instead of at the first query).
        try execute("PRAGMA foreign_keys = ON")
        if path != ":memory:" && !path.isEmpty && mode != .readOnly {
            // Changing the journal mode needs an exclusive lock, and SQLite answers SQLITE_BUSY
            // at once instead of calling the busy handler: wait here as for any statement.
            try retryingWhileBusy(seconds: busyTimeout) { try execute("PRAGMA journal_mode = WAL") }
            try execute("PRAGMA synchronous = NORMAL")
            // Keep the -wal and -shm files when the last connection closes, so that a user who
            // may read the database but not write its directory can still open it
            // (<https://www.sqlite.org/wal.html#readonly>).
            var persist: Int32 = 1
            sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
    }

    /// Runs `body` again while it fails with SQLITE_BUSY, for statements that do not use the
    /// busy handler, up to `seconds`.
    private func retryingWhileBusy(seconds: Double, _ body: () throws -> Void) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.code.primary == .busy && ContinuousClock.now < deadline {
                usleep(20_000)
            }
        }
    }

    /// Process-wide SQLite settings, applied before the first connection (Swift runs a static
    /// initializer once, thread-safely): no memory statistics, which otherwise take a global
    /// mutex on every allocation (5 % of a large ingest's samples were mutex calls).
    private static let configureOnce: Void = {
        _ = csqlite3_disable_memstatus()
    }()

    deinit {
        statementCache.removeAll()  // finalize statements before closing
        sqlite3_close_v2(handle)
    }

    /// Runs one or more SQL statements that return no rows.
    /// - Throws: ``SQLiteError`` with SQLite's message.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: .init(rawValue: sqlite3_extended_errcode(handle)), message: message, sql: sql)
        }
    }

    /// Compiles `sql` into a new statement.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// A compiled statement for `sql`, compiled once per connection and reused (reset, bindings
    /// cleared). Use for statements run many times.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the most recent successful INSERT.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True while a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` (takes the write lock at once, waiting up
    /// to the busy timeout, so a transaction never fails half-way on a lock upgrade), `COMMIT`
    /// when it returns, `ROLLBACK` when it throws (the error is rethrown).
    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            rollbackQuietly()
            throw error
        }
    }

    /// Runs `body` in a read transaction: every query inside sees one consistent snapshot.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        defer { rollbackQuietly() }
        return try body()
    }

    /// Rolls back the open transaction, if any; errors are ignored (the connection may already
    /// have rolled back by itself, e.g. after SQLITE_FULL).
    public func rollbackQuietly() {
        if isInTransaction { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    /// The first column of the first row of `sql`, as an integer (nil when there is no row or the value is NULL).
    public func scalarInt(_ sql: String, _ arguments: [String: SQLiteValue] = [:]) throws -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return statement.int64(at: 0)
    }

    /// SQLite's message for the last error on this connection.
    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: .init(rawValue: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc),
                    message: lastErrorMessage, sql: sql)
    }
}
