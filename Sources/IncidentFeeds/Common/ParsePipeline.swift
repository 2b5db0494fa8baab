import Foundation

/// Parsing and storing a large response on two cores at once: `produce` (the XML parser) runs
/// on its own thread and hands records over in batches through a bounded buffer to `consume`
/// (the SQLite upsert, and mapping where the format maps there: ``readDocument``), which runs
/// on the calling thread.
///
/// Why: parsing a GITS record and storing it cost about the same (callgrind, 30,000 records:
/// 1.3 G instructions to parse, 1.3 G to map and upsert). One after the other they took twice
/// the C ceiling's time; overlapped they take about as long as the slower half. Memory stays
/// bounded: at most `maxBatches` batches of `batchSize` records wait in between.
///
/// Batches are also closed by weight: once the records in a batch weigh `maxBatchWeight` (their
/// size as the reader counted it), so that large records (a work zone's LineString of 100,000
/// positions weighs 14 MB) do not queue by the thousand: at most `maxBatches` batches of about
/// `maxBatchWeight` plus one record wait, whatever the records' sizes.
///
/// Ordering is kept. An error on either side stops both: a consumer error stops the producer
/// at its next hand-over; a producer error is thrown to the caller as soon as it happens (the
/// caller rolls back what it consumed). The producer has finished, and no longer touches its
/// input, when `run` returns or throws.
enum ParsePipeline {
    static func run<Value: Sendable>(
        batchSize: Int = 256, maxBatches: Int = 4, maxBatchWeight: Int = 4 << 20,
        weight: @escaping @Sendable (Value) -> Int = { _ in 0 },
        produce: @escaping @Sendable (_ emit: (Value) throws -> Void) throws -> Void,
        consume: (Value) throws -> Void
    ) throws {
        let channel = Channel<Value>(capacity: maxBatches)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            var batch: [Value] = []
            var batchWeight = 0
            batch.reserveCapacity(batchSize)
            do {
                try produce { value in
                    batch.append(value)
                    batchWeight += weight(value)
                    if batch.count == batchSize || batchWeight >= maxBatchWeight {
                        try channel.push(batch)
                        batch.removeAll(keepingCapacity: true)
                        batchWeight = 0
                    }
                }
                if !batch.isEmpty { try channel.push(batch) }
                channel.finish(throwing: nil)
            } catch {
                channel.finish(throwing: error is Channel<Value>.Stopped ? nil : error)
            }
            finished.signal()
        }
        thread.stackSize = 4 << 20
        thread.start()
        defer {
            channel.stop()
            finished.wait()
        }
        while let batch = try channel.pop() {
            for value in batch { try consume(value) }
        }
    }

    /// A bounded FIFO of batches between one producer and one consumer.
    final class Channel<Element>: @unchecked Sendable {  // all state under `condition`
        struct Stopped: Error {}

        private let condition = NSCondition()
        private var batches: [[Element]] = []
        private var done = false
        private var stopped = false
        private var error: (any Error)?
        private let capacity: Int

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        /// Waits for room, then enqueues. Throws `Stopped` once the consumer has stopped.
        func push(_ batch: [Element]) throws {
            condition.lock()
            defer { condition.unlock() }
            while batches.count >= capacity && !stopped { condition.wait() }
            if stopped { throw Stopped() }
            batches.append(batch)
            condition.broadcast()
        }

        /// The producer is done (an error, if any, goes to the consumer first).
        func finish(throwing error: (any Error)?) {
            condition.lock()
            self.error = error
            done = true
            condition.broadcast()
            condition.unlock()
        }

        /// The next batch; nil when the producer finished and everything was taken.
        func pop() throws -> [Element]? {
            condition.lock()
            defer { condition.unlock() }
            while batches.isEmpty && !done && error == nil { condition.wait() }
            if let error { throw error }
            guard !batches.isEmpty else { return nil }
            let batch = batches.removeFirst()
            condition.broadcast()
            return batch
        }

        /// The consumer stops: a waiting or later `push` throws `Stopped`.
        func stop() {
            condition.lock()
            stopped = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
