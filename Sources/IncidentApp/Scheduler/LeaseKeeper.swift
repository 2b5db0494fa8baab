import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// Renews the lease of one poll every third of the lease, on threads of its own (`threads`: not
/// the cooperative pool, nor the store's threads, which polls blocked in the database may
/// fill; PostgreSQL's pool keeps connections beyond the polls' for it), and calls `lost` once
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

    /// `shared`: the store is shared by several hosts (PostgreSQL), so a lease not renewed for
    /// a whole lease is lost; an SQLite store, which one scheduler holds, loses a lease only
    /// when a renewal says so (its own poll's write transaction may hold renewals up).
    init(source: String, holder: LeaseHolder, store: any SourceLeases, clock: UTCClock, leaseSeconds: Int64, shared: Bool,
         threads: StoreExecutor, lost: @escaping @Sendable () -> Void) {
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
                guard shared, !s.lost, !s.stopped else { return false }
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
            threads.execute {
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
