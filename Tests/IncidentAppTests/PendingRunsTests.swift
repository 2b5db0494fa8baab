import Foundation
@testable import IncidentApp
import IncidentCore
import Synchronization
import Testing

/// Runs the store could not record when they ended (the database was down) reach the run log
/// once it is back (issue 24: 34 of 75 failed polls during crash recovery were never recorded).
@Suite("Runs recorded late")
struct PendingRunsTests {
    /// An SQLite store whose `recordRun` fails while `down`.
    final class FlakyStore: IngestStore, Sendable {
        let base: Stores.Writable
        let down = Mutex(false)
        init() throws { base = try Stores.openForWriting(":memory:", clock: .fixed(SchedulerServiceTests.t0)) }

        func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
            try base.ingest(poll, produce)
        }
        func quotaResumesAt(source: String) throws -> UTCInstant? { try base.quotaResumesAt(source: source) }
        func recordRun(_ run: IngestRun) throws {
            if down.withLock({ $0 }) { throw CocoaError(.fileWriteUnknown) }
            try base.recordRun(run)
        }
    }

    static func run(_ source: String, at seconds: Int64) -> IngestRun {
        let t = SchedulerServiceTests.t0.adding(seconds: seconds)
        return IngestRun(source: source, startedAt: t, finishedAt: t, status: .failed, error: "server closed the connection unexpectedly")
    }

    @Test("runs that fail to record are kept and recorded, oldest first with their own times, before the next run; each flush logs run.recorded_late")
    func recordedLate() throws {
        let store = try FlakyStore()
        let lines = SchedulerServiceTests.Lines()
        let pending = PendingRuns(store, logger: lines.logger)
        store.down.withLock { $0 = true }
        for (index, source) in ["a", "b", "a"].enumerated() {
            #expect(throws: (any Error).self) { try pending.recordRun(Self.run(source, at: Int64(index))) }
        }
        #expect(pending.count == 3)
        pending.flush()  // still down: nothing lost, nothing logged
        #expect(pending.count == 3)
        #expect(try store.base.runs(source: nil, limit: 10, failuresFirst: false).isEmpty)
        store.down.withLock { $0 = false }
        try pending.recordRun(Self.run("c", at: 3))
        #expect(pending.count == 0)
        let recorded = try store.base.runs(source: nil, limit: 10, failuresFirst: false)
        #expect(recorded.map(\.source).sorted() == ["a", "a", "b", "c"])
        #expect(Set(recorded.map(\.startedAt)) == Set((0...3).map { SchedulerServiceTests.t0.adding(seconds: $0) }))
        #expect(lines.all.withLock { $0 }.filter { $0.contains("event=run.recorded_late runs=3 left=0") }.count == 1)
    }
}
