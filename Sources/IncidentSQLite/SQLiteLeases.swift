import IncidentCore
#if canImport(Glibc)
import Glibc
#endif

/// The source leases in SQLite (`source_leases`, migration 0007): the rules of
/// ``SourceLeases``, decided in one `BEGIN IMMEDIATE` transaction (SQLite serializes writers,
/// so concurrent claims are decided one after the other).
///
/// A database file is shared by the processes of one host, so a lease whose holder is a process
/// of this host that no longer runs (`kill(pid, 0)` fails with ESRCH) counts as expired: a
/// scheduler killed with `kill -9` does not keep its sources for the rest of its lease.
extension SQLiteStore: SourceLeases {
    public func claim(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64,
                      notStartedAfter: UTCInstant?) throws -> LeaseClaim {
        try withDatabase { db in
            try db.writeTransaction {
                if let current = try Self.lease(of: source, db: db) {
                    let sameHost = current.holder.host == holder.host
                    let deadHolder = sameHost && !Self.isRunning(pid: current.holder.pid)
                    if current.holder != holder && current.isHeld(at: now) && !deadHolder {
                        return .held(current)
                    }
                    if let notStartedAfter, !sameHost, current.lastStartedAt > notStartedAfter {
                        return .recentlyStarted(current)
                    }
                }
                let lease = SourceLease(source: source, holder: holder, expiresAt: now.adding(seconds: leaseSeconds), lastStartedAt: now)
                try db.run("""
                    INSERT INTO source_leases (source, holder_host, holder_pid, expires_at, last_started_at)
                    VALUES (:source, :host, :pid, :expires_at, :started_at)
                    ON CONFLICT (source) DO UPDATE SET holder_host = excluded.holder_host, holder_pid = excluded.holder_pid,
                        expires_at = excluded.expires_at, last_started_at = excluded.last_started_at
                    """, ["source": .text(source), "host": .text(holder.host), "pid": .integer(Int64(holder.pid)),
                          "expires_at": .instant(lease.expiresAt), "started_at": .instant(now)])
                return .claimed(lease)
            }
        }
    }

    public func renew(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64) throws -> Bool {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("""
                    UPDATE source_leases SET expires_at = :expires_at
                    WHERE source = :source AND holder_host = :host AND holder_pid = :pid AND expires_at IS NOT NULL
                    """, ["source": .text(source), "host": .text(holder.host), "pid": .integer(Int64(holder.pid)),
                          "expires_at": .instant(now.adding(seconds: leaseSeconds))])
                return db.changes == 1
            }
        }
    }

    public func release(source: String, holder: LeaseHolder) throws {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("""
                    UPDATE source_leases SET expires_at = NULL WHERE source = :source AND holder_host = :host AND holder_pid = :pid
                    """, ["source": .text(source), "host": .text(holder.host), "pid": .integer(Int64(holder.pid))])
            }
        }
    }

    public func lease(of source: String) throws -> SourceLease? {
        try withDatabase { try Self.lease(of: source, db: $0) }
    }

    private static func lease(of source: String, db: Database) throws -> SourceLease? {
        var lease: SourceLease?
        try db.query("""
            SELECT holder_host, holder_pid, expires_at, last_started_at FROM source_leases WHERE source = :source
            """, ["source": .text(source)]) { row in
            lease = SourceLease(source: source, holder: LeaseHolder(host: row.string(at: 0) ?? "", pid: Int32(row.int64(at: 1) ?? 0)),
                                expiresAt: row.instant(at: 2), lastStartedAt: row.instant(at: 3) ?? UTCInstant(secondsSince1970: 0))
        }
        return lease
    }

    /// Whether a process with this id runs on this host (`kill(pid, 0)`: EPERM means it runs
    /// under another user).
    static func isRunning(pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
