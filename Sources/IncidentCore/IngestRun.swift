/// The run log: one row per attempt to poll one source (`ingest_runs`).

/// How one poll of one source ended.
public enum RunStatus: String, Sendable, Codable, CaseIterable {
    /// Fetched, read and stored; the response was complete, so incidents it no longer lists
    /// were cleared.
    case succeeded
    /// Fetched, read and stored, but the response was not complete (see
    /// ``ResponseVerdict``), so nothing was cleared; `warnings` say why.
    case incomplete
    /// Fetched, read and stored as history only: the document says it was published before
    /// the newest one already applied for its source (a cache or a replica served an older
    /// copy), so it overwrote no newer content, reopened and cleared nothing (docs/providers.md, "Time
    /// order"); `warnings` give both publication times.
    case stale
    /// Nothing was stored; `error` says why.
    case failed
    /// Stopped by a signal or deadline after it started; nothing was stored.
    case cancelled
    /// Not started (the quota is exhausted, the deadline passed or a signal came before its
    /// turn, or another scheduler holds the source); `error` says why.
    case skipped

    /// Records of this run are in the database.
    public var stored: Bool { self == .succeeded || self == .incomplete || self == .stale }
}

/// Record counts of one poll.
public struct IngestCounts: Equatable, Sendable, Codable {
    /// Records read from the response (incidents and rejected records; a repeated record once
    /// per occurrence).
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
    /// Records set aside (quarantined) with their reason.
    public var rejected = 0
    /// Records whose id was already listed earlier in the same response (counted once).
    public var duplicates = 0

    public init(fetched: Int = 0, inserted: Int = 0, updated: Int = 0, unchanged: Int = 0,
                reopened: Int = 0, cleared: Int = 0, rejected: Int = 0, duplicates: Int = 0) {
        self.fetched = fetched
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.reopened = reopened
        self.cleared = cleared
        self.rejected = rejected
        self.duplicates = duplicates
    }
}

/// One row of the run log.
public struct IngestRun: Equatable, Sendable {
    public var id: Int64?
    public var source: String
    public var startedAt: UTCInstant
    public var finishedAt: UTCInstant
    public var status: RunStatus
    public var counts: IngestCounts
    /// Live poll, or a file replay (with its path).
    public var origin: FeedOrigin
    /// When the response was fetched: the poll's start for a live poll, `--as-of` (or the
    /// file's modification time) for a replay. Incidents are stamped seen at this instant.
    public var observedAt: UTCInstant
    /// Log-safe text (keys redacted) saying what failed and what to do; nil on success.
    public var error: String?
    /// Why the poll was incomplete, then other warnings; one line each, log-safe.
    public var warnings: [String]
    /// Set when the source's quota is exhausted (a failed or skipped run): the source is not
    /// polled again before this instant.
    public var resumesAt: UTCInstant?
    /// The host name of the scheduler that ran the poll.
    public var host: String?
    /// When the response's document says it was published (WZDx `update_date`, DATEX II
    /// `publicationTime`), to the second; nil when it says nothing or nothing was read.
    public var publishedAt: UTCInstant?

    public init(id: Int64? = nil, source: String, startedAt: UTCInstant, finishedAt: UTCInstant,
                status: RunStatus, counts: IngestCounts = IngestCounts(), origin: FeedOrigin = .live,
                observedAt: UTCInstant? = nil, error: String? = nil, warnings: [String] = [],
                resumesAt: UTCInstant? = nil, host: String? = nil, publishedAt: UTCInstant? = nil) {
        self.id = id
        self.source = source
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.status = status
        self.counts = counts
        self.origin = origin
        self.observedAt = observedAt ?? startedAt
        self.error = error
        self.warnings = warnings
        self.resumesAt = resumesAt
        self.host = host
        self.publishedAt = publishedAt
    }
}
