import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking
import Synchronization

/// Polls configured sources: the polling logic `run --once` and `run --loop` share.
///
/// One poll of one source is fetch, read, store (``IngestIncidents``), then a log line. At most
/// `concurrency` polls run at a time, whichever mode asks for them: a round (`--once`) starts
/// every source at once and each waits for a free slot; a loop (`--loop`) gives each source its
/// own task that takes a slot for each poll. A slow source therefore delays no other while
/// slots are free.
///
/// Before each poll the scheduler claims the source's lease in the store (``SourceLeases``), so
/// schedulers on several hosts sharing one database poll each source once per interval: a
/// source that another scheduler is polling, or started polling less than 0.9 intervals ago,
/// is left to it (logged `poll.left_to_other`, no run recorded). The lease lasts
/// ``leaseSeconds`` and is renewed every third of that while the poll runs, so a scheduler that
/// dies (kill -9, lost network) leaves its sources to the others within the lease time. A poll
/// whose lease could not be renewed in time is stopped (``LeaseKeeper``), and a shared store
/// commits a poll only while its lease is held, so a host that was cut off never overwrites
/// the poll of the host that took its source. Lease times come from the database server's
/// clock when the store has one (``SharedClock``): see ``ServerClock``.
///
/// Store calls run on the store's own threads (``StoreExecution``) and lease renewals on the
/// lease keepers' (``leaseThreads``), never on Swift's cooperative pool: polls blocked in the
/// database (a lock, a network that stopped answering) delay no renewal, timer or other task.
struct SchedulerService: Sendable {
    let store: Stores.Writable
    let clock: UTCClock
    /// Recorded with each run.
    let host: String?
    let logger: Logger
    let dryRun: Bool
    let metricsFile: String?
    /// The HTTP client of one source: its timeout and retry policy, its attempts logged. Made
    /// once per source (per round, or per source task in a loop) and reused for its polls.
    let makeClient: @Sendable (SourceDefinition) -> any HTTPClient
    /// Waiting between polls and for deadlines, injected by tests.
    let timing: PollTiming
    let permits: PollPermits
    /// What the metrics file shows beyond the run log: the configured sources and the measured
    /// duration of each one's last poll.
    let metrics: MetricsState
    /// This scheduler process in the store's leases.
    let holder: LeaseHolder
    /// How long a claimed lease lasts without renewal (seconds): the configuration's `lease`.
    let leaseSeconds: Int64
    /// The database server's clock, when the store has one.
    let serverClock: ServerClock?
    /// The runs not recorded yet (the database was unreachable when they ended).
    let pendingRuns: PendingRuns
    /// Where the lease keepers renew: a thread per poll under way (``LeaseKeeper``).
    let leaseThreads: StoreExecutor
    /// For a store in a file: checked before each poll (a deleted database stops the
    /// scheduler, a replaced one is reopened).
    let fileWatch: StoreFileWatch?

    init(store: Stores.Writable, clock: UTCClock, host: String? = nil, logger: Logger, dryRun: Bool = false, metricsFile: String? = nil,
         concurrency: Int, leaseSeconds: Int64 = 60, timing: PollTiming = .live,
         makeClient: (@Sendable (SourceDefinition) -> any HTTPClient)? = nil, fileWatch: StoreFileWatch? = nil) {
        self.store = store
        self.fileWatch = fileWatch
        let serverClock = (store as? any SharedClock).map { ServerClock(shared: $0, host: clock, logger: logger) }
        self.serverClock = serverClock
        self.clock = serverClock?.clock ?? clock
        self.leaseSeconds = leaseSeconds
        self.pendingRuns = PendingRuns(store, logger: logger)
        self.host = host
        self.logger = logger
        self.dryRun = dryRun
        self.metricsFile = metricsFile
        self.timing = timing
        self.permits = PollPermits(concurrency)
        self.leaseThreads = StoreExecutor(name: "lease-keeper", threads: concurrency)
        self.metrics = MetricsState()
        self.holder = LeaseHolder(host: host ?? ProcessInfo.processInfo.hostName, pid: getpid(), token: LeaseHolder.newToken())
        self.makeClient = makeClient ?? { source in
            URLSessionHTTPClient(configuration: NetworkConfiguration(requestTimeout: source.requestTimeoutSeconds,
                                                                     attemptTimeout: source.attemptTimeoutSeconds,
                                                                     retryPolicy: source.retryPolicy,
                                                                     userAgent: BuildInfo.userAgent),
                                 onEvent: { Self.logHTTPEvent($0, logger: logger) })
        }
    }

    var ingest: IngestIncidents {
        var ingest = IngestIncidents(store: pendingRuns, clock: clock, host: host, describe: ErrorText.describer(origin: .live))
        if !dryRun { ingest.leaseHolder = holder }
        return ingest
    }

    /// Polls `source` once over HTTP when this scheduler gets its lease, then logs the run with
    /// its duration (monotonic clock); nil when the source is left to another scheduler, or
    /// when the database file was taken from under this scheduler (``StoreFileWatch``).
    /// Cancelling the task interrupts the store's calls for the source (a claim, a poll, a
    /// record blocked by a network that stopped answering return at once).
    func poll(_ source: SourceDefinition, client: any HTTPClient) async -> IngestRun? {
        let interruptible = store as? any StoreInterruption
        return await store.executor.runAsync {
            await withTaskCancellationHandler { await pollHoldingLease(source, client: client) } onCancel: {
                interruptible?.interrupt(source: source.name)
            }
        }
    }

    private func pollHoldingLease(_ source: SourceDefinition, client: any HTTPClient) async -> IngestRun? {
        // A database file deleted under this process stops it (nothing recorded: there is
        // nowhere to record it); a replaced one is reopened first.
        if let fileWatch, !fileWatch.allowsPoll() { return nil }
        pendingRuns.flush()
        // A dry run writes nothing, not even a lease, and takes no source from another scheduler.
        if dryRun { return await pollNow(source, client: client) }
        switch claimLease(source) {
        case .success(true): break
        case .success(false): return nil
        case .failure where Task.isCancelled:
            // Stopped (SIGTERM, the deadline) while claiming: cancelled, as a poll stopped under way is.
            let run = ingest.skip(source: source.name, status: .cancelled, reason: "cancelled while claiming its lease; nothing was polled")
            Self.logRun(run, provider: source.provider, dryRun: dryRun, seconds: 0, logger: logger)
            return run
        case .failure(let error):
            // Not polled: without the lease another scheduler might poll it too.
            let run = ingest.skip(source: source.name, status: .failed,
                                  reason: "not polled: its lease in the database could not be claimed: \(ErrorText.describe(error))")
            Self.logRun(run, provider: source.provider, dryRun: dryRun, seconds: 0, logger: logger)
            return run
        }
        let polling = Task(executorPreference: store.executor) { await pollNow(source, client: client) }
        let keeper = LeaseKeeper(source: source.name, holder: holder, store: store, clock: clock, leaseSeconds: leaseSeconds,
                                 shared: serverClock != nil, threads: leaseThreads) {
            logger.log(.error, "lease.lost", [
                "source": source.name, "holder": holder.description,
                "detail": "the lease could not be renewed in time (the database is unreachable, or another host took it); the poll was stopped",
            ])
            polling.cancel()
        }
        let run = await withTaskCancellationHandler { await polling.value } onCancel: { polling.cancel() }
        keeper.stop()
        do {
            try store.release(source: source.name, holder: holder)
        } catch {
            logger.log(.warning, "lease.release_failed", ["source": source.name, "detail": ErrorText.describe(error)])
        }
        return run
    }

    /// Polls `source` once over HTTP, then logs the run with its duration (monotonic clock).
    /// Cancelling the task interrupts the store's statements for the source too (a call
    /// blocked by a network that stopped answering returns at once).
    private func pollNow(_ source: SourceDefinition, client: any HTTPClient) async -> IngestRun {
        let began = timing.now()
        let run: IngestRun
        do {
            let feed = try ProviderRegistry.feed(for: source, client: client)
            let interruptible = store as? any StoreInterruption
            run = await withTaskCancellationHandler { await ingest(feed, dryRun: dryRun) } onCancel: {
                interruptible?.interrupt(source: source.name)
            }
        } catch {
            // The feed could not be built: a provider this build does not know (the
            // configuration is checked against the registry, so this is a programming error).
            let now = clock.now()
            run = IngestRun(source: source.name, startedAt: now, finishedAt: now, status: .failed,
                            error: ErrorText.describe(error))
        }
        let seconds = timing.now() - began
        metrics.durations.withLock { $0[run.source] = seconds }
        Self.logRun(run, provider: source.provider, dryRun: dryRun, seconds: seconds, logger: logger)
        return run
    }

    /// Claims the lease of `source` for this scheduler: true when it may poll, false when the
    /// source is left to another scheduler (it polls the source now, or started it less than
    /// 0.9 intervals ago; logged at info). See ``claim(_:in:holder:leaseSeconds:now:)``.
    func claimLease(_ source: SourceDefinition) -> Result<Bool, any Error> {
        serverClock?.measureIfDue()
        switch Self.claim(source, in: store, holder: holder, leaseSeconds: leaseSeconds, now: clock.now) {
        case .success(.claimed): return .success(true)
        case .success(.held(let lease)), .success(.recentlyStarted(let lease)):
            logger.log(.info, "poll.left_to_other", [
                "source": source.name, "holder": lease.holder.description, "started_at": lease.lastStartedAt.rfc3339,
                "detail": "another scheduler sharing this database polls this source now or polled it less than 0.9 intervals ago",
            ])
            return .success(false)
        case .failure(let error): return .failure(error)
        }
    }

    /// One claim of the lease of `source` for `holder`. A store error is tried once more (a
    /// connection the server dropped is replaced), then returned, except while the task is
    /// cancelled (SIGTERM, a deadline): then the failed claim's lease is given back at once.
    /// A claim interrupted by the cancellation may have committed on the server before its
    /// answer was lost (the interruption shuts the connection's socket), and that lease would
    /// otherwise hold the source from every other host until it ran out (a minute by default).
    static func claim(_ source: SourceDefinition, in leases: any SourceLeases, holder: LeaseHolder, leaseSeconds: Int64,
                      now: () -> UTCInstant) -> Result<LeaseClaim, any Error> {
        var failure: (any Error)?
        for attempt in 1...2 where attempt == 1 || !Task.isCancelled {
            let now = now()
            do {
                return .success(try leases.claim(source: source.name, holder: holder, now: now, leaseSeconds: leaseSeconds,
                                                 notStartedAfter: notStartedAfter(now: now, intervalSeconds: source.intervalSeconds)))
            } catch {
                failure = error
            }
        }
        if Task.isCancelled { try? leases.release(source: source.name, holder: holder) }
        return .failure(failure ?? CancellationError())
    }

    /// The latest start of another host's poll that still lets this scheduler poll at `now`:
    /// one that began at least 0.9 intervals ago. Instants have one-second resolution (both
    /// are truncated), so a stored start up to ⌈0.9 × interval⌉ whole seconds before `now` may
    /// be less than 0.9 intervals ago; one more second is required. Without it, a 2 s interval
    /// (⌊0.9 × 2⌋ = 1) let another host poll 0.1 s after a start, and a 1 s interval had no
    /// window at all. The cost: another host may wait up to ⌈0.9 × interval⌉ + 2 s; the host
    /// that polled last is not held back (its own starts never refuse it).
    static func notStartedAfter(now: UTCInstant, intervalSeconds: Int64) -> UTCInstant {
        now.adding(seconds: -((intervalSeconds * 9 + 9) / 10 + 1))
    }

    // MARK: One round (run --once)

    /// How a round ended.
    struct Round: Sendable {
        /// One run per source polled (a source left to another scheduler has none), in the order of the sources.
        var runs: [IngestRun]
        var deadlineExceeded: Bool
        /// A signal cancelled the round.
        var interrupted: Bool

        /// The exit status when the round was not clean: 1 when a source failed or the deadline
        /// passed, 130 when a signal stopped it, 3 when a source was skipped or its response
        /// was incomplete or stale; nil when every source succeeded.
        var status: Int32? {
            if deadlineExceeded || runs.contains(where: { $0.status == .failed }) { return ExitStatus.failure }
            if interrupted || runs.contains(where: { $0.status == .cancelled }) { return ExitStatus.interrupted }
            if runs.contains(where: { $0.status == .skipped || $0.status == .incomplete || $0.status == .stale }) { return ExitStatus.notFresh }
            return nil
        }
    }

    /// Polls every source once, at most `concurrency` at a time, within `deadlineSeconds`. When
    /// the deadline passes (or a signal cancels the task), the polls under way are cancelled
    /// (recorded as cancelled; nothing of them stored) and the sources not yet started are
    /// recorded as skipped, with the reason.
    func pollRound(_ sources: [SourceDefinition], deadlineSeconds: Int64) async -> Round {
        configure(sources)
        let deadline = Deadline()
        let work = Task(executorPreference: store.executor) { () -> [IngestRun] in
            await withTaskGroup(of: (Int, IngestRun?).self) { group in
                var runs = [IngestRun?](repeating: nil, count: sources.count)
                // The slots are taken here, one source after the other, so the sources start in
                // the order given: child tasks on the store's threads start in any order.
                for (index, source) in sources.enumerated() {
                    if let skipped = await takeSlot(source, deadlineSeconds: deadlineSeconds, deadline: deadline) {
                        runs[index] = skipped
                        continue
                    }
                    group.addTask {
                        let run = await poll(source, client: makeClient(source))
                        await permits.release()
                        return (index, run)
                    }
                }
                for await (index, run) in group { runs[index] = run }
                return runs.compactMap { $0 }
            }
        }
        let timer = Task {
            try await timing.sleep(Double(deadlineSeconds))
            deadline.passed.withLock { $0 = true }
            logger.log(.error, "run.deadline_exceeded", [
                "deadline": ValueParsers.durationText(deadlineSeconds),
                "detail": "the run took longer than its deadline; the sources still running were cancelled and stored nothing, those not started were skipped",
            ])
            work.cancel()
        }
        fileWatch?.whenLost { work.cancel() }
        let runs = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
        timer.cancel()
        return Round(runs: runs, deadlineExceeded: deadline.passed.withLock { $0 }, interrupted: Task.isCancelled)
    }

    /// Whether a round's deadline has passed, shared by its timer and its polls.
    final class Deadline: Sendable {
        let passed = Mutex(false)
    }

    /// Waits for a free slot for `source`; nil once it has one, else (the deadline passed or a
    /// signal came first) the run recording it as skipped, with the reason.
    private func takeSlot(_ source: SourceDefinition, deadlineSeconds: Int64, deadline: Deadline) async -> IngestRun? {
        do {
            try await permits.acquire()
            // A slot freed by a poll that the deadline or a signal cancelled may be handed on
            // before this task's own cancellation is seen: it still never started.
            if Task.isCancelled {
                await permits.release()
                throw CancellationError()
            }
            return nil
        } catch {
            let reason = deadline.passed.withLock { $0 }
                ? "not polled: the run's deadline (\(ValueParsers.durationText(deadlineSeconds))) passed before its turn"
                : "not polled: the run was stopped by a signal before its turn"
            let run = ingest.skip(source: source.name, reason: reason, dryRun: dryRun)
            // Never started: it took no time (and it is no poll for the metrics' durations).
            Self.logRun(run, provider: source.provider, dryRun: dryRun, seconds: 0, logger: logger)
            return run
        }
    }

    // MARK: For ever (run --loop)

    /// Polls `source` every `interval` plus up to 10 % random jitter (so many schedulers never
    /// hit a provider in step), measured from the start of one poll to the start of the next,
    /// until the task is cancelled. A poll never overlaps the previous one of its source.
    /// `polled` is called after each poll with its run (nil: left to another scheduler), `began`
    /// with each poll's start (``timing``'s clock);
    /// the first poll waits `firstAfter` seconds (a source restarted by a reload keeps its turn).
    /// The loop runs on the store's threads (``StoreExecutor``): its blocking store calls never
    /// hold a thread of Swift's cooperative pool.
    func pollForever(_ source: SourceDefinition, firstAfter: Double = 0, polled: @Sendable (IngestRun?) -> Void = { _ in },
                     began started: @Sendable (Double) -> Void = { _ in }) async {
        await store.executor.runAsync {
            await pollForever(source, client: makeClient(source), firstAfter: firstAfter, polled: polled, began: started)
        }
    }

    private func pollForever(_ source: SourceDefinition, client: any HTTPClient, firstAfter: Double,
                             polled: @Sendable (IngestRun?) -> Void, began started: @Sendable (Double) -> Void) async {
        if firstAfter > 0, (try? await timing.sleep(firstAfter)) == nil { return }
        while !Task.isCancelled {
            let began = timing.now()
            started(began)
            do { try await permits.acquire() } catch { return }
            let run = await poll(source, client: client)
            await permits.release()
            polled(run)
            writeMetrics()
            let interval = Double(source.intervalSeconds) * (1 + 0.1 * timing.unitRandom())
            let wait = max(0, interval - (timing.now() - began))
            guard (try? await timing.sleep(wait)) != nil else { return }
        }
    }

    // MARK: After polls

    /// The sources of the configuration in force: the metrics file shows these, and only these.
    func configure(_ sources: [SourceDefinition]) {
        metrics.sources.withLock { $0 = sources.map(\.name) }
    }

    /// Writes the metrics file, when one was asked for; a failure is logged (`metrics.failed`)
    /// and returns false, so that `run --once` exits 1 (a monitor that reads the file would
    /// otherwise see the last good figures forever).
    @discardableResult
    func writeMetrics() -> Bool {
        guard let metricsFile else { return true }
        do {
            let (sources, durations) = (metrics.sources.withLock { $0 }, metrics.durations.withLock { $0 })
            let text = Metrics.render(sources: sources, summaries: try store.sourceSummaries(),
                                      activeIncidents: try store.activeIncidentCounts(at: clock.now()), durations: durations)
            try Metrics.write(text, to: metricsFile)
            return true
        } catch {
            logger.log(.error, "metrics.failed", ["file": metricsFile, "error": ErrorText.describe(error)])
            return false
        }
    }

    /// Deletes incidents cleared, and runs finished, longer ago than `seconds` (the
    /// configuration's `retention`); logged, never fatal.
    func prune(olderThan seconds: Int64) {
        let horizon = clock.now().adding(seconds: -seconds)
        do {
            let counts = try store.prune(before: horizon)
            logger.log(.info, "prune.finished", [
                "older_than": ValueParsers.durationText(seconds), "horizon": horizon.rfc3339,
                "incidents": counts.incidents, "revisions": counts.revisions, "transitions": counts.transitions, "runs": counts.runs,
                "rejected_records": counts.rejectedRecords,
            ])
        } catch {
            logger.log(.error, "prune.failed", ["error": ErrorText.describe(error)])
        }
    }

    // MARK: Log lines

    /// One line per run: its counts when it stored records, its error otherwise; `seconds` is
    /// how long it took (fractional, from a monotonic clock).
    static func logRun(_ run: IngestRun, provider: String, dryRun: Bool, seconds: Double, logger: Logger) {
        switch run.status {
        case .succeeded, .incomplete, .stale:
            logger.log(run.status == .succeeded ? .info : .warning, dryRun ? "ingest.dry_run" : "ingest.\(run.status == .succeeded ? "finished" : run.status.rawValue)", [
                "source": run.source, "provider": provider, "status": run.status.rawValue,
                "fetched": run.counts.fetched, "inserted": run.counts.inserted, "updated": run.counts.updated,
                "unchanged": run.counts.unchanged, "reopened": run.counts.reopened, "cleared": run.counts.cleared,
                "rejected": run.counts.rejected, "duplicates": run.counts.duplicates,
                "published_at": run.publishedAt?.rfc3339, "observed_at": run.status == .stale ? run.observedAt.rfc3339 : nil,
                "duration_s": seconds, "warnings": run.warnings.isEmpty ? nil : run.warnings.joined(separator: "; "),
                "note": dryRun ? "dry run: nothing was written" : nil,
            ])
        case .failed, .cancelled, .skipped:
            logger.log(run.status == .skipped ? .warning : .error, "ingest.\(run.status.rawValue)", [
                "source": run.source, "provider": provider, "status": run.status.rawValue,
                "duration_s": seconds, "resumes_at": run.resumesAt?.rfc3339, "error": run.error,
            ])
        }
    }

    /// One line per HTTP attempt. A clean first-attempt success is debug (shown with
    /// `--verbose`); retries and failures are warnings, always shown.
    static func logHTTPEvent(_ event: NetworkEvent, logger: Logger) {
        let clean = event.decision == .done && event.attempt == 1 && (200...299).contains(event.statusCode ?? 0)
        logger.log(clean ? .debug : .warning, "http.attempt", [
            "source": event.label, "method": event.method.rawValue, "url": event.redactedURL,
            "status": event.statusCode, "bytes": event.bytes, "duration_s": Double(event.durationMilliseconds) / 1000,
            "attempt": event.attempt, "decision": event.decision, "error": event.errorSummary,
        ])
    }
}

/// Monotonic time, sleeping and randomness for spacing polls and judging deadlines; tests
/// inject a virtual clock so that spacing and jitter are checked exactly, without waiting.
struct PollTiming: Sendable {
    /// Monotonic seconds (any origin).
    var now: @Sendable () -> Double
    /// Waits `seconds`; throws when the task is cancelled.
    var sleep: @Sendable (_ seconds: Double) async throws -> Void
    /// A uniform random number in `0...1` (the loop's jitter).
    var unitRandom: @Sendable () -> Double

    static let live = PollTiming(
        now: { (ContinuousClock.now - PollTiming.origin).seconds },
        sleep: { seconds in try await Task.sleep(for: .seconds(seconds)) },
        unitRandom: { Double.random(in: 0...1) })

    private static let origin = ContinuousClock.now
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

/// At most N polls at a time: a counting semaphore whose waiters are served in order and leave
/// the queue when their task is cancelled (``acquire()`` then throws ``CancellationError``).
actor PollPermits {
    private var available: Int
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID: UInt64 = 0

    init(_ count: Int) {
        available = max(1, count)
    }

    /// Takes a slot, waiting for one when none is free.
    /// - Throws: `CancellationError` when the task is cancelled before it gets one.
    func acquire() async throws {
        if Task.isCancelled { throw CancellationError() }
        if available > 0 {
            available -= 1
            return
        }
        let id = nextID
        nextID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked here, on the actor: a cancellation that came before this point finds
                // no waiter to remove, so it must be seen now.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Gives a slot back: to the longest waiter, else to the pool.
    func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().continuation.resume()
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }
}

/// What the metrics file needs beyond the run log, shared by the polls of one process.
final class MetricsState: Sendable {
    /// The configured source names, in configuration order.
    let sources = Mutex<[String]>([])
    /// Seconds the last poll of each source took in this process (monotonic clock).
    let durations = Mutex<[String: Double]>([:])
}
