/// Use case: one poll of one source: fetch → parse → map → store, recorded in the run log.
///
/// Never throws: every ending (success, failure, cancellation) is returned as an ``IngestRun``
/// and recorded in the store, so a failure is never mistaken for "0 incidents".
public struct IngestIncidents: Sendable {
    public var store: any IncidentStore
    public var clock: Clock
    /// Turns an error into log-safe text (API keys removed). Injected by the composition root.
    public var describe: @Sendable (any Error) -> String

    public init(store: any IncidentStore, clock: Clock,
                describe: @escaping @Sendable (any Error) -> String) {
        self.store = store
        self.clock = clock
        self.describe = describe
    }

    /// Polls `feed` once and stores the result as one transaction.
    ///
    /// - Parameter dryRun: fetch, parse and count, then roll back; nothing is written, not even
    ///   the run log.
    /// - Returns: the recorded run. `status` is `.failed` or `.cancelled` with `error` set when
    ///   anything went wrong; the database then holds no part of this poll.
    public func callAsFunction(_ feed: any IncidentFeed, dryRun: Bool = false) async -> IngestRun {
        let startedAt = clock.now()
        do {
            if !feed.isReplay, let resumesAt = try store.quotaResumesAt(source: feed.source), resumesAt > startedAt {
                let run = IngestRun(source: feed.source, startedAt: startedAt, finishedAt: startedAt, status: .skipped,
                                    error: "the source's request quota is exhausted until \(resumesAt.rfc3339); no request was sent",
                                    resumesAt: resumesAt)
                if !dryRun { try store.recordRun(run) }
                return run
            }
            let counts = try await feed.poll { stream in
                try store.ingest(source: feed.source, startedAt: startedAt, dryRun: dryRun) { sink in
                    try stream.forEach { incident in
                        // Cheap atomic load; lets SIGTERM stop a long parse promptly.
                        if Task.isCancelled { throw CancellationError() }
                        try sink.upsert(incident)
                    }
                }
            }
            return IngestRun(source: feed.source, startedAt: startedAt, finishedAt: clock.now(),
                             status: .succeeded, counts: counts)
        } catch {
            let cancelled = Task.isCancelled || error is CancellationError
            let finishedAt = clock.now()
            let run = IngestRun(source: feed.source, startedAt: startedAt, finishedAt: finishedAt,
                                status: cancelled ? .cancelled : .failed,
                                error: cancelled ? "cancelled before the poll finished; nothing was stored"
                                                 : describe(error),
                                resumesAt: cancelled || feed.isReplay ? nil
                                    : (error as? any QuotaExhaustion)?.quotaResumesAt(failedAt: finishedAt))
            if !dryRun {
                do { try store.recordRun(run) } catch {
                    var unrecorded = run
                    unrecorded.error = (run.error ?? "") + "; also failed to record the run: " + describe(error)
                    return unrecorded
                }
            }
            return run
        }
    }
}
