import IncidentCore
import Synchronization

/// The scheduler's store for ingesting, which keeps the runs it could not record (the database
/// was down, restarting, in crash recovery) and records them, oldest first, before the next run
/// it records and before each poll: every failed poll reaches the run log once the database
/// is back, with its own times. At most ``limit`` are kept (the oldest go first, logged).
final class PendingRuns: IngestStore, Sendable {
    static let limit = 10_000
    private let base: any IngestStore
    private let logger: Logger
    private let pending = Mutex<[IngestRun]>([])

    init(_ base: any IngestStore, logger: Logger) {
        self.base = base
        self.logger = logger
    }

    func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
        try base.ingest(poll, produce)
    }

    func quotaResumesAt(source: String) throws -> UTCInstant? {
        try base.quotaResumesAt(source: source)
    }

    /// Records the runs kept so far, then `run`; a run that cannot be recorded is kept and the
    /// error rethrown.
    func recordRun(_ run: IngestRun) throws {
        flush()
        do {
            try base.recordRun(run)
        } catch {
            let dropped = pending.withLock { runs -> IngestRun? in
                runs.append(run)
                return runs.count > Self.limit ? runs.removeFirst() : nil
            }
            if let dropped {
                logger.log(.error, "run.unrecorded_dropped", ["source": dropped.source, "started_at": dropped.startedAt.rfc3339])
            }
            throw error
        }
    }

    /// Records the runs kept, oldest first, until one fails (it and those after it are kept).
    func flush() {
        let runs = pending.withLock { runs -> [IngestRun] in
            defer { runs.removeAll() }
            return runs
        }
        guard !runs.isEmpty else { return }
        var recorded = 0
        for run in runs {
            guard (try? base.recordRun(run)) != nil else { break }
            recorded += 1
        }
        if recorded < runs.count { pending.withLock { $0.insert(contentsOf: runs[recorded...], at: 0) } }
        if recorded > 0 {
            logger.log(.info, "run.recorded_late", [
                "runs": recorded, "left": runs.count - recorded,
                "detail": "runs that could not be recorded when they ended (the database was unreachable) are in the run log now",
            ])
        }
    }

    var count: Int { pending.withLock { $0.count } }
}
