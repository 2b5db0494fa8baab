import Foundation

/// A value guarded by a lock, for state shared across threads (delegate queues, cancellation
/// handlers, the secret registry).
///
/// A class (unlike the noncopyable `Synchronization.Mutex`) so closures and delegates can
/// share it by reference.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
