import IncidentCore

/// The watch positions in PostgreSQL (`watch_positions`, migration 0010), shared by every
/// scheduler host: the rules of ``WatchPositions``. A claim and an advance are each one
/// `UPDATE … WHERE <condition>`, which locks the row and evaluates the condition on its latest
/// version, so of several hosts claiming at once exactly one succeeds, and an advance by a host
/// whose claim another took finds no row. A holder is its host, pid and token (``LeaseHolder``).
extension PostgresStore: WatchPositions {
    @discardableResult
    public func registerWatches(_ starts: [(watch: String, start: WatchStart)]) throws -> [WatchPosition] {
        guard !starts.isEmpty else { return [] }
        return try withConnection { connection in
            let context = "registering the watches"
            return try connection.transaction(context: context) {
                // Committed polls only: one committing now draws larger cursors (``PollTransitionLog``).
                let last = try connection.query("SELECT last_cursor FROM change_feed", context: context).int64(0, 0) ?? 0
                var registered: [WatchPosition] = []
                for (watch, start) in starts {
                    let cursor = start.cursor(last: last)
                    let inserted = try connection.query("""
                        INSERT INTO watch_positions (watch, cursor) VALUES (:watch, :cursor) ON CONFLICT (watch) DO NOTHING
                        """, named: ["watch": .text(watch), "cursor": .integer(cursor)], context: context)
                    if inserted.affectedRows == 1 { registered.append(WatchPosition(watch: watch, cursor: cursor)) }
                }
                return registered
            }
        }
    }

    public func claimWatch(_ watch: String, holder: LeaseHolder, now: UTCInstant, holdSeconds: Int64) throws -> WatchPosition? {
        try withConnection { connection in
            let claimed = try connection.query("""
                UPDATE watch_positions SET holder_host = :holder_host, holder_pid = :holder_pid, holder_token = :holder_token,
                    expires_at = :expires_at
                WHERE watch = :watch AND (expires_at IS NULL OR expires_at <= :now
                    OR (holder_host = :holder_host AND holder_pid = :holder_pid AND holder_token = :holder_token))
                RETURNING \(Self.positionColumns)
                """, named: Self.heldByArguments(watch, holder).merging([
                    "now": .instant(now), "expires_at": .instant(now.adding(seconds: holdSeconds)),
                ]) { $1 }, context: "claiming the watch \(watch)")
            return claimed.rowCount == 1 ? Self.position(claimed, 0) : nil
        }
    }

    public func advanceWatch(_ watch: String, holder: LeaseHolder, from cursor: Int64, to: Int64, delivered: Bool,
                             now: UTCInstant, holdSeconds: Int64) throws -> Bool {
        try withConnection { connection in
            try connection.query("""
                UPDATE watch_positions SET cursor = :to, expires_at = :expires_at,
                    delivered_at = coalesce(:delivered_at::timestamptz, delivered_at)
                WHERE \(Self.watchHeldBy) AND expires_at IS NOT NULL AND cursor = :from
                """, named: Self.heldByArguments(watch, holder).merging([
                    "to": .integer(to), "from": .integer(cursor), "delivered_at": .optional(delivered ? now : nil),
                    "expires_at": .instant(now.adding(seconds: holdSeconds)),
                ]) { $1 }, context: "recording the position of the watch \(watch)").affectedRows == 1
        }
    }

    public func recordWatchFailure(_ watch: String, holder: LeaseHolder, error: String, at: UTCInstant) throws {
        try withConnection { connection in
            _ = try connection.query("UPDATE watch_positions SET last_error = :error, last_error_at = :at WHERE \(Self.watchHeldBy)",
                                     named: Self.heldByArguments(watch, holder).merging(["error": .text(error), "at": .instant(at)]) { $1 },
                                     context: "recording the failure of the watch \(watch)")
        }
    }

    public func releaseWatch(_ watch: String, holder: LeaseHolder) throws {
        try withConnection { connection in
            _ = try connection.query("UPDATE watch_positions SET expires_at = NULL WHERE \(Self.watchHeldBy)",
                                     named: Self.heldByArguments(watch, holder), context: "releasing the watch \(watch)")
        }
    }

    public func watchPositions() throws -> [WatchPosition] {
        try withConnection { connection in
            let result = try connection.query("SELECT \(Self.positionColumns) FROM watch_positions ORDER BY watch",
                                              context: "reading the watch positions")
            return (0..<result.rowCount).map { Self.position(result, $0) }
        }
    }

    private static let positionColumns =
        "watch, cursor, holder_host, holder_pid, holder_token, expires_at, delivered_at, last_error, last_error_at"

    /// The row of `:watch` claimed by the holder `:holder_host`, `:holder_pid`, `:holder_token`.
    private static let watchHeldBy =
        "watch = :watch AND holder_host = :holder_host AND holder_pid = :holder_pid AND holder_token = :holder_token"

    private static func heldByArguments(_ watch: String, _ holder: LeaseHolder) -> [String: PostgresValue] {
        ["watch": .text(watch), "holder_host": .text(holder.host), "holder_pid": .integer(Int64(holder.pid)),
         "holder_token": .text(holder.token)]
    }

    private static func position(_ r: Result, _ row: Int32) -> WatchPosition {
        WatchPosition(watch: r.string(row, 0) ?? "", cursor: r.int64(row, 1) ?? 0,
                      holder: r.string(row, 2).map { LeaseHolder(host: $0, pid: Int32(r.int(row, 3) ?? 0), token: r.string(row, 4) ?? "") },
                      expiresAt: r.instant(row, 5), deliveredAt: r.instant(row, 6), lastError: r.string(row, 7), lastErrorAt: r.instant(row, 8))
    }
}
