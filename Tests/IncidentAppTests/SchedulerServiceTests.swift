import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentFeeds
import IncidentNetworking
import Synchronization
import Testing

/// The polling service that `run --once` and `run --loop` share, on an in-memory store, a stub
/// HTTP client and a virtual clock: spacing, jitter, deadlines and the bound on concurrency are
/// checked exactly, without waiting.
@Suite("Scheduler service")
struct SchedulerServiceTests {
    /// Virtual monotonic time: sleeping advances it and is recorded.
    final class VirtualTime: Sendable {
        let now = Mutex(0.0)
        let sleeps = Mutex<[Double]>([])

        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    }

    /// A client that runs `before` (which may wait, advance virtual time or fail), then answers
    /// with the router's sample response (one GITS incident).
    struct ScriptedClient: HTTPClient {
        var before: @Sendable (_ label: String) async throws -> Void

        func withResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
            try await before(label)
            return try await StubHTTPClient().withResponse(for: target, label: label, body)
        }
    }

    /// Log lines, kept.
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        var logger: Logger {
            Logger(clock: .fixed(SchedulerServiceTests.t0)) { line in self.all.withLock { $0.append(line) } }
        }
    }

    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    static func source(_ name: String, interval: Int64 = 60) -> SourceDefinition {
        var source = SourceDefinition(name: name, provider: "gits", key: APIKey("stub+key/1="))
        source.intervalSeconds = interval
        return source
    }

    static func service(concurrency: Int = 4, timing: PollTiming, lines: Lines = Lines(), store: Stores.Writable? = nil,
                        before: @escaping @Sendable (String) async throws -> Void = { _ in }) throws -> SchedulerService {
        SchedulerService(store: try store ?? Stores.openForWriting(":memory:", clock: .fixed(t0)), clock: .fixed(t0), logger: lines.logger,
                         concurrency: concurrency, timing: timing,
                         makeClient: { _ in ScriptedClient(before: before) })
    }

    @Test("--loop: each poll starts interval × (1 + 10 % × jitter) after the previous one started, whatever the poll took",
          arguments: [(0.0, 2.0, 58.0), (0.5, 2.0, 61.0), (1.0, 2.0, 64.0), (0.5, 70.0, 0.0)])
    func loopSpacing(random: Double, pollSeconds: Double, expectedWait: Double) async throws {
        let time = VirtualTime()
        let timing = PollTiming(
            now: { time.now.withLock { $0 } },
            sleep: { seconds in
                let count = time.sleeps.withLock { $0.append(seconds); return $0.count }
                time.advance(seconds)
                if count == 3 { throw CancellationError() }
            },
            unitRandom: { random })
        let service = try Self.service(timing: timing) { _ in time.advance(pollSeconds) }
        let polls = Mutex(0)
        await service.pollForever(Self.source("gits", interval: 60)) { _ in polls.withLock { $0 += 1 } }
        #expect(time.sleeps.withLock { $0 } == [expectedWait, expectedWait, expectedWait])
        #expect(polls.withLock { $0 } == 3)
        let runs = try service.store.runs(source: "gits", limit: 10, failuresFirst: false)
        #expect(runs.map(\.status) == [.succeeded, .succeeded, .succeeded])
    }

    @Test("a round polls at most `concurrency` sources at a time, and every source once, in the order given")
    func concurrencyBound() async throws {
        let inFlight = Mutex(0)
        let most = Mutex(0)
        let service = try Self.service(concurrency: 2, timing: .live) { _ in
            let now = inFlight.withLock { $0 += 1; return $0 }
            most.withLock { $0 = max($0, now) }
            // Wait (up to 5 s) for a second poll to be under way, so that a bound of 1 would
            // show as a timeout and a missing bound as a third poll.
            for _ in 0..<500 where inFlight.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(20))
            inFlight.withLock { $0 -= 1 }
        }
        let names = (1...6).map { "gits-\($0)" }
        let round = await service.pollRound(names.map { Self.source($0) }, deadlineSeconds: 600)
        #expect(round.runs.map(\.source) == names)
        #expect(round.runs.allSatisfy { $0.status == .succeeded })
        #expect(most.withLock { $0 } == 2)
        #expect(round.status == nil)
    }

    /// A client whose source `slow` never answers until cancelled, and a deadline that passes
    /// as soon as that poll is under way and `othersDone` other runs are stored.
    static func stuckRound(concurrency: Int, othersDone: Int = 0) throws -> (SchedulerService, Lines) {
        let started = Mutex(false)
        let lines = Lines()
        let store = try Stores.openForWriting(":memory:", clock: .fixed(t0))
        let timing = PollTiming(
            now: { 0 },
            sleep: { _ in
                while try !started.withLock({ $0 }) || store.sourceSummaries().count < othersDone {
                    try await Task.sleep(for: .milliseconds(5))
                }
            },
            unitRandom: { 0 })
        let service = try service(concurrency: concurrency, timing: timing, lines: lines, store: store) { label in
            guard label == "slow" else { return }
            started.withLock { $0 = true }
            try await Task.sleep(for: .seconds(3600))
        }
        return (service, lines)
    }

    @Test("the deadline cancels the poll under way and records the sources never started as skipped, with the reason")
    func deadline() async throws {
        let (service, lines) = try Self.stuckRound(concurrency: 1)
        let round = await service.pollRound([Self.source("slow"), Self.source("b"), Self.source("c")], deadlineSeconds: 120)
        #expect(round.deadlineExceeded)
        #expect(round.runs.map(\.status) == [.cancelled, .skipped, .skipped])
        #expect(round.runs[1].error == "not polled: the run's deadline (2m) passed before its turn")
        #expect(round.status == ExitStatus.failure)
        let stored = try service.store.runs(source: "b", limit: 5, failuresFirst: false)
        #expect(stored.map(\.status) == [.skipped])
        #expect(stored.first?.error == "not polled: the run's deadline (2m) passed before its turn")
        let logged = lines.all.withLock { $0 }
        #expect(logged.contains { $0.contains("level=error event=run.deadline_exceeded deadline=2m") })
        #expect(logged.contains { $0.contains("level=warning event=ingest.skipped source=c") })
    }

    @Test("a signal (task cancellation) does the same, with its own reason; the round exits 130")
    func signal() async throws {
        let started = Mutex(false)
        let service = try Self.service(concurrency: 1, timing: .live) { label in
            guard label == "slow" else { return }
            started.withLock { $0 = true }
            try await Task.sleep(for: .seconds(3600))
        }
        let round = Task { await service.pollRound([Self.source("slow"), Self.source("b")], deadlineSeconds: 3600) }
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        round.cancel()
        let result = await round.value
        #expect(!result.deadlineExceeded && result.interrupted)
        #expect(result.runs.map(\.status) == [.cancelled, .skipped])
        #expect(result.runs[1].error == "not polled: the run was stopped by a signal before its turn")
        #expect(result.status == ExitStatus.interrupted)
    }

    @Test("one slow source delays no other while a slot is free")
    func slowSourceDelaysNoOther() async throws {
        let (service, _) = try Self.stuckRound(concurrency: 4, othersDone: 3)
        let round = await service.pollRound(["slow", "b", "c", "d"].map { Self.source($0) }, deadlineSeconds: 120)
        #expect(round.runs.map(\.status) == [.cancelled, .succeeded, .succeeded, .succeeded])
    }

    @Test("a round's exit status: failed or deadline 1, signal 130, skipped or incomplete 3, else none", arguments: [
        ([RunStatus.succeeded, .succeeded], false, false, nil),
        ([.succeeded, .incomplete], false, false, 3),
        ([.succeeded, .skipped], false, false, 3),
        ([.incomplete, .failed], false, false, 1),
        ([.cancelled, .skipped], false, true, 130),
        ([.cancelled, .skipped], true, false, 1),
        ([.failed, .cancelled], false, true, 1),
    ] as [([RunStatus], Bool, Bool, Int32?)])
    func roundStatus(statuses: [RunStatus], deadline: Bool, interrupted: Bool, status: Int32?) {
        let runs = statuses.map { IngestRun(source: "s", startedAt: Self.t0, finishedAt: Self.t0, status: $0) }
        #expect(SchedulerService.Round(runs: runs, deadlineExceeded: deadline, interrupted: interrupted).status == status)
    }

    @Test("an exhausted quota skips the source without a request until it resets, then it is polled again")
    func quotaPause() async throws {
        let now = Mutex(Self.t0)
        let clock = UTCClock { now.withLock { $0 } }
        let requests = Mutex(0)
        let service = SchedulerService(
            store: try Stores.openForWriting(":memory:", clock: clock), clock: clock, logger: Lines().logger, concurrency: 1,
            timing: .live,
            makeClient: { _ in
                ScriptedClient { label in
                    let count = requests.withLock { $0 += 1; return $0 }
                    if count == 1 {
                        throw NetworkError(code: .unacceptableStatus(429), label: label, method: .get, url: "http://stub/", statusCode: 429,
                                           attempts: 1, retryAfterSeconds: 30)
                    }
                }
            })
        let first = await service.pollRound([Self.source("gits")], deadlineSeconds: 60)
        #expect(first.runs.first?.status == .failed)
        #expect(first.runs.first?.resumesAt == Self.t0.adding(seconds: 30))
        now.withLock { $0 = Self.t0.adding(seconds: 29) }
        let second = await service.pollRound([Self.source("gits")], deadlineSeconds: 60)
        #expect(second.runs.first?.status == .skipped)
        #expect(second.status == ExitStatus.notFresh)
        #expect(requests.withLock { $0 } == 1)
        now.withLock { $0 = Self.t0.adding(seconds: 30) }
        let third = await service.pollRound([Self.source("gits")], deadlineSeconds: 60)
        #expect(third.runs.first?.status == .succeeded)
        #expect(requests.withLock { $0 } == 2)
    }

    /// Leases whose claims commit and then lose their answer (as a claim does when SIGTERM
    /// shuts its connection's socket after the server committed it), the first `losing` times.
    final class LostAnswers: SourceLeases {
        let store: any SourceLeases
        let losing: Mutex<Int>
        let claims = Mutex(0)
        init(_ store: any SourceLeases, losing: Int) { self.store = store; self.losing = Mutex(losing) }

        func claim(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64, notStartedAfter: UTCInstant?) throws -> LeaseClaim {
            claims.withLock { $0 += 1 }
            let claim = try store.claim(source: source, holder: holder, now: now, leaseSeconds: leaseSeconds, notStartedAfter: notStartedAfter)
            if losing.withLock({ $0 -= 1; return $0 >= 0 }) { throw CancellationError() }
            return claim
        }
        func renew(source: String, holder: LeaseHolder, now: UTCInstant, leaseSeconds: Int64) throws -> Bool {
            try store.renew(source: source, holder: holder, now: now, leaseSeconds: leaseSeconds)
        }
        func release(source: String, holder: LeaseHolder) throws { try store.release(source: source, holder: holder) }
        func lease(of source: String) throws -> SourceLease? { try store.lease(of: source) }
    }

    @Test("a claim that committed but lost its answer: tried once more while running (and held); given back at once while stopping, so no other host waits for it to run out",
          arguments: [(false, 1, "claimed"), (false, 2, "failed"), (true, 1, "failed")])
    func lostClaimAnswer(cancelled: Bool, losing: Int, outcome: String) async throws {
        let store = try Stores.openForWriting(":memory:", clock: .fixed(Self.t0))
        let leases = LostAnswers(store, losing: losing)
        let holder = LeaseHolder(host: "host-a", pid: 1)  // SQLite keeps no token
        let task = Task {
            if cancelled { withUnsafeCurrentTask { $0?.cancel() } }
            return SchedulerService.claim(Self.source("gits"), in: leases, holder: holder, leaseSeconds: 60, now: { Self.t0 })
        }
        let result = await task.value
        switch result {
        case .success(.claimed): #expect(outcome == "claimed")
        case .success(let other): Issue.record("refused: \(other)")
        case .failure: #expect(outcome == "failed")
        }
        // Stopping tries once; running tries twice.
        #expect(leases.claims.withLock { $0 } == (cancelled ? 1 : 2))
        let lease = try #require(try store.lease(of: "gits"))
        #expect(lease.holder == holder)
        // Held when claimed, and when a running scheduler's two answers were lost (it runs out,
        // as a lease of a host that died does); given back when stopping.
        #expect((lease.expiresAt != nil) == !cancelled)
    }
}
