/// Each watch's position in the change feed, kept in the store that every scheduler host shares
/// (issue 22 item 5; docs/analyst.md, "Watches"), with a claim like a source's lease
/// (``SourceLeases``) so that one host at a time delivers a watch.
///
/// How the scheduler uses it, per watch and delivery turn:
/// - `claimWatch(…, holdSeconds:)`: refused (nil) while another holder's claim runs; else the
///   caller holds the watch until `now + holdSeconds` and gets its stored cursor.
/// - Before each delivery attempt, `advanceWatch(from: c, to: c)` renews the claim for a whole
///   `holdSeconds`, which exceed the attempt's timeout: no other host can claim the watch while
///   an attempt is under way.
/// - After a 2xx (or past transitions the watch does not want), `advanceWatch(from: c, to: n)`
///   moves the cursor, only while the caller still holds the claim and the cursor is still `c`.
/// - `releaseWatch` at the end of the turn.
///
/// So each transition is delivered by one host, none is skipped (the change feed hands out
/// cursors in commit order), and a transition is delivered again only when its host stopped
/// (kill -9, lost its database connection for a whole claim) between the receiver's 2xx and the
/// advance: the repeat carries the same cursor. On SQLite a claim of a process of this host that
/// no longer runs counts as expired, as a source lease does.

/// Where a watch the store does not know yet starts (the configuration's `from`).
public enum WatchStart: Equatable, Sendable {
    /// After the last transition committed when the watch is registered: only what comes next.
    case end
    /// After `cursor` (0: every transition in the log).
    case after(Int64)

    /// The cursor a watch registered now starts after, given the change feed's last one: a
    /// cursor beyond it is taken as the end (later transitions get larger cursors, so a start
    /// beyond the end would skip them).
    public func cursor(last: Int64) -> Int64 {
        switch self {
        case .end: last
        case .after(let cursor): min(max(0, cursor), last)
        }
    }
}

/// A watch's row: its cursor, who delivers it now, and what its deliveries last did.
public struct WatchPosition: Equatable, Sendable {
    public var watch: String
    /// The last transition delivered or passed over (not wanted); 0: none yet.
    public var cursor: Int64
    /// The host delivering it, while a claim runs or since it was released (the last holder);
    /// nil before any claim.
    public var holder: LeaseHolder?
    /// Until when `holder` delivers it without renewing; nil once released.
    public var expiresAt: UTCInstant?
    /// When the cursor last moved past a delivered transition.
    public var deliveredAt: UTCInstant?
    /// The last failed delivery (`HTTP 503`, a timeout, a command's exit status), kept after
    /// later successes, and when it happened.
    public var lastError: String?
    public var lastErrorAt: UTCInstant?

    public init(watch: String, cursor: Int64, holder: LeaseHolder? = nil, expiresAt: UTCInstant? = nil, deliveredAt: UTCInstant? = nil,
                lastError: String? = nil, lastErrorAt: UTCInstant? = nil) {
        self.watch = watch
        self.cursor = cursor
        self.holder = holder
        self.expiresAt = expiresAt
        self.deliveredAt = deliveredAt
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
    }
}

/// The watch positions of a store (SQLite `watch_positions`, migration 0012; PostgreSQL 0010).
public protocol WatchPositions: Sendable {
    /// Stores the watches it does not know yet, each at its start, in one transaction (`.end`
    /// reads the change feed's last cursor inside it); watches it knows keep their position.
    /// Returns the positions it stored, in the order given.
    /// - Throws: the store's errors.
    @discardableResult
    func registerWatches(_ starts: [(watch: String, start: WatchStart)]) throws -> [WatchPosition]

    /// Claims the delivery of `watch` for `holder` until `now + holdSeconds`: its position when
    /// claimed (the holder's own unexpired claim is claimed again); nil when another holder's
    /// claim has not expired, or the watch is not registered.
    /// - Throws: the store's errors; a refused claim is an answer, not an error.
    func claimWatch(_ watch: String, holder: LeaseHolder, now: UTCInstant, holdSeconds: Int64) throws -> WatchPosition?

    /// Moves the cursor of `watch` from `cursor` to `to` (`delivered`: past a delivered
    /// transition, stamped `now`) and extends the claim to `now + holdSeconds`, when `holder`
    /// still holds an unexpired claim and the cursor is still `cursor`; `to == cursor` only
    /// renews. Returns false otherwise: the holder must stop delivering the watch.
    func advanceWatch(_ watch: String, holder: LeaseHolder, from cursor: Int64, to: Int64, delivered: Bool,
                      now: UTCInstant, holdSeconds: Int64) throws -> Bool

    /// Records a failed delivery of `watch` (when `holder` still holds it).
    func recordWatchFailure(_ watch: String, holder: LeaseHolder, error: String, at: UTCInstant) throws

    /// Ends the holder's claim, keeping the position. Does nothing when it does not hold it.
    func releaseWatch(_ watch: String, holder: LeaseHolder) throws

    /// Every stored position, by watch name (byte order).
    func watchPositions() throws -> [WatchPosition]
}
