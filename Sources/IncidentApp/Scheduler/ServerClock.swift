import Dispatch
import Foundation
import IncidentCore
import Synchronization

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
