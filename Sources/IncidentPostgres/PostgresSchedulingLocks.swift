import Foundation
import IncidentCore

/// ``SchedulingLocks`` of a PostgreSQL store: session advisory locks (`pg_try_advisory_lock`,
/// "Advisory Locks" in the PostgreSQL manual), each held by a connection of its own. The server
/// releases a lock when its session ends, however the process ends (kill -9, lost network:
/// when the server notices the connection is gone), so a crash never leaves a stale lock.
///
/// This keeps "one scheduler per database" working across hosts until the scheduler takes
/// per-source leases (``SourceLeases``) instead.
public struct PostgresSchedulingLocks: SchedulingLocks {
    /// The configured connection string, checked when a lock is taken.
    let connectionString: String
    let password: String?

    /// - Parameter connectionString: the configuration's `database` (no password in it).
    public init(connectionString: String, password: String? = nil) {
        self.connectionString = connectionString
        self.password = password
    }

    static func key(_ name: String) -> Int64 {
        var h = FNV1a64()
        h.combine(field: "trafficincidents lock")
        h.combine(field: name)
        return h.signed
    }

    /// - Throws: ``PostgresConfigurationError`` (a connection string holding a password),
    ///   ``PostgresError`` (cannot connect).
    public func tryLock(_ name: String) throws -> (any HeldLock)? {
        let connection = try Connection(location: try PostgresLocation(connectionString), password: password, readOnly: false)
        let taken = try connection.query("SELECT pg_try_advisory_lock($1)", [.integer(Self.key(name))], context: "taking the lock \(name)")
        return taken.bool(0, 0) == true ? AdvisoryLock(connection: connection) : nil
    }

    /// `PostgreSQL session 1234 (application incident-scheduler, client 10.0.0.5)`.
    public func holder(of name: String) -> String? {
        guard let location = try? PostgresLocation(connectionString),
              let connection = try? Connection(location: location, password: password, readOnly: true) else { return nil }
        let key = Self.key(name)
        // A bigint key is stored as two 32-bit halves (classid: high, objid: low).
        let result = try? connection.query("""
            SELECT a.pid, a.application_name, host(a.client_addr) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1
            """, [.integer(Int64(UInt32(truncatingIfNeeded: key >> 32))), .integer(Int64(UInt32(truncatingIfNeeded: key)))],
            context: "finding who holds the lock \(name)")
        guard let result, result.rowCount == 1 else { return nil }
        return "PostgreSQL session \(result.string(0, 0) ?? "?") (application \(result.string(0, 1) ?? "?"), client \(result.string(0, 2) ?? "local socket"))"
    }
}

/// A held advisory lock: its connection, closed (which releases the lock) on release.
final class AdvisoryLock: HeldLock, @unchecked Sendable {  // the connection is dropped once, under `lock`
    private var connection: Connection?
    private let lock = NSLock()

    init(connection: Connection) { self.connection = connection }

    func release() {
        lock.lock()
        connection = nil  // PQfinish ends the session, and with it the lock
        lock.unlock()
    }

    deinit { release() }
}
