import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's delegate queue: serial, and bounded, so a response body cannot pile up in
/// memory.
///
/// swift-corelibs-foundation delivers each libcurl chunk (16 KiB) by calling
/// `delegateQueue.addOperation { … didReceive data … }` on its work queue, and carries on at
/// once. Here that call waits while `capacity` operations are queued or running: libcurl's write
/// callback then blocks, libcurl stops reading the socket, and TCP flow control slows the sender.
/// At most `capacity` chunks (256 KiB) are held, whatever the body size and however slow the
/// delegate. Peak RSS of a release-built process fetching a 177 MB body over loopback through
/// this client (Swift 6.3.1, Linux): with a plain `OperationQueue`, 37–67 MB from run to run,
/// and 187 MB with the delegate slowed to 50 µs a chunk (standing in for a slow disk); with
/// this queue, 38–39 MB either way, and no slower (`download(for:)`, for reference: 34 MB).
///
/// Deadlock rule: while the work queue waits here, nothing running on this queue may wait for
/// the work queue. So delegate callbacks never call `URLSessionTask.cancel()` synchronously (it
/// does `workQueue.sync`; see `Transfer.cancelOffQueue`), and an operation added from this queue
/// itself is never made to wait.
final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {
    static let defaultCapacity = 16
    private let slots: DispatchSemaphore

    init(name: String, capacity: Int = BoundedDelegateQueue.defaultCapacity) {
        slots = DispatchSemaphore(value: max(1, capacity))
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
    }

    /// The form corelibs uses for every delegate call. (`addOperation(_: Operation)`, which this
    /// one calls, is left unbounded: corelibs does not use it for delegate calls.)
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        guard OperationQueue.current !== self else {
            super.addOperation(block)
            return
        }
        slots.wait()
        let slots = self.slots
        super.addOperation {
            defer { slots.signal() }
            block()
        }
    }
}
