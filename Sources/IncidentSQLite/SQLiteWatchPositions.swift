import IncidentCore

/// The watch positions in SQLite (`watch_positions`, migration 0012): the rules of
/// ``WatchPositions``, each decided in one `BEGIN IMMEDIATE` transaction. As with the source
/// leases (``SQLiteStore/claim(source:holder:now:leaseSeconds:notStartedAfter:)``), a holder is
/// its host and pid (no token), and a claim of a process of this host that no longer runs
/// counts as expired: a scheduler killed between a delivery and its record leaves the watch to
/// the next one at once, which delivers that transition again (with the same cursor).
extension SQLiteStore: WatchPositions {
    @discardableResult
    public func registerWatches(_ starts: [(watch: String, start: WatchStart)]) throws -> [WatchPosition] {
        guard !starts.isEmpty else { return [] }
        return try withDatabase { db in
            try db.writeTransaction {
                let last = try db.scalarInt("SELECT coalesce(max(id), 0) FROM incident_transitions") ?? 0
                var registered: [WatchPosition] = []
                for (watch, start) in starts {
                    let cursor = start.cursor(last: last)
                    try db.run("INSERT INTO watch_positions (watch, cursor) VALUES (:watch, :cursor) ON CONFLICT (watch) DO NOTHING",
                               ["watch": .text(watch), "cursor": .integer(cursor)])
                    if db.changes == 1 { registered.append(WatchPosition(watch: watch, cursor: cursor)) }
                }
                return registered
            }
        }
    }

    public func claimWatch(_ watch: String, holder: LeaseHolder, now: UTCInstant, holdSeconds: Int64) throws -> WatchPosition? {
        try withDatabase { db in
            try db.writeTransaction {
                guard var position = try Self.watchPositions(db, watch: watch).first else { return nil }
                if let current = position.holder, !Self.same(current, holder), let expiresAt = position.expiresAt, expiresAt > now,
                   current.host != holder.host || Self.isRunning(pid: current.pid) {
                    return nil
                }
                position.holder = LeaseHolder(host: holder.host, pid: holder.pid)
                position.expiresAt = now.adding(seconds: holdSeconds)
                try db.run("""
                    UPDATE watch_positions SET holder_host = :host, holder_pid = :pid, expires_at = :expires_at WHERE watch = :watch
                    """, Self.heldBy(watch, holder).merging(["expires_at": .instant(position.expiresAt)]) { $1 })
                return position
            }
        }
    }

    public func advanceWatch(_ watch: String, holder: LeaseHolder, from cursor: Int64, to: Int64, delivered: Bool,
                             now: UTCInstant, holdSeconds: Int64) throws -> Bool {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("""
                    UPDATE watch_positions SET cursor = :to, expires_at = :expires_at, delivered_at = coalesce(:delivered_at, delivered_at)
                    WHERE \(Self.heldByClause) AND expires_at IS NOT NULL AND cursor = :from
                    """, Self.heldBy(watch, holder).merging([
                        "to": .integer(to), "from": .integer(cursor), "delivered_at": .instant(delivered ? now : nil),
                        "expires_at": .instant(now.adding(seconds: holdSeconds)),
                    ]) { $1 })
                return db.changes == 1
            }
        }
    }

    public func recordWatchFailure(_ watch: String, holder: LeaseHolder, error: String, at: UTCInstant) throws {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("UPDATE watch_positions SET last_error = :error, last_error_at = :at WHERE \(Self.heldByClause)",
                           Self.heldBy(watch, holder).merging(["error": .text(error), "at": .instant(at)]) { $1 })
            }
        }
    }

    public func releaseWatch(_ watch: String, holder: LeaseHolder) throws {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("UPDATE watch_positions SET expires_at = NULL WHERE \(Self.heldByClause)", Self.heldBy(watch, holder))
            }
        }
    }

    public func watchPositions() throws -> [WatchPosition] {
        try withDatabase { try Self.watchPositions($0, watch: nil) }
    }

    /// The row of `:watch` claimed by the process `:host`, `:pid`.
    private static let heldByClause = "watch = :watch AND holder_host = :host AND holder_pid = :pid"

    private static func heldBy(_ watch: String, _ holder: LeaseHolder) -> [String: SQLiteValue] {
        ["watch": .text(watch), "host": .text(holder.host), "pid": .integer(Int64(holder.pid))]
    }

    /// Host and pid: SQLite keeps no token.
    private static func same(_ a: LeaseHolder, _ b: LeaseHolder) -> Bool { a.host == b.host && a.pid == b.pid }

    private static func watchPositions(_ db: Database, watch: String?) throws -> [WatchPosition] {
        var positions: [WatchPosition] = []
        try db.query("""
            SELECT watch, cursor, holder_host, holder_pid, expires_at, delivered_at, last_error, last_error_at FROM watch_positions
            WHERE :watch IS NULL OR watch = :watch ORDER BY watch
            """, ["watch": .optional(watch)]) { row in
            positions.append(WatchPosition(
                watch: row.string(at: 0) ?? "", cursor: row.int64(at: 1) ?? 0,
                holder: row.string(at: 2).map { LeaseHolder(host: $0, pid: Int32(row.int64(at: 3) ?? 0)) },
                expiresAt: row.instant(at: 4), deliveredAt: row.instant(at: 5), lastError: row.string(at: 6), lastErrorAt: row.instant(at: 7)))
        }
        return positions
    }
}

