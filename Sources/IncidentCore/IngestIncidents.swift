/// Use case: one poll of one source: fetch → read → map → store, recorded in the run log.
///
/// Never throws: every ending (success, incomplete, failure, cancellation, skip) is returned as
/// an ``IngestRun`` and recorded in the store, so a failure is never mistaken for "0 incidents".
public struct IngestIncidents: Sendable {
    public var store: any IngestStore
    public var clock: UTCClock
    /// Turns an error into log-safe text (secrets removed). Injected by the composition root.
    public var describe: @Sendable (any Error) -> String
    /// The scheduler's host name, recorded with each run.
    public var host: String?
    /// The scheduler process holding the source's lease, for the store's fencing check
    /// (``PollContext/leaseHolder``); nil outside a scheduler.
    public var leaseHolder: LeaseHolder?

    public init(store: any IngestStore, clock: UTCClock, host: String? = nil,
                describe: @escaping @Sendable (any Error) -> String) {
        self.store = store
        self.clock = clock
        self.host = host
        self.describe = describe
    }

    /// Polls `feed` once and stores the result as one transaction.
    ///
    /// - Parameters:
    ///   - observedAt: when the response was fetched, for a saved file (`--as-of`); a live poll
    ///     is observed when it starts.
    ///   - dryRun: fetch, read and count, then roll back; nothing is written, not even the run log.
    /// - Returns: the recorded run. `status` is `.failed` or `.cancelled` with `error` set when
    ///   anything went wrong; the database then holds no part of this poll.
    public func callAsFunction(_ feed: any IncidentFeed, observedAt: UTCInstant? = nil, dryRun: Bool = false) async -> IngestRun {
        let startedAt = clock.now()
        let isLive = feed.origin == .live
        let poll = PollContext(source: feed.source, startedAt: startedAt, observedAt: isLive ? startedAt : observedAt ?? startedAt,
                               origin: feed.origin, host: host, dryRun: dryRun, leaseHolder: leaseHolder)
        do {
            if isLive, let resumesAt = try store.quotaResumesAt(source: feed.source), resumesAt > startedAt {
                return record(run(poll, status: .skipped, error: "the source's request quota is exhausted until \(resumesAt.rfc3339); no request was sent",
                                  resumesAt: resumesAt), dryRun: dryRun)
            }
            return try await feed.poll { stream in
                // A document older than the newest applied is read again, as history only.
                try store.ingestInTimeOrder(poll) { sink in
                    try stream.read { record in
                        // Cheap atomic load; lets SIGTERM stop a long read promptly.
                        if Task.isCancelled { throw CancellationError() }
                        switch record {
                        case .incident(let incident): try sink.upsert(incident.normalizedForStorage())
                        case .rejected(let rejected): try sink.reject(rejected.normalizedForStorage)
                        }
                    }
                }
            }
        } catch {
            let cancelled = Task.isCancelled || error is CancellationError
            let finished = run(poll, status: cancelled ? .cancelled : .failed,
                               error: cancelled ? "cancelled before the poll finished; nothing was stored" : describe(error),
                               resumesAt: cancelled || !isLive ? nil : (error as? any QuotaExhaustion)?.quotaResumesAt(failedAt: clock.now()))
            return record(finished, dryRun: dryRun)
        }
    }

    /// Records that `source` was not polled, and why: `skipped` when the deadline passed or a
    /// signal came before its turn; `failed` when the store could not say whether it may poll.
    public func skip(source: String, status: RunStatus = .skipped, reason: String, dryRun: Bool = false) -> IngestRun {
        let now = clock.now()
        return record(run(PollContext(source: source, startedAt: now, host: host), status: status, error: reason), dryRun: dryRun)
    }

    /// A run that stored nothing; its error (which may quote the provider) as both stores keep
    /// text (``Swift/String/replacingStrayControls``).
    private func run(_ poll: PollContext, status: RunStatus, error: String, resumesAt: UTCInstant? = nil) -> IngestRun {
        IngestRun(source: poll.source, startedAt: poll.startedAt, finishedAt: clock.now(), status: status, origin: poll.origin,
                  observedAt: poll.observedAt, error: error.replacingStrayControls, resumesAt: resumesAt, host: poll.host)
    }

    /// Records a run that stored nothing; a failure to record it is added to its error.
    private func record(_ run: IngestRun, dryRun: Bool) -> IngestRun {
        guard !dryRun else { return run }
        do {
            try store.recordRun(run)
            return run
        } catch {
            var unrecorded = run
            unrecorded.error = (run.error ?? "") + "; also failed to record the run: " + describe(error)
            return unrecorded
        }
    }
}
