import Foundation
import IncidentCore
internal import CSQLite3

/// One SQLite connection. Owns the `sqlite3*` handle and closes it in `deinit`.
///
/// Not thread-safe by itself: one thread at a time (``SQLiteStore`` serializes access).
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
    private let busyTimeoutMilliseconds: Int32
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
        busyTimeoutMilliseconds = Int32(max(0, busyTimeout) * 1000)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        Self.traceIfAsked(db)
        // Fail early and clearly on a file that is not a database (instead of at the first query).
        try execute("PRAGMA foreign_keys = ON")
        try SQLFunctions.register(on: db)
        if path != ":memory:" && !path.isEmpty && mode != .readOnly {
            // Changing the journal mode needs an exclusive lock, and SQLite answers SQLITE_BUSY
            // at once instead of calling the busy handler: wait here as for any statement.
            try retryingWhileBusy(seconds: busyTimeout) { try execute("PRAGMA journal_mode = WAL") }
            try execute("PRAGMA synchronous = NORMAL")
            // Keep the -wal and -shm files when the last connection closes, so that a user who
            // may read the database but not write its directory can still open it
            // (<https://www.sqlite.org/wal.html#readonly>). They are kept, not their size: the
            // -wal is truncated to zero bytes by ``checkpoint()`` after each large write, and
            // by SQLite when it restarts the log or the last connection closes, at most to
            // `journal_size_limit` (<https://www.sqlite.org/pragma.html#pragma_journal_size_limit>).
            var persist: Int32 = 1
            sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
            try execute("PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        }
    }

    /// The size, in bytes, SQLite truncates the -wal file to when it restarts the log
    /// (a poll's transaction first writes from its start) and when the last connection closes.
    static let walSizeLimit = 4 << 20

    /// Copies every committed page from the -wal file into the database and truncates the
    /// -wal to zero bytes (`SQLITE_CHECKPOINT_TRUNCATE`, <https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>),
    /// so the log of a large write does not stay beside the database. Never waits: while
    /// another connection reads an older snapshot, copies what it can and leaves the rest
    /// to the next checkpoint (SQLite's own after a later commit, or the next call).
    ///
    /// Runs after the work it follows has committed, so it never fails that work.
    ///
    /// - Returns: true when the log was emptied and truncated; false when a reader kept it from
    ///   finishing, or it failed (an I/O error, which the next write meets and reports).
    @discardableResult
    public func checkpoint() -> Bool {
        guard path != ":memory:" && !path.isEmpty else { return true }
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, busyTimeoutMilliseconds) }
        var logFrames: Int32 = 0, checkpointedFrames: Int32 = 0
        return sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointedFrames) == SQLITE_OK
    }

    /// With `INCIDENTS_SQL_TRACE=FILE` in the environment, appends every statement this process
    /// runs to FILE when it finishes, with its bound values inlined and its duration in a
    /// comment: a script the `sqlite3` shell can run again (`Scripts/bench --queries` does, to
    /// time the same SQL without the product). The file holds the data the statements carry.
    /// The statements a virtual table runs on its shadow tables (`'main'.'…_node'` of an R*Tree,
    /// FTS5's `'main'.'…_data'`) are left out: their statement runs them again, and writing each
    /// of them here happened within its statement's time (an insert of 500 listed intervals
    /// measured 100-150 ms traced, 5-12 ms in the sqlite3 shell).
    private static func traceIfAsked(_ db: OpaquePointer) {
        guard traceDescriptor != nil else { return }
        sqlite3_trace_v2(db, UInt32(SQLITE_TRACE_PROFILE), { _, _, statement, nanoseconds in
            guard let descriptor = Database.traceDescriptor, let statement else { return 0 }
            if let sql = sqlite3_sql(OpaquePointer(statement)), strstr(sql, "'main'.") != nil || strstr(sql, "\"main\".") != nil { return 0 }
            guard let expanded = sqlite3_expanded_sql(OpaquePointer(statement)) else { return 0 }
            let microseconds = (nanoseconds?.assumingMemoryBound(to: Int64.self).pointee ?? 0) / 1000
            let entry = "-- \(microseconds) us\n\(String(cString: expanded));\n"
            sqlite3_free(expanded)
            _ = entry.withCString { write(descriptor, $0, strlen($0)) }
            return 0
        }, nil)
    }

    /// Runs `body` and returns every distinct statement it ran on this connection, in the order
    /// each first finished, with the bound values of that first run inlined (SQLite's
    /// `sqlite3_expanded_sql`): what PollPlanTests runs through `EXPLAIN QUERY PLAN`, so that a
    /// statement added to a poll, a prune or a status refresh is checked without being listed.
    /// Includes the statements SQLite's virtual tables (FTS5, R*Tree) run on their shadow tables.
    func recordingStatements(_ body: () throws -> Void) throws -> [String] {
        final class Recorded { var seen: Set<String> = []; var statements: [String] = [] }
        let recorded = Recorded()
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_PROFILE), { _, context, statement, _ in
            guard let context, let statement, let sql = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
            let recorded = Unmanaged<Recorded>.fromOpaque(context).takeUnretainedValue()
            guard recorded.seen.insert(String(cString: sql)).inserted,
                  let expanded = sqlite3_expanded_sql(OpaquePointer(statement)) else { return 0 }
            recorded.statements.append(String(cString: expanded))
            sqlite3_free(expanded)
            return 0
        }, Unmanaged.passUnretained(recorded).toOpaque())
        defer {
            sqlite3_trace_v2(handle, 0, nil, nil)
            Self.traceIfAsked(handle)
        }
        try withExtendedLifetime(recorded) { try body() }
        return recorded.statements
    }

    private static let traceDescriptor: Int32? = {
        guard let value = getenv("INCIDENTS_SQL_TRACE"), value.pointee != 0 else { return nil }
        let path = String(cString: value)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        return descriptor >= 0 ? descriptor : nil
    }()

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

/// Functions this package adds to SQL, registered on every connection.
enum SQLFunctions {
    /// `geometry_distance(geojson, latitude, longitude)`: meters from the point to the nearest
    /// part of the GeoJSON geometry (``Geometry/distance(to:)``); NULL when the text is not a
    /// geometry or the point is not WGS84. Deterministic, so SQLite may reuse a result.
    static func register(on db: OpaquePointer) throws {
        let rc = sqlite3_create_function_v2(db, "geometry_distance", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, values in
            guard count == 3, let values, let text = sqlite3_value_text(values[0]),
                  let geometry = Geometry(geoJSON: String(cString: text)),
                  let point = Coordinate(latitude: sqlite3_value_double(values[1]), longitude: sqlite3_value_double(values[2])) else {
                return sqlite3_result_null(context)
            }
            sqlite3_result_double(context, geometry.distance(to: point))
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteError(code: .init(rawValue: rc), message: "cannot register geometry_distance") }
    }
}
