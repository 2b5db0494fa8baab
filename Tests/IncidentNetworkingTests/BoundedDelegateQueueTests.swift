import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// The delegate queue's backpressure, without a network: what keeps a response body from
/// piling up in memory when the delegate falls behind libcurl.
@Suite("BoundedDelegateQueue")
struct BoundedDelegateQueueTests {
    @Test("A producer waits while `capacity` operations are pending; every operation runs, in order")
    func producerWaitsForRoom() async throws {
        let queue = BoundedDelegateQueue(name: "test", capacity: 4)
        let gate = DispatchSemaphore(value: 0)
        let ran = Locked<[Int]>([])
        let added = Locked(0)
        // The producer stands for libcurl's work queue: a thread of its own, free to block.
        DispatchQueue.global().async {
            for index in 0..<20 {
                queue.addOperation {
                    if index == 0 { gate.wait() }  // a delegate stuck on a slow disk
                    ran.withLock { $0.append(index) }
                }
                added.withLock { $0 += 1 }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(added.withLock { $0 } == 4, "the 5th addOperation must wait until one of the first 4 has run")
        gate.signal()
        let deadline = ContinuousClock.now + .seconds(10)
        while ran.withLock({ $0.count }) < 20, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(added.withLock { $0 } == 20)
        #expect(ran.withLock { $0 } == Array(0..<20))
    }

    @Test("An operation that adds operations to its own queue never waits for itself")
    func addingFromTheQueueItselfDoesNotDeadlock() async throws {
        let queue = BoundedDelegateQueue(name: "test", capacity: 2)
        let ran = Locked(0)
        queue.addOperation {
            for _ in 0..<10 {
                queue.addOperation { ran.withLock { $0 += 1 } }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ran.withLock({ $0 }) < 10, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(ran.withLock { $0 } == 10)
    }

    @Test("The client's session uses it as its delegate queue")
    func clientUsesIt() {
        let client = URLSessionHTTPClient()
        #expect(client.transport.delegateQueue is BoundedDelegateQueue)
    }
}
