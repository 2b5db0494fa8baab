/// Ports between the use cases / commands and the stores (`IncidentSQLite`, later others).
/// Commands reach storage only through these protocols; one composition-root function in
/// `IncidentApp` turns the configured `database` value into them.

/// What the store needs to know about one poll.
public struct PollContext: Equatable, Sendable {
    /// The configured source name.
    public var source: String
    /// When the poll began (the run's `started_at`).
    public var startedAt: UTCInstant
    /// When the response was fetched; incidents are stamped seen at this instant.
    public var observedAt: UTCInstant
    /// Live poll or file replay. A file replay clears nothing unless its origin says complete.
    public var origin: FeedOrigin
    /// The scheduler's host name, recorded in the run log.
    public var host: String?
    /// Do everything, then roll back: the returned run says what would have been written.
    public var dryRun: Bool
    /// Set when the response's document is older than the newest already applied for the
    /// source: it is then stored like an older replay (history at its own time, never
    /// overwriting newer content, never reopening, never clearing) and its run is `stale`.
    public var stale: StaleDocument?
    /// The scheduler process that claimed the source's lease for this poll (nil: no lease).
    /// A store shared by several hosts commits the poll only while this holder still holds
    /// the lease (a fencing check in the poll's transaction); SQLite, which one scheduler
    /// holds at a time, needs none.
    public var leaseHolder: LeaseHolder?

    public init(source: String, startedAt: UTCInstant, observedAt: UTCInstant? = nil, origin: FeedOrigin = .live,
                host: String? = nil, dryRun: Bool = false, stale: StaleDocument? = nil, leaseHolder: LeaseHolder? = nil) {
        self.leaseHolder = leaseHolder
        self.source = source
        self.startedAt = startedAt
        self.observedAt = observedAt ?? startedAt
        self.origin = origin
        self.host = host
        self.dryRun = dryRun
        self.stale = stale
    }

    /// Whether a complete response of this poll may clear the incidents it no longer lists: a
    /// live poll or a replay said to be complete, and not a stale document.
    public var mayClear: Bool {
        guard stale == nil else { return false }
        switch origin {
        case .live: return true
        case .file(_, let complete): return complete
        }
    }

    /// Whether this poll is history rather than the present: a file replay or a stale
    /// document, whose appearances, reopenings and clears the transition log places at the
    /// document's own time. A live poll of a current document is the present (false).
    public var isHistory: Bool {
        if case .live = origin, stale == nil { return false }
        return true
    }

    /// The same poll as a stale document: observed at its publication time when that is
    /// earlier (its own time), stored as history only.
    public func asStale(_ stale: StaleDocument) -> PollContext {
        var poll = self
        poll.stale = stale
        poll.observedAt = min(observedAt, stale.publishedAt)
        return poll
    }
}

/// Receives the records of one poll inside the store's transaction.
public protocol PollSink {
    /// Inserts or updates one incident by `(source, externalID)`. An id already listed earlier
    /// in the same poll is counted as a duplicate and changes nothing.
    func upsert(_ incident: Incident) throws
    /// Quarantines one record with its reason. When its id is known, the incident with that id
    /// is kept from being cleared by this poll.
    func reject(_ record: RejectedRecord) throws
}

/// Stores and the time order of a source's documents.
extension IngestStore {
    /// Stores one poll (``ingest(_:_:)``); when the store finds its document older than the
    /// newest already applied for the source (it throws ``StaleDocument`` and rolls back), reads
    /// it again as a stale document (``PollContext/asStale(_:)``): `produce` is called twice
    /// then, so it must be able to read its response again.
    public func ingestInTimeOrder(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
        do {
            return try ingest(poll, produce)
        } catch let stale as StaleDocument where poll.stale == nil {
            return try ingest(poll.asStale(stale), produce)
        }
    }
}

/// Writing polls and the run log.
public protocol IngestStore: Sendable {
    /// Stores one poll as one transaction: every record `produce` passes to the sink, then, when
    /// the verdict `produce` returns is complete and `poll.mayClear`, marks cleared the source's
    /// active incidents this poll did not list (nor reject); then records the run
    /// (`succeeded`, or `incomplete` with the verdict's reasons as warnings; `stale` for a
    /// ``PollContext/stale`` poll). When `produce` throws, the transaction is rolled back
    /// (nothing of this poll remains) and the error is rethrown. When the verdict's
    /// ``ResponseVerdict/publishedAt`` is earlier than the newest publication time applied for
    /// the source and the poll is not already stale, it rolls back and throws
    /// ``StaleDocument`` (``ingestInTimeOrder(_:_:)`` then stores it again as history). A
    /// record whose id an earlier record of the poll listed with other content (twins) is set
    /// aside with ``RejectedRecord/twin(of:position:)``; with the same content it is a duplicate.
    func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun

    /// Records a run that stored nothing (failed, cancelled or skipped). When `run.resumesAt`
    /// is set, the source is also marked exhausted until then, in the same transaction.
    func recordRun(_ run: IngestRun) throws

    /// When the source's exhausted quota lets it run again; nil when it may run now or never
    /// was exhausted.
    func quotaResumesAt(source: String) throws -> UTCInstant?
}

/// An incident, its previous versions and the records of it that were set aside.
public struct IncidentHistory: Equatable, Sendable {
    public var current: StoredIncident
    /// Previous values, oldest first.
    public var revisions: [IncidentRevision]
    /// Records with this incident's id that polls quarantined, newest first.
    public var rejections: [StoredRejection]

    public init(current: StoredIncident, revisions: [IncidentRevision], rejections: [StoredRejection] = []) {
        self.current = current
        self.revisions = revisions
        self.rejections = rejections
    }
}

/// A quarantined record as stored, with the run that set it aside.
public struct StoredRejection: Equatable, Sendable {
    public var runID: Int64
    public var source: String
    public var rejectedAt: UTCInstant
    public var record: RejectedRecord

    public init(runID: Int64, source: String, rejectedAt: UTCInstant, record: RejectedRecord) {
        self.runID = runID
        self.source = source
        self.rejectedAt = rejectedAt
        self.record = record
    }
}

/// What the run log says about one source: for `sources`, health views and metrics.
public struct SourceSummary: Equatable, Sendable {
    public var source: String
    /// The most recent run of any status; nil when the source never ran.
    public var lastRun: IngestRun?
    /// When the most recent run that stored records finished.
    public var lastSuccessAt: UTCInstant?
    /// Failed or cancelled runs since the last run that stored records (skipped ones do not count).
    public var consecutiveFailures: Int
    /// When the oldest of those failed or cancelled runs started; nil when there is none.
    public var failingSince: UTCInstant?
    /// The quota pause, when one is in force or was last set.
    public var quotaExhaustedUntil: UTCInstant?
    /// Stale runs (a document older than one already applied) since the last run that stored
    /// a current document.
    public var staleRuns = 0

    public init(source: String, lastRun: IngestRun? = nil, lastSuccessAt: UTCInstant? = nil,
                consecutiveFailures: Int = 0, failingSince: UTCInstant? = nil, quotaExhaustedUntil: UTCInstant? = nil) {
        self.source = source
        self.lastRun = lastRun
        self.lastSuccessAt = lastSuccessAt
        self.consecutiveFailures = consecutiveFailures
        self.failingSince = failingSince
        self.quotaExhaustedUntil = quotaExhaustedUntil
    }
}

/// Reading stored incidents and runs (the query CLI, metrics, `sources`).
public protocol IncidentReader: Sendable {
    /// Calls `row` for each incident matching `query`, in its order, while the store reads them:
    /// memory does not depend on the number of rows. With a ``IncidentQuery/near`` point, only
    /// incidents within ``IncidentQuery/radiusMeters`` by ``Coordinate/distance(to:)``, and
    /// ``IncidentOrder/distance`` lists the nearest first (ties by id); the limit applies after
    /// both. `--search` text that the store cannot use is a ``QueryError``, never a store error.
    func forEachIncident(matching query: IncidentQuery, _ row: (StoredIncident) throws -> Void) throws
    /// One incident, its revisions and its quarantined records; nil when there is no such id.
    func history(ofIncident id: Int64) throws -> IncidentHistory?
    /// Counts of the incidents matching `query` (its order and limit are ignored); hours of
    /// start are counted at `utcOffsetSeconds` east of UTC.
    func statistics(matching query: IncidentQuery, utcOffsetSeconds: Int) throws -> IncidentStatistics
    /// Counts of the incidents matching `query` (its order and limit are ignored) grouped by
    /// `field`, and per local day or hour of start when `bucket` is given; local times are
    /// `utcOffsetSeconds` east of UTC. Order and keys as ``GroupCounter/count(_:matching:by:per:utcOffset:)``,
    /// which is also the default implementation.
    func groupCounts(matching query: IncidentQuery, by field: IncidentGrouping, per bucket: TimeBucket?,
                     utcOffsetSeconds: Int) throws -> [GroupCount]
    /// The most recent runs, newest first; failures first when `failuresFirst`.
    func runs(source: String?, limit: Int, failuresFirst: Bool) throws -> [IngestRun]
    /// The records a run quarantined, in response order.
    func rejections(runID: Int64) throws -> [StoredRejection]
    /// One summary per source that has runs or quota state, by source name.
    func sourceSummaries() throws -> [SourceSummary]
    /// The number of incidents active at `now` (``StoredIncident/isActive(at:)``) per source;
    /// sources without any are absent. For health views and metrics.
    func activeIncidentCounts(at now: UTCInstant) throws -> [String: Int]
    /// This store as a ``ListingRowReader`` when it is one (the fast path of exports), else nil:
    /// a witness chosen when the conformance is compiled, where `as? any ListingRowReader` has the
    /// runtime scan every protocol conformance of the executable (about 0.4 M instructions, once
    /// per process: issue 23, "start fast").
    var listingRows: (any ListingRowReader)? { get }
}

extension IncidentReader {
    /// Not a ``ListingRowReader``: nil (a ``ListingRowReader`` is its own).
    public var listingRows: (any ListingRowReader)? { nil }

    /// Counted through ``statistics(matching:utcOffsetSeconds:)``; a store with a cheaper
    /// query (one `GROUP BY source`) implements the requirement itself.
    public func activeIncidentCounts(at now: UTCInstant) throws -> [String: Int] {
        Dictionary(try statistics(matching: IncidentQuery(now: now, activeOnly: true), utcOffsetSeconds: 0).bySource,
                   uniquingKeysWith: +)
    }
}

/// What a prune removed (or, counted by ``StoreAdministration/pruneCounts(before:)``, would
/// remove): rows of each kind.
public struct PruneCounts: Equatable, Sendable {
    /// Incidents cleared before the horizon.
    public var incidents = 0
    /// Their earlier versions (`incident_revisions`).
    public var revisions = 0
    /// Their entries in the transition log (`incident_transitions`; entries of no incident stay).
    public var transitions = 0
    /// Runs finished before the horizon, each source's latest run excepted.
    public var runs = 0
    /// The records those runs set aside (quarantined, `rejected_records`).
    public var rejectedRecords = 0

    public init(incidents: Int = 0, revisions: Int = 0, transitions: Int = 0, runs: Int = 0, rejectedRecords: Int = 0) {
        self.incidents = incidents
        self.revisions = revisions
        self.transitions = transitions
        self.runs = runs
        self.rejectedRecords = rejectedRecords
    }
}

/// One schema migration and when it was applied.
public struct MigrationState: Equatable, Sendable {
    public var version: Int
    public var name: String
    /// RFC 3339 UTC; nil while pending.
    public var appliedAt: UTCInstant?

    public init(version: Int, name: String, appliedAt: UTCInstant?) {
        self.version = version
        self.name = name
        self.appliedAt = appliedAt
    }
}

/// Schema, retention and quota administration.
public protocol StoreAdministration: Sendable {
    /// Applies pending migrations; returns the names applied (empty when up to date).
    func migrate() throws -> [String]
    /// Every migration this build knows and when each was applied.
    func migrationStates() throws -> [MigrationState]
    /// Deletes incidents cleared, and runs finished, before `horizon` (each source's latest run
    /// is kept), in small transactions, with their revisions, transitions and records set aside.
    func prune(before horizon: UTCInstant) throws -> PruneCounts
    /// What ``prune(before:)`` would delete now, deleting nothing (`prune --dry-run`): the
    /// prune's own selections counted in one read-only statement (``PruneSQL``).
    func pruneCounts(before horizon: UTCInstant) throws -> PruneCounts
    /// Lets an exhausted source run again at once. Returns whether it was exhausted.
    func clearQuota(source: String) throws -> Bool
}

/// A lock held until released (or until its process dies).
public protocol HeldLock: AnyObject, Sendable {
    /// Releases the lock; also done when the value is deinitialized.
    func release()
    /// Whether the lock still guards what it was taken for; a lock file deleted or replaced
    /// under a running process no longer does (another process can take the file now at the
    /// path): the lock on that file is taken when it is free. Default: ``HeldLockState/held``.
    func verify() -> HeldLockState
    /// Whether the file locked is still the one at the path (not deleted, not replaced), without
    /// taking anything. Default: true.
    func isInPlace() -> Bool
}

extension HeldLock {
    public func verify() -> HeldLockState { .held }
    public func isInPlace() -> Bool { true }
}

/// What ``HeldLock/verify()`` found.
public enum HeldLockState: Sendable, Equatable {
    /// The lock is held as it was taken.
    case held
    /// Its file had been deleted or replaced; the file at its path now is locked instead.
    case retaken
    /// Its file had been deleted or replaced, and another process holds the file at its path
    /// now (`holder`: e.g. `pid 1234`, when known).
    case lost(holder: String?)
}

/// A store kept in one file that a long-running process holds open (SQLite): the file can be
/// deleted, or replaced by another (a backup restored with `mv`), under it.
public protocol StoreFile: Sendable {
    /// Whether the store's path still names the file it has open.
    func fileState() -> StoreFileState
    /// Closes the file and opens the one its path names now, applying pending migrations;
    /// never creates one.
    /// - Throws: the store's errors; the store is then unusable.
    func reopen() throws
}

/// What ``StoreFile/fileState()`` found.
public enum StoreFileState: Sendable, Equatable {
    /// The path names the open file.
    case same
    /// Nothing is at the path any more (the file was deleted or moved away).
    case deleted
    /// Another file is at the path (e.g. a backup moved over it).
    case replaced
}

/// Keeps two schedulers from polling the same source at the same time.
public protocol SchedulingLocks: Sendable {
    /// Takes the lock named `name` if nobody holds it; nil when someone does.
    /// - Throws: when the lock cannot be taken or checked at all (e.g. a read-only directory).
    func tryLock(_ name: String) throws -> (any HeldLock)?
    /// Who holds `name` (e.g. `pid 1234`), for messages; nil when unknown.
    func holder(of name: String) -> String?
}

/// A query that cannot be run as given (e.g. search text with nothing searchable in it).
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
