/// Ports: what the use cases need from the outside world. Adapters (`IncidentFeeds`,
/// `IncidentSQLite`) implement them; tests substitute their own.

/// The current time. Inject it so that tests control "now".
public struct Clock: Sendable {
    public var now: @Sendable () -> UTCInstant

    public init(now: @escaping @Sendable () -> UTCInstant) {
        self.now = now
    }

    /// A clock that always answers `instant`.
    public static func fixed(_ instant: UTCInstant) -> Clock {
        Clock { instant }
    }
}

/// A stream of mapped incidents read from one fetched response, in feed order.
public protocol IncidentStream {
    /// Calls `body` once per incident while reading. Throws when the response is malformed or
    /// is a provider error envelope; incidents already passed to `body` must then be discarded
    /// by the caller (the store rolls its transaction back).
    func forEach(_ body: (Incident) throws -> Void) throws
}

/// One configured source that can be polled (a provider, its parameters and its key).
public protocol IncidentFeed: Sendable {
    /// The configured source name; stored as `incidents.source`.
    var source: String { get }

    /// True for a saved response replayed from a file: it neither waits for nor changes the
    /// source's quota state, which belongs to the live API.
    var isReplay: Bool { get }

    /// Fetches one response and passes its incidents to `consume` as a stream. The response is
    /// held outside memory (a temporary file) and removed when this returns or throws.
    ///
    /// - Throws: the feed's typed errors (network, HTTP status, provider error envelope,
    ///   malformed body), or whatever `consume` throws.
    func poll<Result>(_ consume: (any IncidentStream) throws -> Result) async throws -> Result
}

extension IncidentFeed {
    public var isReplay: Bool { false }
}

/// Receives the incidents of one poll inside the store's transaction.
public protocol IncidentSink {
    /// Inserts or updates one incident by `(source, externalID)`.
    func upsert(_ incident: Incident) throws
}

/// The outcome of one poll of one source: how it ended and what it changed.
public enum RunStatus: String, Sendable, Codable, CaseIterable {
    /// Fetched, parsed and stored completely.
    case succeeded
    /// Nothing was stored; `error` says why.
    case failed
    /// Stopped by a signal or deadline before it finished; nothing was stored.
    case cancelled
    /// Not attempted (the source's quota is exhausted until a known time).
    case skipped
}

/// Record counts of one poll.
public struct IngestCounts: Equatable, Sendable, Codable {
    /// Records read from the response.
    public var fetched = 0
    /// Incidents seen for the first time.
    public var inserted = 0
    /// Known incidents whose content changed (a revision was recorded).
    public var updated = 0
    /// Known incidents seen again unchanged (only `last_seen_at` advanced).
    public var unchanged = 0
    /// Incidents that had been cleared and appeared again.
    public var reopened = 0
    /// Active incidents of the source absent from this complete poll.
    public var cleared = 0

    public init(fetched: Int = 0, inserted: Int = 0, updated: Int = 0, unchanged: Int = 0,
                reopened: Int = 0, cleared: Int = 0) {
        self.fetched = fetched
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.reopened = reopened
        self.cleared = cleared
    }
}

/// One row of the run log (`ingest_runs`).
public struct IngestRun: Equatable, Sendable {
    public var id: Int64?
    public var source: String
    public var startedAt: UTCInstant
    public var finishedAt: UTCInstant
    public var status: RunStatus
    public var counts: IngestCounts
    /// Log-safe text (keys redacted) saying what failed and what to do; nil on success.
    public var error: String?
    /// Set when the source's quota is exhausted (a failed or skipped run): the source is not
    /// polled again before this instant.
    public var resumesAt: UTCInstant?

    public init(id: Int64? = nil, source: String, startedAt: UTCInstant, finishedAt: UTCInstant,
                status: RunStatus, counts: IngestCounts = IngestCounts(), error: String? = nil,
                resumesAt: UTCInstant? = nil) {
        self.id = id
        self.source = source
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.status = status
        self.counts = counts
        self.error = error
        self.resumesAt = resumesAt
    }
}

/// Persistent storage of incidents and runs.
public protocol IncidentStore: Sendable {
    /// Stores one complete poll of `source` as one transaction: every incident `produce` passes
    /// to the sink is upserted, then the source's active incidents that were not seen are marked
    /// cleared, and a `succeeded` run is recorded. When `produce` throws, the transaction is
    /// rolled back (nothing of this poll remains) and the error is rethrown.
    ///
    /// - Parameter dryRun: do all of the above, then roll back; the counts say what would have
    ///   been written.
    func ingest(source: String, startedAt: UTCInstant, dryRun: Bool,
                _ produce: (any IncidentSink) throws -> Void) throws -> IngestCounts

    /// Records a run that stored nothing (failed, cancelled or skipped). When `run.resumesAt`
    /// is set, the source is also marked exhausted until then, in the same transaction.
    func recordRun(_ run: IngestRun) throws

    /// When the source's exhausted quota lets it run again; nil when it may run now or never
    /// was exhausted.
    func quotaResumesAt(source: String) throws -> UTCInstant?
}

/// An error that means the source's request quota is used up, so polling again before it
/// resets only wastes requests (and may get the key suspended).
public protocol QuotaExhaustion: Error {
    /// When the source may be polled again, given when this error happened; nil when this
    /// error is not about the quota.
    func quotaResumesAt(failedAt: UTCInstant) -> UTCInstant?
}

extension UTCInstant {
    /// The next midnight in Korea (UTC+9) after this instant, when daily quotas of Korean
    /// public APIs reset (data.go.kr: "일일 트래픽은 매일 자정에 초기화").
    public var nextKoreaMidnight: UTCInstant {
        let offset = Int64(UTCInstant.koreaUTCOffsetSeconds)
        let local = secondsSince1970 + offset
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return UTCInstant(secondsSince1970: (day + 1) * 86_400 - offset)
    }
}
