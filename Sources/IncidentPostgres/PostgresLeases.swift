import IncidentCore

/// The source leases in PostgreSQL (`source_leases`), shared by every scheduler host.
///
/// A claim is one `INSERT … ON CONFLICT (source) DO UPDATE … WHERE <claimable>`: the conflicting
/// row is locked and the condition evaluated on its latest version, so when several hosts
/// claim at once exactly one succeeds and the others see its lease. A lease of a dead process
/// is not detected here (the hosts are different machines): it runs out at its expiry.
extension PostgresStore: SourceLeases {
    public func claim(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64,
                      notStartedAfter: UTCInstant?) throws -> LeaseClaim {
        try withConnection { connection in
            let context = "claiming the lease of \(source)"
            let claimed = try connection.query("""
                INSERT INTO source_leases AS l (source, holder_host, holder_pid, expires_at, last_started_at)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (source) DO UPDATE SET holder_host = excluded.holder_host, holder_pid = excluded.holder_pid,
                    expires_at = excluded.expires_at, last_started_at = excluded.last_started_at
                WHERE ((l.holder_host = excluded.holder_host AND l.holder_pid = excluded.holder_pid)
                       OR l.expires_at IS NULL OR l.expires_at <= excluded.last_started_at)
                  AND ($6::timestamptz IS NULL OR l.holder_host = excluded.holder_host OR l.last_started_at <= $6::timestamptz)
                RETURNING \(Self.leaseColumns)
                """, [.text(source), .text(holder.host), .integer(Int64(holder.pid)), .instant(now.adding(seconds: leaseSeconds)),
                      .instant(now), .optional(notStartedAfter)], context: context)
            if claimed.rowCount == 1 { return .claimed(try Self.lease(claimed, 0)) }
            // Refused: say why, from the row that refused it.
            let current = try connection.query("SELECT \(Self.leaseColumns) FROM source_leases WHERE source = $1", [.text(source)],
                                               context: context)
            guard current.rowCount == 1 else {
                throw PostgresError(message: "the lease row vanished during the claim", context: context)
            }
            let lease = try Self.lease(current, 0)
            return lease.holder != holder && lease.isHeld(at: now) ? .held(lease) : .recentlyStarted(lease)
        }
    }

    public func renew(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64) throws -> Bool {
        try withConnection { connection in
            try connection.query("""
                UPDATE source_leases SET expires_at = $4
                WHERE source = $1 AND holder_host = $2 AND holder_pid = $3 AND expires_at IS NOT NULL
                """, [.text(source), .text(holder.host), .integer(Int64(holder.pid)), .instant(now.adding(seconds: leaseSeconds))],
                context: "renewing the lease of \(source)").affectedRows == 1
        }
    }

    public func release(source: String, holder: LeaseHolder) throws {
        try withConnection { connection in
            _ = try connection.query("""
                UPDATE source_leases SET expires_at = NULL WHERE source = $1 AND holder_host = $2 AND holder_pid = $3
                """, [.text(source), .text(holder.host), .integer(Int64(holder.pid))], context: "releasing the lease of \(source)")
        }
    }

    public func lease(of source: String) throws -> SourceLease? {
        try withConnection { connection in
            let result = try connection.query("SELECT \(Self.leaseColumns) FROM source_leases WHERE source = $1", [.text(source)],
                                              context: "reading the lease of \(source)")
            return result.rowCount == 1 ? try Self.lease(result, 0) : nil
        }
    }

    static let leaseColumns = "source, holder_host, holder_pid, expires_at, last_started_at"

    private static func lease(_ r: Result, _ row: Int32) throws -> SourceLease {
        SourceLease(source: r.string(row, 0) ?? "", holder: LeaseHolder(host: r.string(row, 1) ?? "", pid: Int32(r.int(row, 2) ?? 0)),
                    expiresAt: r.instant(row, 3), lastStartedAt: r.instant(row, 4) ?? UTCInstant(secondsSince1970: 0))
    }
}
