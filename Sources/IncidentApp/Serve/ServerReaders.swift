import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// Every store call of `incidents serve` goes through here: a fixed set of read-only stores
/// (``Stores/openForReading(_:clock:)``: an SQLite connection opened `SQLITE_OPEN_READONLY`, or
/// a `READ ONLY` PostgreSQL session, for which the reader role suffices), each lent to one
/// request at a time. Calls block the calling thread, which is one of libmicrohttpd's
/// connection threads or a body's producer thread, never a thread of Swift's cooperative pool.
///
/// It lends connections and holds no threads: keeping blocking calls off the cooperative pool
/// is ``StoreExecutor``'s job for async callers (a scheduler's polls and leases), whereas the
/// server's callers are threads of libmicrohttpd's that may block. Going through an executor
/// would add two thread hops per call and still need this pool, since an SQLite connection
/// serves one call at a time.
final class ServerReaders: Sendable {
    private let idle: Mutex<[any IncidentReader]>
    private let available: DispatchSemaphore
    /// How long a request waits for a store before it is answered 503.
    let waitSeconds: Double

    /// Opens `count` readers of `database`.
    /// - Throws: the stores' errors (``StoreMissing``, a schema to migrate, no connection).
    init(database: String, count: Int, clock: UTCClock, waitSeconds: Double = 10) throws {
        idle = Mutex(try (0..<max(1, count)).map { _ in try Stores.openForReading(database, clock: clock) })
        available = DispatchSemaphore(value: max(1, count))
        self.waitSeconds = waitSeconds
    }

    /// All readers were busy for ``waitSeconds`` (503, with `Retry-After`).
    struct Busy: Error {}

    /// Runs `body` with a reader lent to it alone.
    /// - Throws: ``Busy``; what `body` throws.
    func withReader<T>(_ body: (any IncidentReader) throws -> T) throws -> T {
        guard available.wait(timeout: .now() + waitSeconds) == .success else { throw Busy() }
        let reader = idle.withLock { $0.removeLast() }
        defer {
            idle.withLock { $0.append(reader) }
            available.signal()
        }
        return try body(reader)
    }
}
