import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// Renews the lease of one poll every third of the lease, on Dispatch threads of its own (not
/// the cooperative pool, which polls blocked in the database may fill), and calls `lost` once
/// when the lease cannot be kept: a renewal says another holder has it, or none succeeded for
/// a whole lease (a renewal blocked by a network that stopped answering counts as failing
/// from the moment it was due). The poll then stops; the store's fencing check keeps a poll
/// that did not stop in time from committing.
final class LeaseKeeper: @unchecked Sendable {  // the timer is set once, in init; cancel is thread-safe
    private let timer: any DispatchSourceTimer
    private struct State {
        /// Monotonic seconds (``DispatchTime``) of the last successful claim or renewal.
        var heldSince: Double
        var renewing = false
        var lost = false
        var stopped = false
    }
    private final class Box: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }
    private let box: Box

    init(source: String, holder: LeaseHolder, store: any SourceLeases, clock: UTCClock, leaseSeconds: Int64,
         lost: @escaping @Sendable () -> Void) {
        box = Box(State(heldSince: Self.monotonic()))
        let lease = Double(leaseSeconds)
        timer = DispatchSource.makeTimerSource(queue: .global())
        let period = lease / 3
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(100))
        let box = self.box
        timer.setEventHandler {
            // Give up a little before the lease runs out on the server: the poll must be
            // stopped before another host may claim the source.
            let losing = box.state.withLock { s -> Bool in
                guard !s.lost, !s.stopped else { return false }
                if Self.monotonic() - s.heldSince >= lease - min(1, lease / 6) {
                    s.lost = true
                    return true
                }
                return false
            }
            if losing { return lost() }
            guard box.state.withLock({ s in
                guard !s.renewing, !s.lost, !s.stopped else { return false }
                s.renewing = true
                return true
            }) else { return }
            DispatchQueue.global().async {
                let asked = Self.monotonic()
                let renewed = try? store.renew(source: source, holder: holder, now: clock.now(), leaseSeconds: leaseSeconds)
                let taken = box.state.withLock { s -> Bool in
                    s.renewing = false
                    if renewed == true { s.heldSince = asked }
                    guard renewed == false, !s.lost, !s.stopped else { return false }
                    s.lost = true
                    return true
                }
                if taken { lost() }
            }
        }
        timer.resume()
    }

    /// Stops renewing (the poll ended).
    func stop() {
        box.state.withLock { $0.stopped = true }
        timer.cancel()
    }

    private static func monotonic() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

/// The database server's clock as seen from this host: the host's clock plus the offset last
/// measured (``SharedClock``), re-measured at most once a minute, before a lease claim. Leases
/// and run times then agree across hosts whatever their clocks say, and a host whose clock is
/// more than ``warningSeconds`` off logs `clock.skew` (a warning) each time it measures it.
final class ServerClock: Sendable {
    /// How far a host's clock may be from the server's before it is worth a warning.
    static let warningSeconds: Int64 = 5
    private let shared: any SharedClock
    private let host: UTCClock
    private let logger: Logger
    /// Seconds to add to the host's clock, and when (monotonic seconds) they were measured.
    private let measured = Measured()
    private final class Measured: Sendable {
        let value = Mutex<(offset: Int64, at: Double?)>((0, nil))
    }

    init(shared: any SharedClock, host: UTCClock, logger: Logger) {
        self.shared = shared
        self.host = host
        self.logger = logger
    }

    var clock: UTCClock {
        UTCClock { [host, measured] in host.now().adding(seconds: measured.value.withLock { $0.offset }) }
    }

    /// Measures the offset when it never was, or a minute ago; a failure keeps the last one.
    func measureIfDue() {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        guard measured.value.withLock({ $0.at.map { now - $0 >= 60 } ?? true }) else { return }
        let before = Date().timeIntervalSince1970
        guard let server = try? shared.sharedTime() else { return }
        let after = Date().timeIntervalSince1970
        // The host clock as the scheduler reads it (the injected one, in whole seconds, with
        // the system clock's fraction), at the midpoint of the query.
        let hostNow = Double(host.now().secondsSince1970) + (after - after.rounded(.down)) - (after - before) / 2
        let offset = Int64((server - hostNow).rounded())
        measured.value.withLock { $0 = (offset, now) }
        if abs(offset) > Self.warningSeconds {
            logger.log(.warning, "clock.skew", [
                "offset_s": offset,
                "detail": "this host's clock differs from the database server's; lease and run times are taken from the server's clock, but keep the host's in step (NTP)",
            ])
        }
    }
}

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
