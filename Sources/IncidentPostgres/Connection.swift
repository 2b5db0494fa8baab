import Foundation
import IncidentCore
internal import CLibPQ

/// A value bound to a statement parameter (`$1`, `$2`, …), sent as text; the server converts
/// it to the parameter's type (an instant as RFC 3339 text into a `timestamptz`).
enum PostgresValue {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case instant(UTCInstant)

    static func optional(_ text: String?) -> PostgresValue { text.map(PostgresValue.text) ?? .null }
    static func optional(_ instant: UTCInstant?) -> PostgresValue { instant.map(PostgresValue.instant) ?? .null }

    var text: String? {
        switch self {
        case .null: nil
        case .text(let text): text
        case .integer(let value): String(value)
        case .real(let value): "\(value)"
        case .instant(let instant): instant.rfc3339
        }
    }
}

/// One libpq connection. Owns the `PGconn*` and closes it in `deinit` (even after a failed
/// connect, as `PQconnectdbParams` requires).
///
/// Not thread-safe by itself: one thread at a time (``ConnectionPool`` hands each out to one
/// caller), except ``interrupt()``, which another thread may call while a statement runs.
///
/// The session keeps no state that outlives a transaction, so that a pooler in transaction
/// mode (PgBouncer `pool_mode = transaction`, which hands each transaction to any server
/// connection) loses nothing and leaks nothing to other clients: every statement runs in a
/// transaction of its own (``transaction(_:context:_:)``) that opens with its access mode
/// (`READ ONLY` for readers, `READ WRITE` for writers, so a reader can never write and a
/// setting left on a pooled server connection cannot stop a writer) and its settings as
/// `SET LOCAL`: `TimeZone=UTC` and `DateStyle=ISO` (instants read back as
/// `2023-03-21 05:13:00+00`) and the time limits of ``PostgresTimeouts``. Only
/// `client_encoding=UTF8` is a startup parameter (a pooler keeps it per client). TCP keepalives
/// and a TCP user timeout (libpq `keepalives*`, `tcp_user_timeout`) notice a peer that stopped
/// answering without closing; the connection string may override them.
final class Connection {
    private let handle: OpaquePointer
    /// The redacted location, for error messages.
    let label: String

    /// Connects to `location`; libpq reads the password from PGPASSWORD, PGPASSFILE or ~/.pgpass.
    /// - Throws: ``PostgresError`` naming the server and libpq's reason.
    /// `connectSeconds` bounds each attempt to connect (libpq's `connect_timeout`, at least 2).
    init(location: PostgresLocation, readOnly: Bool, timeouts: PostgresTimeouts = .standard, connectSeconds: Int = 5) throws {
        label = location.description
        self.readOnly = readOnly
        self.timeouts = timeouts
        // Entries before `dbname` are defaults the connection string may override; entries
        // after it override the string (libpq-connect.html, PQconnectdbParams).
        let parameters: [(String, String)] = [
            ("connect_timeout", String(max(2, connectSeconds))), ("fallback_application_name", "trafficincidents"),
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "30000"),
            ("dbname", location.connectionString), ("client_encoding", "UTF8"),
        ]
        // Both arrays end with a null pointer.
        let connection = withCStrings(parameters.map(\.0) + [nil]) { keywords in
            withCStrings(parameters.map(\.1) + [nil]) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let connection else {
            throw PostgresError(message: "out of memory", context: "connecting to \(label)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let failure = Self.connectionError(connection, context: "connecting to \(label)")
            PQfinish(connection)
            throw failure
        }
        handle = connection
        cancel = PQgetCancel(connection)
        // Notices (`already exists, skipping`) are not errors; libpq would print them on stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit {
        if let cancel { PQfreeCancel(cancel) }
        PQfinish(handle)
    }

    private let readOnly: Bool
    private let timeouts: PostgresTimeouts
    /// For ``interrupt()``: libpq's cancel key, usable from another thread.
    private let cancel: OpaquePointer?

    /// Stops the statement under way from another thread: asks the server to cancel it
    /// (`PQcancel`, on a thread of its own, as it connects to the server and a partition may
    /// hold it up), and shuts the socket down so that the call blocked in libpq returns now
    /// with the connection lost, whether or not the server can be reached. The connection is
    /// then unusable (the pool drops it); its transaction is rolled back by the server (at
    /// once, or at `idle_in_transaction_session_timeout` when the network is down), and
    /// never committed. Only while the connection is lent (its socket is open).
    func interrupt() {
        if cancel != nil {
            // The thread keeps the connection (and so its cancel key) alive until it is done.
            let owner = Retained(connection: self)
            Thread {
                guard let cancel = owner.connection.cancel else { return }
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancel, &buffer, Int32(buffer.count))
            }.start()
        }
        let socket = PQsocket(handle)
        if socket >= 0 { _ = shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// A connection handed to the thread that cancels its statement: only its cancel key is
    /// used there (`PQcancel` is safe beside the connection's own thread).
    private struct Retained: @unchecked Sendable { let connection: Connection }

    /// Whether the connection still works: reads what the server sent meanwhile (a server that
    /// restarted has closed it) without blocking.
    var isUsable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
            && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether a transaction is open.
    var inTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Opens a transaction: `begin` (e.g. `BEGIN ISOLATION LEVEL REPEATABLE READ`) with this
    /// connection's access mode unless `begin` names one, then its settings as `SET LOCAL`
    /// (see the type's comment), all in one round trip. `timeouts` replaces the connection's
    /// time limits (``PostgresTimeouts/none`` for a copy of a whole database).
    func begin(_ begin: String = "BEGIN", context: String, timeouts: PostgresTimeouts? = nil) throws {
        let mode = begin.contains(" READ ONLY") || begin.contains(" READ WRITE") ? "" : readOnly ? " READ ONLY" : " READ WRITE"
        var settings = "SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'; SET LOCAL IntervalStyle = 'postgres'; SET LOCAL extra_float_digits = 1;"
        settings += " " + (timeouts ?? self.timeouts).settings
        try execute(begin + mode + "; " + settings, context: context)
    }

    /// Runs one or more statements without parameters (`PQexec`), e.g. `BEGIN`, DDL.
    @discardableResult
    func execute(_ sql: String, context: String) throws -> Result {
        try check(PQexec(handle, sql), context: context)
    }

    /// Runs one statement with `$1`, `$2`, … bound to `parameters`, returning all its rows.
    /// Outside a transaction it runs in one of its own (``transaction(_:context:_:)``).
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = [], context: String) throws -> Result {
        if !inTransaction { return try transaction(context: context) { try query(sql, parameters, context: context) } }
        observe(sql, parameters)
        let result = withCStrings(parameters.map(\.text)) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        return try check(result, context: context)
    }

    /// Runs one query and passes its rows to `row` (the result and the row's index in it) in
    /// batches fetched from a cursor (`DECLARE … CURSOR`, then `FETCH`), in a read-only
    /// repeatable-read transaction: memory does not grow with the number of rows, the planner
    /// prefers plans that yield the first rows fast (a cursor's `cursor_tuple_fraction`), and a
    /// reader that stops early (`row` throws) costs only the rows fetched so far: the
    /// transaction, and with it the cursor, is rolled back and the error rethrown.
    /// Batches start at `firstBatch` rows (64 unless given) and double up to 4,096. A query of
    /// at most N rows (a `LIMIT N`) read whole can pass N + 1: its rows then come in one `FETCH`
    /// (one round trip fewer than 64 and 128 for N = 100). Must run outside a transaction.
    func forEachRow(_ sql: String, _ parameters: [PostgresValue] = [], context: String, firstBatch: Int32 = 64,
                    _ row: (Result, Int32) throws -> Void) throws {
        try transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: context) {
            try query("DECLARE listed NO SCROLL CURSOR FOR " + sql, parameters, context: context)
            var batch = max(1, min(firstBatch, 4097))
            while true {
                let result = try execute("FETCH \(batch) FROM listed", context: context)
                for index in 0..<result.rowCount { try row(result, index) }
                if result.rowCount < batch { break }
                batch = min(batch * 2, 4096)
            }
        }
    }

    /// Copies rows into a table: runs `copy` (a `COPY … FROM STDIN`), then `produce` writes the
    /// rows (text format) through the writer, which sends them in chunks.
    /// When `produce` throws, the copy is ended with an error (the server discards its rows)
    /// and the error rethrown.
    func copyIn<T>(_ copy: String, context: String, _ produce: (CopyWriter) throws -> T) throws -> T {
        let started = PQexec(handle, copy)
        guard let started, PQresultStatus(started) == PGRES_COPY_IN else {
            _ = try check(started, context: context)
            throw PostgresError(message: "the server did not start the copy", context: context)
        }
        PQclear(started)
        let writer = CopyWriter(connection: self, context: context)
        let value: T
        do {
            value = try produce(writer)
            try writer.flush()
        } catch {
            _ = PQputCopyEnd(handle, "the poll was abandoned")
            while let result = PQgetResult(handle) { PQclear(result) }
            throw error
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw self.error(context: context) }
        var failure: PostgresError?
        while let result = PQgetResult(handle) {
            if failure == nil, PQresultStatus(result) != PGRES_COMMAND_OK { failure = error(result: result, context: context) }
            PQclear(result)
        }
        if let failure { throw failure }
        return value
    }

    /// Sends `bytes` of a copy under way.
    fileprivate func putCopyData(_ bytes: UnsafeRawBufferPointer, context: String) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard PQputCopyData(handle, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count)) == 1 else {
            throw error(context: context)
        }
    }

    /// Runs `body` in a transaction (`begin`, e.g. `BEGIN ISOLATION LEVEL REPEATABLE READ`,
    /// opened by ``begin(_:context:timeouts:)``): committed when it returns, rolled back when it throws.
    func transaction<T>(_ begin: String = "BEGIN", context: String, timeouts: PostgresTimeouts? = nil,
                        _ body: () throws -> T) throws -> T {
        try self.begin(begin, context: context, timeouts: timeouts)
        do {
            let value = try body()
            try execute("COMMIT", context: context)
            return value
        } catch {
            rollbackQuietly()
            throw error
        }
    }

    /// Rolls back the open transaction, if any; a lost connection is left for the pool to drop.
    func rollbackQuietly() {
        guard PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        if let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
    }

    /// Called before each statement ``query(_:_:context:)`` runs, inside its transaction, with
    /// the statement and its parameters; not while it runs (its own statements are not
    /// observed). Set by ``ConnectionPool`` for PostgresPlanTests, which explains each statement
    /// of a poll where it runs; nil otherwise.
    var statementObserver: ((Connection, String, [PostgresValue]) -> Void)?

    private func observe(_ sql: String, _ parameters: [PostgresValue]) {
        guard let observer = statementObserver else { return }
        statementObserver = nil
        defer { statementObserver = observer }
        observer(self, sql, parameters)
    }

    // MARK: Errors

    /// Wraps `result`, or throws when it is an error (or missing: out of memory, connection lost).
    private func check(_ result: OpaquePointer?, context: String) throws -> Result {
        guard let result else { throw error(context: context) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Result(result)
        default:
            let failure = error(result: result, context: context)
            PQclear(result)
            throw failure
        }
    }

    private func error(result: OpaquePointer, context: String) -> PostgresError {
        func field(_ code: UInt8) -> String? { PQresultErrorField(result, Int32(code)).map { String(cString: $0) } }
        let message = field(UInt8(ascii: "M")) ?? Self.oneLine(String(cString: PQresultErrorMessage(result)))
        let detail = [field(UInt8(ascii: "D")), field(UInt8(ascii: "H"))].compactMap { $0 }.joined(separator: "; ")
        return PostgresError(sqlState: field(UInt8(ascii: "C")), message: Self.oneLine(message),
                             detail: detail.isEmpty ? nil : Self.oneLine(detail), context: context)
    }

    private func error(context: String) -> PostgresError {
        Self.connectionError(handle, context: context)
    }

    /// libpq's own error (no result).
    private static func connectionError(_ connection: OpaquePointer, context: String) -> PostgresError {
        PostgresError(message: oneLine(String(cString: PQerrorMessage(connection))), context: context)
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// A statement's result (`PGresult*`), freed in `deinit`. Rows and columns are 0-based; values
/// are read from the text format.
final class Result {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rowCount: Int32 { PQntuples(handle) }

    /// Rows changed by an INSERT, UPDATE or DELETE.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// The index of the column named `name`.
    func column(_ name: String) throws -> Int32 {
        let index = PQfnumber(handle, "\"\(name)\"")
        guard index >= 0 else {
            throw PostgresError(message: "no column named \(name) in the result", context: "reading a result")
        }
        return index
    }

    func isNull(_ row: Int32, _ column: Int32) -> Bool { PQgetisnull(handle, row, column) == 1 }

    func string(_ row: Int32, _ column: Int32) -> String? {
        guard !isNull(row, column), let value = PQgetvalue(handle, row, column) else { return nil }
        let length = Int(PQgetlength(handle, row, column))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    func int64(_ row: Int32, _ column: Int32) -> Int64? { string(row, column).flatMap { Int64($0) } }
    func int(_ row: Int32, _ column: Int32) -> Int? { int64(row, column).map { Int($0) } }
    func double(_ row: Int32, _ column: Int32) -> Double? { string(row, column).flatMap { Double($0) } }
    func bool(_ row: Int32, _ column: Int32) -> Bool? { string(row, column).map { $0 == "t" } }

    /// A `timestamptz` as the session prints it (`2023-03-21 05:13:00+00`, TimeZone=UTC and
    /// DateStyle=ISO), read as RFC 3339 (the space in place of `T` is allowed by RFC 3339 §5.6).
    func instant(_ row: Int32, _ column: Int32) -> UTCInstant? {
        guard var text = string(row, column) else { return nil }
        if text.hasSuffix("+00") {
            text.removeLast(3)
            text += "Z"
        } else if text.count >= 3, let sign = text.dropLast(2).last, sign == "+" || sign == "-" {
            text += ":00"
        }
        return UTCInstant(rfc3339: text)
    }
}

/// Writes the rows of a `COPY … FROM STDIN` in PostgreSQL's text format, buffered and sent in
/// chunks of about 256 KiB (<https://www.postgresql.org/docs/15/sql-copy.html>, "Text Format").
final class CopyWriter {
    private unowned let connection: Connection
    private let context: String
    private(set) var buffer: [UInt8] = []
    private var fieldsInRow = 0
    private static let chunk = 256 * 1024

    fileprivate init(connection: Connection, context: String) {
        self.connection = connection
        self.context = context
        buffer.reserveCapacity(Self.chunk + 64 * 1024)
    }

    private func separate() {
        if fieldsInRow > 0 { buffer.append(UInt8(ascii: "\t")) }
        fieldsInRow += 1
    }

    /// `\N`.
    func null() {
        separate()
        buffer.append(UInt8(ascii: "\\"))
        buffer.append(UInt8(ascii: "N"))
    }

    /// Text with backslash, newline, carriage return and tab escaped. Returns false (and writes
    /// nothing usable: end the row with ``discardRow(from:)``) when the text holds U+0000,
    /// which PostgreSQL cannot store.
    @discardableResult
    func text(_ value: String) -> Bool {
        separate()
        var value = value
        return value.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case 0: return false
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "t"))
                default: buffer.append(byte)
                }
            }
            return true
        }
    }

    func optionalText(_ value: String?) -> Bool {
        guard let value else { null(); return true }
        return text(value)
    }

    func integer(_ value: Int64) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
    }

    func real(_ value: Double) {
        separate()
        buffer.append(contentsOf: "\(value)".utf8)
    }

    func instant(_ value: UTCInstant) {
        separate()
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 20))
        buffer.withUnsafeMutableBufferPointer { value.writeRFC3339(into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    func optionalInstant(_ value: UTCInstant?) {
        guard let value else { return null() }
        instant(value)
    }

    /// Where the next row starts, to discard a row that turned out unwritable.
    var rowStart: Int { buffer.count }

    func discardRow(from start: Int) {
        buffer.removeSubrange(start...)
        fieldsInRow = 0
    }

    /// Ends the row; sends the buffer when it is full.
    func endRow() throws {
        buffer.append(UInt8(ascii: "\n"))
        fieldsInRow = 0
        if buffer.count >= Self.chunk { try flush() }
    }

    func flush() throws {
        try buffer.withUnsafeBytes { try connection.putCopyData($0, context: context) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Calls `body` with a C array of C strings (nil stays a null pointer), valid during the call.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
