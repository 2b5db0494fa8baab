/// Leases that let schedulers on several hosts share one store's sources without polling a
/// source twice (issue 15): before each poll a scheduler claims the source's lease; it holds it
/// (renewing it during a long poll) until it releases it or the lease expires.
///
/// How the scheduler uses it (`interval` is the source's polling interval, `lease` a bound on
/// one poll's duration):
/// - `run --loop`, at each turn: `claim(…, leaseSeconds: lease, notStartedAfter: now − 0.9 ×
///   interval)`. A claim is refused while another holder's lease runs or while another host
///   started a poll less than 0.9 intervals ago, so each source is polled by one scheduler per
///   interval. When its scheduler dies (kill -9, lost network), another one takes the source at
///   its next turn once the lease has expired and 0.9 intervals have passed since the last
///   start: within `max(0.9 × interval, lease)` plus one turn (an interval and its jitter)
///   after that start.
/// - `run --once` from cron on several hosts at the same minute: the same claim; the first host
///   polls, the others are refused (the poll was started by another host). A process's own
///   earlier starts never refuse it; another process's do, on the same host too (two loops on
///   one host poll each source once per interval between them).
/// - After the poll: `release` (the start time stays, for the rule above).
///
/// Times come from the caller's clock. Schedulers sharing a PostgreSQL store take them from the
/// database server's clock (``SharedClock``), so a host whose clock is off does not hold a
/// source for longer than its lease, nor take one early.

/// Who holds a lease: one scheduler process, named by its host, its process id and a token it
/// drew when it started. The token tells apart processes that host and pid alone do not: two
/// containers given the same host name, each with pid 1, or a pid reused after a restart.
/// (The SQLite store, which one scheduler at a time holds, keeps no token.)
public struct LeaseHolder: Hashable, Sendable, CustomStringConvertible {
    /// The host name (`gethostname(2)`), as recorded in the run log.
    public var host: String
    /// The process id on that host.
    public var pid: Int32
    /// Drawn once per process (``newToken()``); empty when the store keeps none.
    public var token: String

    public init(host: String, pid: Int32, token: String = "") {
        self.host = host
        self.pid = pid
        self.token = token
    }

    /// A random token for a process that starts: 16 hex digits.
    public static func newToken() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 16)
    }

    /// `host pid 1234`, for messages.
    public var description: String { "\(host) pid \(pid)" }
}

/// A source's lease as stored: its holder (or last holder) and times.
public struct SourceLease: Equatable, Sendable {
    public var source: String
    /// The holder; once released, the last holder (who started the last poll).
    public var holder: LeaseHolder
    /// Until when the holder may poll without renewing; nil once released.
    public var expiresAt: UTCInstant?
    /// When the holder last claimed the lease, i.e. started a poll of the source.
    public var lastStartedAt: UTCInstant

    public init(source: String, holder: LeaseHolder, expiresAt: UTCInstant?, lastStartedAt: UTCInstant) {
        self.source = source
        self.holder = holder
        self.expiresAt = expiresAt
        self.lastStartedAt = lastStartedAt
    }

    /// Whether the lease is held (claimed, not released, not expired) at `now`.
    public func isHeld(at now: UTCInstant) -> Bool {
        expiresAt.map { $0 > now } ?? false
    }
}

/// The answer to a claim.
public enum LeaseClaim: Equatable, Sendable {
    /// The caller holds the lease now (as returned); it may poll.
    case claimed(SourceLease)
    /// Another holder's lease has not expired: it is polling the source.
    case held(SourceLease)
    /// Another host started a poll of the source after `notStartedAfter`.
    case recentlyStarted(SourceLease)

    /// The lease as stored after the claim.
    public var lease: SourceLease {
        switch self {
        case .claimed(let lease), .held(let lease), .recentlyStarted(let lease): lease
        }
    }
}

/// Per-source leases in the store that every scheduler host shares.
public protocol SourceLeases: Sendable {
    /// Claims the lease of `source` for `holder` until `now + leaseSeconds`, and records `now`
    /// as its last start. Succeeds when no other holder has an unexpired lease (a holder whose
    /// process is known dead counts as expired where the store can tell: SQLite, same host)
    /// and no poll of the source was started by another holder after `notStartedAfter` (nil: no
    /// such condition). The holder's own unexpired lease is claimed again.
    /// - Throws: the store's errors; a refused claim is an answer, not an error.
    func claim(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64,
               notStartedAfter: UTCInstant?) throws -> LeaseClaim

    /// Extends the holder's lease to `now + leaseSeconds` (during a long poll). Returns false
    /// when the holder no longer holds it (released, or taken by another after it expired):
    /// the poll should then stop.
    func renew(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64) throws -> Bool

    /// Ends the holder's lease, keeping its last start time. Does nothing when the holder does
    /// not hold it.
    func release(source: String, holder: LeaseHolder) throws

    /// The stored lease of `source`; nil when none was ever claimed.
    func lease(of source: String) throws -> SourceLease?
}

/// A store whose blocking calls can be stopped from another thread (a SIGTERM, a deadline, a
/// lost lease), even while the network to the database has stopped answering.
public protocol StoreInterruption: Sendable {
    /// Stops the store calls under way for `source` (every call when nil): they throw now,
    /// and what they had not committed is rolled back.
    func interrupt(source: String?)
}

/// A clock every host sharing a store agrees on: the database server's.
public protocol SharedClock: Sendable {
    /// The server's current time, in seconds since 1970 (fractional).
    /// - Throws: the store's errors.
    func sharedTime() throws -> Double
}
