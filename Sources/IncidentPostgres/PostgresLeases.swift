import IncidentCore

/// The source leases in PostgreSQL (`source_leases`), shared by every scheduler host.
///
/// A claim is one `INSERT … ON CONFLICT (source) DO UPDATE … WHERE <claimable>`: the conflicting
/// row is locked and the condition evaluated on its latest version, so when several hosts
/// claim at once exactly one succeeds and the others see its lease. A lease of a dead process
/// is not detected here (the hosts are different machines): it runs out at its expiry.
///
/// A holder is its host, pid and token (``LeaseHolder``): a process's own lease and its own
/// earlier starts never refuse it; any other process's do, on the same host too.
extension PostgresStore: SourceLeases {
    public func claim(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64,
                      notStartedAfter: UTCInstant?) throws -> LeaseClaim {
        try withConnection(source: source) { connection in
            let context = "claiming the lease of \(source)"
            let claimed = try connection.query("""
                INSERT INTO source_leases AS l (source, holder_host, holder_pid, holder_token, expires_at, last_started_at)
                VALUES (:source, :holder_host, :holder_pid, :holder_token, :expires_at, :last_started_at)
                ON CONFLICT (source) DO UPDATE SET holder_host = excluded.holder_host, holder_pid = excluded.holder_pid,
                    holder_token = excluded.holder_token, expires_at = excluded.expires_at, last_started_at = excluded.last_started_at
                WHERE (\(Self.sameHolder) OR l.expires_at IS NULL OR l.expires_at <= excluded.last_started_at)
                  AND (:not_started_after::timestamptz IS NULL OR \(Self.sameHolder) OR l.last_started_at <= :not_started_after::timestamptz)
                RETURNING \(Self.leaseColumns)
                """, named: Self.arguments(source, holder).merging(["expires_at": .instant(now.adding(seconds: leaseSeconds)),
                    "last_started_at": .instant(now), "not_started_after": .optional(notStartedAfter)]) { $1 }, context: context)
            if claimed.rowCount == 1 { return .claimed(try Self.lease(claimed, 0)) }
            // Refused: say why, from the row that refused it.
            let current = try connection.query("SELECT \(Self.leaseColumns) FROM source_leases WHERE source = :source",
                                               named: ["source": .text(source)], context: context)
            guard current.rowCount == 1 else {
                throw PostgresError(message: "the lease row vanished during the claim", context: context)
            }
            let lease = try Self.lease(current, 0)
            return lease.holder != holder && lease.isHeld(at: now) ? .held(lease) : .recentlyStarted(lease)
        }
    }

    /// One attempt to connect when needed: the scheduler renews every third of a lease, and a
    /// renewal waiting for a server that is down would hold a connection slot the others need.
    public func renew(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64) throws -> Bool {
        try withConnection(source: source, reconnect: false) { connection in
            try connection.query("""
                UPDATE source_leases SET expires_at = :expires_at WHERE \(Self.heldBy) AND expires_at IS NOT NULL
                """, named: Self.arguments(source, holder).merging(["expires_at": .instant(now.adding(seconds: leaseSeconds))]) { $1 },
                context: "renewing the lease of \(source)").affectedRows == 1
        }
    }

    public func release(source: String, holder: LeaseHolder) throws {
        try withConnection(source: source) { connection in
            _ = try connection.query("""
                UPDATE source_leases SET expires_at = NULL WHERE \(Self.heldBy)
                """, named: Self.arguments(source, holder), context: "releasing the lease of \(source)")
        }
    }

    public func lease(of source: String) throws -> SourceLease? {
        try withConnection { connection in
            let result = try connection.query("SELECT \(Self.leaseColumns) FROM source_leases WHERE source = :source",
                                              named: ["source": .text(source)], context: "reading the lease of \(source)")
            return result.rowCount == 1 ? try Self.lease(result, 0) : nil
        }
    }

    static let leaseColumns = "source, holder_host, holder_pid, expires_at, last_started_at, holder_token"

    /// The lease row of `:source` held by the holder `:holder_host`, `:holder_pid`, `:holder_token`.
    private static let heldBy = "source = :source AND holder_host = :holder_host AND holder_pid = :holder_pid AND holder_token = :holder_token"

    /// The values of ``heldBy``'s parameters.
    private static func arguments(_ source: String, _ holder: LeaseHolder) -> [String: PostgresValue] {
        ["source": .text(source), "holder_host": .text(holder.host), "holder_pid": .integer(Int64(holder.pid)),
         "holder_token": .text(holder.token)]
    }

    /// The stored holder (`l`) is the claiming one (`excluded`).
    private static let sameHolder = """
        (l.holder_host = excluded.holder_host AND l.holder_pid = excluded.holder_pid AND l.holder_token = excluded.holder_token)
        """

    private static func lease(_ r: Result, _ row: Int32) throws -> SourceLease {
        SourceLease(source: r.string(row, 0) ?? "",
                    holder: LeaseHolder(host: r.string(row, 1) ?? "", pid: Int32(r.int(row, 2) ?? 0), token: r.string(row, 5) ?? ""),
                    expiresAt: r.instant(row, 3), lastStartedAt: r.instant(row, 4) ?? UTCInstant(secondsSince1970: 0))
    }

    /// The fencing check of a poll: inside the poll's transaction, just before it commits,
    /// `holder` must still hold the lease of `source` (not released, not expired on the
    /// server's clock, not taken by another). The row is locked until the commit, so no claim
    /// can take it in between. A poll that outlived its lease (a partition, a pause) is rolled
    /// back instead of committing over the poll of the host that took the source.
    /// - Throws: ``PostgresError`` saying the lease was lost.
    static func checkLease(of source: String, holder: LeaseHolder, connection: Connection) throws {
        let held = try connection.query("""
            SELECT 1 FROM source_leases
            WHERE \(Self.heldBy) AND expires_at > clock_timestamp()
            FOR UPDATE
            """, named: arguments(source, holder),
            context: "checking the lease of \(source) before committing its poll")
        guard held.rowCount == 1 else {
            throw PostgresError(message: "this scheduler no longer holds the lease of \(source) (it ran out or another host took it); "
                                + "the poll was rolled back so as not to overwrite the other host's",
                                context: "committing the poll of \(source)")
        }
    }
}

// MARK: - SharedClock

extension PostgresStore: SharedClock {
    /// The server's `clock_timestamp()`.
    public func sharedTime() throws -> Double {
        try withConnection { connection in
            let result = try connection.query("SELECT extract(epoch FROM clock_timestamp())::float8", context: "reading the server's clock")
            guard let seconds = result.double(0, 0) else {
                throw PostgresError(message: "the server returned no time", context: "reading the server's clock")
            }
            return seconds
        }
    }
}
