import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// Answers attempts from a script (the last outcome repeats) and counts them.
final class ScriptedResponder: @unchecked Sendable {
    private let outcomes: [StubOutcome]
    private let lock = NSLock()
    private var requests: [URLRequest] = []

    init(_ outcomes: [StubOutcome]) {
        self.outcomes = outcomes
    }

    var responder: StubTransport.Responder {
        { [self] _, request in
            lock.withLock {
                requests.append(request)
                return outcomes[min(requests.count, outcomes.count) - 1]
            }
        }
    }

    var calls: Int { lock.withLock { requests.count } }
    var received: [URLRequest] { lock.withLock { requests } }
}

/// The retry behaviour of `RetryingHTTPClient`, over `StubTransport`: no server, an injected
/// sleep that records the delays and never waits, an injected random.
@Suite("Retrying client over a stub transport")
struct RetryingHTTPClientTests {
    private static let ok = StubOutcome.response(StubResponse(headers: ["Content-Type": "text/xml"], text: "<ok/>"))

    private static func status(_ code: Int, headers: [String: String] = [:]) -> StubOutcome {
        .response(StubResponse(statusCode: code, headers: headers, text: "status \(code)"))
    }

    private struct Harness {
        let script: ScriptedResponder
        let recorder = SleepRecorder()
        let log = EventLog()
        let client: StubHTTPClient
        let directory: URL

        init(_ outcomes: [StubOutcome], policy: RetryPolicy = RetryPolicy(maxRetries: 5, baseDelay: 0.5, factor: 2, maxDelay: 3),
             random: Double = 0.5, attemptTimeout: Double = 300, now: Date = Date(), waitForever: Bool = false) throws {
            script = ScriptedResponder(outcomes)
            directory = try TestPaths.temporaryDirectory("retry")
            let recorder = recorder
            let configuration = NetworkConfiguration(
                attemptTimeout: attemptTimeout, retryPolicy: policy, temporaryDirectory: directory, userAgent: "TrafficIncidents-test/1",
                sleep: waitForever ? recorder.sleepUntilCancelled : recorder.sleep, random: { random }, now: { now })
            client = RetryingHTTPClient(transport: StubTransport(configuration: configuration, responder: script.responder),
                                        onEvent: log.handler)
        }
    }

    private func router(_ method: HTTPMethod = .get) throws -> TestRouter {
        TestRouter(baseURL: try #require(URL(string: "http://provider.example")), path: "feed", method: method,
                   task: .queryParameters([.key("serviceKey", APIKey(FakeKey.raw))]))
    }

    @Test("The delay sequence is exact: ceilings 0.5, 1, 2, 3, 3 (maxDelay) times the injected random, per jitter",
          arguments: [(RetryPolicy.Jitter.full, [0.25, 0.5, 1, 1.5, 1.5]),
                      (.equal, [0.375, 0.75, 1.5, 2.25, 2.25]),
                      (.none, [0.5, 1, 2, 3, 3])])
    func delaySequence(jitter: RetryPolicy.Jitter, expected: [Double]) async throws {
        let policy = RetryPolicy(maxRetries: 5, baseDelay: 0.5, factor: 2, maxDelay: 3, jitter: jitter)
        let harness = try Harness([Self.status(500)], policy: policy, random: 0.5)
        let error = try #require(await networkError { try await fetchData(harness.client, try router()) })
        #expect(error.code == .unacceptableStatus(500))
        #expect(error.attempts == 6)
        #expect(harness.script.calls == 6)
        #expect(harness.recorder.delays == expected)
        #expect(harness.log.events.map(\.decision) == expected.map { .retry(afterSeconds: $0) } + [.giveUp])
        #expect(harness.log.events.map(\.attempt) == [1, 2, 3, 4, 5, 6])
    }

    @Test("Which failures are retried: transient ones once then success; permanent ones given up at once", arguments: [
        (StubOutcome.failure(.cannotConnect), true), (.failure(.connectionLost), true), (.failure(.timedOut), true),
        (.failure(.bodyTruncated), true),
        (status(408), true), (status(429), true), (status(500), true), (status(502), true), (status(503), true), (status(504), true),
        (.failure(.attemptTimedOut), false), (.failure(.transport), false), (.failure(.bodyTooLarge), false),
        (.failure(.tooManyRedirects), false), (.failure(.invalidRequest), false), (.failure(.cancelled), false),
        (status(400), false), (status(401), false), (status(403), false), (status(404), false), (status(501), false),
        (status(505), false),
    ])
    func retriedCodes(first: StubOutcome, retried: Bool) async throws {
        let harness = try Harness([first, Self.ok])
        if retried {
            let (data, _) = try await fetchData(harness.client, try router())
            #expect(String(decoding: data, as: UTF8.self) == "<ok/>")
            #expect(harness.script.calls == 2)
            #expect(harness.recorder.delays == [0.25])
            #expect(harness.log.decisions == ["retry", "done"])
        } else {
            let error = try #require(await networkError { try await fetchData(harness.client, try router()) })
            #expect(error.attempts == 1)
            #expect(harness.script.calls == 1)
            #expect(harness.recorder.delays.isEmpty)
            #expect(harness.log.decisions == ["giveUp"])
        }
    }

    @Test("Only idempotent methods are retried (RFC 9110 §9.2.2)", arguments: [
        (HTTPMethod.get, 4), (.head, 4), (.put, 4), (.delete, 4), (.post, 1), (.patch, 1),
    ])
    func retriedMethods(method: HTTPMethod, attempts: Int) async throws {
        let harness = try Harness([Self.status(503)], policy: RetryPolicy(maxRetries: 3))
        let error = try #require(await networkError { try await fetchData(harness.client, try router(method)) })
        #expect(error.code == .unacceptableStatus(503))
        #expect(error.attempts == attempts)
        #expect(harness.script.calls == attempts)
        #expect(harness.script.received.allSatisfy { $0.httpMethod == method.rawValue })
    }

    @Test("Retry-After replaces backoff, capped at maxRetryAfter; the error keeps the server's value", arguments: [
        ("2", 60.0, 2.0, 2.0), ("120", 60, 60, 120), ("3600", 5, 5, 3600), ("0", 60, 0, 0),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 60, 30, 30),  // `now` is 30 s before that date
        ("soon", 60, 0.25, nil),  // unparseable: ignored, backoff applies
    ] as [(String, Double, Double, Double?)])
    func retryAfter(header: String, cap: Double, delay: Double, reported: Double?) async throws {
        let policy = RetryPolicy(maxRetries: 1, baseDelay: 0.5, maxRetryAfter: cap)
        let harness = try Harness([Self.status(429, headers: ["Retry-After": header])], policy: policy, random: 0.5,
                                  now: Date(timeIntervalSince1970: 784_111_777 - 30))
        let error = try #require(await networkError { try await fetchData(harness.client, try router()) })
        #expect(harness.recorder.delays == [delay])
        #expect(error.retryAfterSeconds == reported)
        #expect(error.attempts == 2)
    }

    @Test("Gives up after maxRetries: attempts = maxRetries + 1", arguments: [0, 1, 3])
    func givesUp(maxRetries: Int) async throws {
        let harness = try Harness([.failure(.connectionLost, detail: "reset by peer")], policy: RetryPolicy(maxRetries: maxRetries))
        let error = try #require(await networkError { try await fetchData(harness.client, try router()) })
        #expect(error.code == .connectionLost)
        #expect(error.attempts == maxRetries + 1)
        #expect(error.detail == "reset by peer")
        #expect(harness.script.calls == maxRetries + 1)
        #expect(harness.recorder.delays.count == maxRetries)
        #expect(harness.log.decisions == Array(repeating: "retry", count: maxRetries) + ["giveUp"])
    }

    @Test("The events: one per attempt, with status, bytes, decision and a redacted error summary")
    func eventSequence() async throws {
        let harness = try Harness([Self.status(503), .failure(.timedOut, detail: "no byte for 30 s before any response"), Self.ok])
        _ = try await fetchData(harness.client, try router(), label: "gits.getIncidentInfo")
        let events = harness.log.events
        try #require(events.count == 3)
        #expect(events.map(\.decision) == [.retry(afterSeconds: 0.25), .retry(afterSeconds: 0.5), .done])
        #expect(events.map(\.statusCode) == [503, nil, 200])
        #expect(events.map(\.bytes) == [10, 0, 5])
        #expect(events.map(\.errorSummary) == ["unacceptableStatus(503)", "timedOut: no byte for 30 s before any response", nil])
        #expect(events.allSatisfy { $0.label == "gits.getIncidentInfo" && $0.method == .get })
        #expect(events.allSatisfy { $0.redactedURL == "http://provider.example/feed?serviceKey=REDACTED" })
        #expect(events[0].description.hasPrefix(
            #"event=http label="gits.getIncidentInfo" method=GET url="http://provider.example/feed?serviceKey=REDACTED" status=503 bytes=10 ms="#))
    }

    @Test("Cancelling while waiting to retry ends the call as cancelled; nothing more is sent")
    func cancelledWhileWaiting() async throws {
        let harness = try Harness([Self.status(503, headers: ["Retry-After": "30"])], waitForever: true)
        let client = harness.client
        let target = try router()
        let task = Task { try await fetchData(client, target) }
        let deadline = ContinuousClock.now + .seconds(120)  // the loop ends as soon as the retry wait begins
        while harness.recorder.delays.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        let error = try #require(await networkError { try await task.value })
        #expect(error.code == .cancelled)
        #expect(error.attempts == 1)
        #expect(error.detail == "cancelled while waiting to retry after unacceptableStatus(503)")
        #expect(harness.recorder.delays == [30])
        #expect(harness.log.decisions == ["retry"])
        #expect(harness.script.calls == 1)
    }

    @Test("Cancelling during a hanging attempt ends it as cancelled, not as a timeout")
    func cancelledDuringAttempt() async throws {
        let harness = try Harness([.hang])
        let client = harness.client
        let target = try router()
        let task = Task { try await fetchData(client, target) }
        let deadline = ContinuousClock.now + .seconds(120)  // the loop ends as soon as the retry wait begins
        while harness.script.calls == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        let error = try #require(await networkError { try await task.value })
        #expect(error.code == .cancelled)
        #expect(error.attempts == 1)
        #expect(harness.log.decisions == ["giveUp"])
    }

    @Test("A task cancelled before the call makes no attempt and reports none")
    func cancelledBeforeStart() async throws {
        let harness = try Harness([Self.ok])
        let client = harness.client
        let target = try router()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await fetchData(client, target)
        }
        let error = try #require(await networkError { try await task.value })
        #expect(error.code == .cancelled)
        #expect(error.attempts == 0)
        #expect(harness.script.calls == 0)
        #expect(harness.log.events.isEmpty)
    }

    @Test("The attempt bound ends a hanging attempt as attemptTimedOut, names the limit, and is not retried")
    func attemptBound() async throws {
        let harness = try Harness([.hang, Self.ok], policy: RetryPolicy(maxRetries: 3), attemptTimeout: 1)
        let started = ContinuousClock.now
        let error = try #require(await networkError { try await fetchData(harness.client, try router()) })
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(error.code == .attemptTimedOut)
        #expect(error.attempts == 1)
        #expect(error.detail == "the whole response took longer than 1 s; 0 body bytes received")
        #expect(error.description.contains("test: timed out (the whole response took longer than 1 s; 0 body bytes received)"))
        #expect(error.description.contains("the server sends too slowly; retry later; GET "))
        #expect(harness.script.calls == 1)
        #expect(harness.log.events.map(\.errorSummary) == ["attemptTimedOut: the whole response took longer than 1 s; 0 body bytes received"])
    }

    @Test("The body file: handed to the closure, named with this process's PID, removed afterwards; User-Agent added")
    func bodyFile() async throws {
        let harness = try Harness([Self.ok])
        let (data, file) = try await fetchData(harness.client, try router())
        #expect(String(decoding: data, as: UTF8.self) == "<ok/>")
        #expect(file.contentType == "text/xml")
        #expect(file.fileURL.lastPathComponent.hasPrefix("incident-http-pid\(getpid())-"))
        #expect(TemporaryBodies.ownerPID(ofFileNamed: file.fileURL.lastPathComponent) == getpid())
        #expect(leftovers(in: harness.directory).isEmpty)
        #expect(harness.script.received.first?.value(forHTTPHeaderField: "User-Agent") == "TrafficIncidents-test/1")
    }
}

@Suite("CancellableSleep")
struct CancellableSleepTests {
    @Test("sleeps about the time asked")
    func sleeps() async throws {
        let start = ContinuousClock.now
        try await CancellableSleep.sleep(seconds: 0.2)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(190))
        // Generous: the full suite on a busy 2-core machine can starve dispatch for many seconds.
        #expect(elapsed < .seconds(120))
    }

    @Test("a cancelled sleep throws CancellationError at once, whether cancelled before or while it waits",
          arguments: [0.0, 0.05])
    func cancelled(after delay: Double) async throws {
        let start = ContinuousClock.now
        let task = Task { try await CancellableSleep.sleep(seconds: 3600) }
        if delay > 0 { try await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(120))  // not the hour it was asked to sleep
    }

    @Test("zero or negative seconds return at once; in a cancelled task they throw")
    func zero() async throws {
        try await CancellableSleep.sleep(seconds: 0)
        try await CancellableSleep.sleep(seconds: -1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await CancellableSleep.sleep(seconds: 0)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
