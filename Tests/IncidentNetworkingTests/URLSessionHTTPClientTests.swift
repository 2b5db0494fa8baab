import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// Every scenario runs against a real `Scripts/loopback_server.py` on 127.0.0.1.
/// Timing assertions are deliberately loose: the machine is small and shared.
@Suite("URLSessionHTTPClient against the loopback server")
struct URLSessionHTTPClientTests {
    private static let feedPath = "/api/rest/getIncidentInfo"

    private func router(_ server: LoopbackServer, path: String = feedPath, method: HTTPMethod = .get,
                        key: APIKey = APIKey(FakeKey.raw), extra: [QueryItem] = [.text("type", "xml")]) -> TestRouter {
        TestRouter(baseURL: server.baseURL, path: path, method: method, task: .queryParameters([.key("serviceKey", key)] + extra))
    }

    // MARK: Retries

    @Test("503, 503, 200: success after 2 retries, 3 events (retry, retry, done)")
    func retriesUntilSuccess() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(503, body: "busy"), .status(503, body: "busy"), .ok("<ok/>")]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory), onEvent: log.handler)

        let (data, file) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == "<ok/>")
        #expect(file.statusCode == 200)
        #expect(file.byteCount == 5)
        #expect(file.contentType == "text/plain; charset=utf-8")
        #expect(log.decisions == ["retry", "retry", "done"])
        #expect(log.events.map(\.attempt) == [1, 2, 3])
        #expect(log.events.map(\.statusCode) == [503, 503, 200])
        #expect(log.events.allSatisfy { $0.label == "test" && $0.method == .get })
        #expect(try await server.requests(path: Self.feedPath).count == 3)
        #expect(!FileManager.default.fileExists(atPath: file.fileURL.path), "the body file is removed after the closure")
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("429 with Retry-After: 2 then 200: the second request comes ≥ 2 s after the first")
    func honoursRetryAfterSeconds() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(429, headers: ["Retry-After": "2"]), .ok("ok")]])
        defer { server.stop() }
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")),
                                          onEvent: log.handler)
        let (data, _) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        let requests = try await server.requests(path: Self.feedPath)
        try #require(requests.count == 2)
        let gap = requests[1].time - requests[0].time
        #expect(gap >= 2.0, "gap \(gap) s")
        // The scheduled wait is exactly 2 s (the event says so); the upper bound only catches a
        // wait of the wrong order, with room for a heavily loaded machine.
        #expect(gap < 30, "gap \(gap) s")
        #expect(log.events.first?.decision == .retry(afterSeconds: 2))
    }

    @Test("Retry-After as an HTTP-date is turned into seconds from now, and capped")
    func honoursRetryAfterDate() async throws {
        let server = try await LoopbackServer.start(routes: [
            Self.feedPath: [.status(503, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"]), .ok("ok")],
            "/far": [.status(503, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"]), .ok("ok")],
        ])
        defer { server.stop() }
        let recorder = SleepRecorder()
        var configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net"), sleep: recorder.sleep)
        configuration.now = { Date(timeIntervalSince1970: 784_111_777 - 5) }
        _ = try await fetchData(URLSessionHTTPClient(configuration: configuration), router(server))
        configuration.now = { Date(timeIntervalSince1970: 784_111_777 - 3600) }
        _ = try await fetchData(URLSessionHTTPClient(configuration: configuration), router(server, path: "/far"))
        #expect(recorder.delays == [5, 60])
    }

    @Test("The schedule: injected sleep and random give base·factorⁿ·random, capped at maxDelay")
    func backoffSchedule() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(500)]])
        defer { server.stop() }
        let recorder = SleepRecorder()
        var configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net"), sleep: recorder.sleep, random: { 0.5 })
        configuration.retryPolicy = RetryPolicy(maxRetries: 5, baseDelay: 0.5, factor: 2, maxDelay: 3)
        let log = EventLog()
        let error = await networkError { try await fetchData(URLSessionHTTPClient(configuration: configuration, onEvent: log.handler), router(server)) }
        #expect(error?.code == .unacceptableStatus(500))
        #expect(error?.attempts == 6)
        #expect(recorder.delays == [0.25, 0.5, 1, 1.5, 1.5])
        #expect(log.decisions == ["retry", "retry", "retry", "retry", "retry", "giveUp"])
    }

    @Test("401 with a JSON error body: one attempt, unacceptableStatus(401), excerpt holds the result code")
    func unauthorizedIsNotRetried() async throws {
        let body = #"{"header":{"resultCode":4005,"resultMsg":"인증키가 유효하지 않습니다"}}"#
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(401, body: body, headers: ["Content-Type": "application/json"])]])
        defer { server.stop() }
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")), onEvent: log.handler)
        let error = try #require(await networkError { try await fetchData(client, router(server)) })
        #expect(error.code == .unacceptableStatus(401))
        #expect(error.statusCode == 401)
        #expect(error.attempts == 1)
        #expect(error.bodyExcerpt?.contains("4005") == true)
        #expect(error.bodyExcerpt == body)
        #expect(error.description.contains("HTTP 401"))
        #expect(error.description.contains("check the API key"))
        #expect(log.decisions == ["giveUp"])
        #expect(try await server.requests().count == 1)
    }

    @Test("404: one attempt")
    func notFoundIsNotRetried() async throws {
        let server = try await LoopbackServer.start()
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let error = await networkError { try await fetchData(client, router(server, path: "/nowhere")) }
        #expect(error?.code == .unacceptableStatus(404))
        #expect(error?.attempts == 1)
        #expect(error?.bodyExcerpt?.contains("no route") == true)
        #expect(try await server.requests().count == 1)
    }

    @Test("POST is not retried even on 503 (not idempotent)")
    func postIsNotRetried() async throws {
        let server = try await LoopbackServer.start(routes: ["/submit": [.status(503), .ok("late")]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let post = TestRouter(baseURL: server.baseURL, path: "/submit", method: .post, task: .queryParameters([.text("a", "1")]))
        let error = await networkError { try await fetchData(client, post) }
        #expect(error?.code == .unacceptableStatus(503))
        #expect(error?.attempts == 1)
        let requests = try await server.requests()
        #expect(requests.count == 1)
        #expect(requests.first?.query == "a=1")
        #expect(requests.first?.method == "POST")
    }

    // MARK: Timeouts, connection failures

    @Test("A server that never answers: requestTimeout 1 s, 1 retry → 2 attempts, timedOut, in about 2 s")
    func hangingServerTimesOut() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.hang]])
        defer { server.stop() }
        let log = EventLog()
        let configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net"), requestTimeout: 1, maxRetries: 1, baseDelay: 0.5)
        let client = URLSessionHTTPClient(configuration: configuration, onEvent: log.handler)
        let started = ContinuousClock.now
        let error = await networkError { try await fetchData(client, router(server)) }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timedOut)
        #expect(error?.attempts == 2)
        #expect(error?.detail == "no byte for 1 s before any response")
        #expect(error?.description.contains("the server is slow or unreachable; retry later; GET ") == true)
        #expect(elapsed >= .seconds(1.9), "\(elapsed)")
        // Loose upper bounds: timers fire late on a 2-core machine busy with other tests.
        #expect(elapsed < .seconds(20), "\(elapsed)")
        #expect(log.decisions == ["retry", "giveUp"])
        #expect(log.events.allSatisfy { $0.durationMilliseconds >= 900 && $0.durationMilliseconds < 15000 })
        #expect(try await server.requests().count == 2)
    }

    @Test("A server trickling one byte a second: the 5 s idle timeout never fires, the 2 s attempt bound does; not retried")
    func tricklingServerHitsTheAttemptBound() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: String(repeating: "x", count: 60), chunkSize: 1, chunkDelay: 1)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        var configuration = testConfiguration(directory: directory, requestTimeout: 5, maxRetries: 2)
        configuration.attemptTimeout = 2
        let log = EventLog()
        let started = ContinuousClock.now
        let error = try #require(await networkError {
            try await fetchData(URLSessionHTTPClient(configuration: configuration, onEvent: log.handler), router(server))
        })
        let elapsed = ContinuousClock.now - started
        #expect(error.code == .attemptTimedOut)
        #expect(error.attempts == 1)
        #expect(error.statusCode == 200)
        let event = try #require(log.events.first)
        #expect(log.decisions == ["giveUp"])
        // About 2 bytes in 2 s of the 60 the server would send; the bound is loose for a busy
        // 2-core machine, where the attempt's timer fires late.
        #expect((1...10).contains(event.bytes), "\(event.bytes) bytes")
        #expect(error.detail == "the whole response took longer than 2 s; \(event.bytes) body bytes received")
        #expect(event.errorSummary == "attemptTimedOut: \(error.detail ?? "")")
        #expect(error.description.contains("timed out (the whole response took longer than 2 s;"))
        #expect(elapsed >= .seconds(2), "\(elapsed)")
        #expect(elapsed < .seconds(30), "\(elapsed): the body alone would take 60 s")
        #expect(try await server.requests().count == 1)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("requestTimeout is an idle limit: a body trickling for 5 s with a byte every 0.5 s beats a 2 s idle timeout")
    func idleTimeoutIsNotATotalLimit() async throws {
        let body = String(repeating: "y", count: 11)
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: body, chunkSize: 1, chunkDelay: 0.5)]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net"),
                                                                           requestTimeout: 2, maxRetries: 0))
        let started = ContinuousClock.now
        let (data, _) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == body)
        #expect(ContinuousClock.now - started >= .seconds(4.5))
    }

    @Test("Connection refused: retried, then cannotConnect")
    func connectionRefused() async throws {
        let closed = try await LoopbackServer.start()
        let deadURL = closed.baseURL
        closed.stop()  // nothing listens on its port any more
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net"), maxRetries: 2),
                                          onEvent: log.handler)
        let target = TestRouter(baseURL: deadURL, path: Self.feedPath, task: .queryParameters([.key("serviceKey", APIKey(FakeKey.raw))]))
        let error = await networkError { try await fetchData(client, target) }
        #expect(error?.code == .cannotConnect)
        #expect(error?.attempts == 3)
        #expect(error?.statusCode == nil)
        #expect(log.decisions == ["retry", "retry", "giveUp"])
        #expect(error?.description.contains("could not connect") == true)
    }

    @Test("A connection closed before any response is connectionLost, and retried")
    func closedBeforeResponseIsRetried() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(close: .beforeResponse), .ok("second time lucky")]])
        defer { server.stop() }
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")), onEvent: log.handler)
        let (data, _) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == "second time lucky")
        #expect(log.decisions == ["retry", "done"])
        #expect(log.events.first?.errorSummary?.hasPrefix("connectionLost") == true)
    }

    // MARK: Bodies

    @Test("A body cut short (Content-Length announced, fewer bytes sent) is bodyTruncated; no file remains")
    func truncatedBody() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: String(repeating: "a", count: 1000), truncateAfter: 100)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory, maxRetries: 1), onEvent: log.handler)
        let error = await networkError { try await fetchData(client, router(server)) }
        #expect(error?.code == .bodyTruncated)
        #expect(error?.attempts == 2, "a cut body is a lost connection: retried")
        #expect(log.events.map(\.bytes) == [100, 100])
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("A connection closed mid-body is an error, never a short success; no file remains", arguments: [
        ResponseSpec(body: String(repeating: "b", count: 1000), chunkSize: 10, chunked: true, truncateAfter: 500),
        ResponseSpec(body: "abc", close: .afterHeaders),
    ])
    func closedMidBody(spec: ResponseSpec) async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [spec]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory, maxRetries: 0))
        let error = await networkError { try await fetchData(client, router(server)) }
        #expect(error?.code == .bodyTruncated || error?.code == .connectionLost, "\(String(describing: error))")
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("A body sent in 1-byte chunks arrives byte-identical")
    func oneByteChunks() async throws {
        var generator = SeededGenerator(seed: 7)
        let body = Data((0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(bodyData: body, chunkSize: 1, chunked: true)]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let (data, file) = try await fetchData(client, router(server))
        #expect(data == body)
        #expect(file.byteCount == 3000)
        #expect(file.headers["transfer-encoding"] == "chunked")
    }

    @Test("A gzip body is decoded (the file holds the original bytes)")
    func gzipBody() async throws {
        let text = String(repeating: "<incident><road>경부고속도로</road></incident>\n", count: 500)
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(headers: ["Content-Type": "text/xml;charset=UTF-8"], body: text, gzip: true)]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let (data, file) = try await fetchData(client, router(server))
        #expect(data == Data(text.utf8))
        #expect(file.byteCount == Int64(text.utf8.count))
        #expect(file.headers["content-encoding"] == "gzip")
        #expect(file.contentType == "text/xml;charset=UTF-8")
        let sent = try #require(await server.requests().first)
        #expect(sent.headers["accept-encoding"]?.contains("gzip") == true)
    }

    @Test("A large body is streamed to a file, byte-identical")
    func largeBody() async throws {
        let directory = try TestPaths.temporaryDirectory("net-large")
        let source = directory.appendingPathComponent("source.bin")
        var generator = SeededGenerator(seed: 11)
        let block = Data((0..<(1 << 16)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        var content = Data()
        for _ in 0..<128 { content.append(block) }  // 8 MiB
        try content.write(to: source)
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(bodyFile: source.path)]])
        defer { server.stop() }
        let bodies = try TestPaths.temporaryDirectory("net")
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: bodies))
        let (data, file) = try await fetchData(client, router(server))
        #expect(file.byteCount == Int64(content.count))
        #expect(data == content)
        #expect(leftovers(in: bodies).isEmpty)
    }

    @Test("A body over maxBodyBytes is bodyTooLarge, not retried, no file remains", arguments: [false, true])
    func bodyTooLarge(chunked: Bool) async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: String(repeating: "z", count: 5000), chunkSize: 512, chunked: chunked)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        var configuration = testConfiguration(directory: directory)
        configuration.maxBodyBytes = 1000
        let error = await networkError { try await fetchData(URLSessionHTTPClient(configuration: configuration), router(server)) }
        #expect(error?.code == .bodyTooLarge)
        #expect(error?.attempts == 1)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("maxBodyBytes hit mid-stream of a fast 16 MiB body (delegate queue full, libcurl waiting): bodyTooLarge promptly, no deadlock")
    func bodyTooLargeWhileQueueIsFull() async throws {
        let directory = try TestPaths.temporaryDirectory("net-full")
        let source = directory.appendingPathComponent("source.bin")
        try Data(repeating: 0x78, count: 16 << 20).write(to: source)
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(bodyFile: source.path, chunkSize: 65536, chunked: true)]])
        defer { server.stop() }
        let bodies = try TestPaths.temporaryDirectory("net")
        var configuration = testConfiguration(directory: bodies, maxRetries: 0)
        for limit in [1 << 20, 3 << 20, 7 << 20] {
            configuration.maxBodyBytes = Int64(limit)
            let client = URLSessionHTTPClient(configuration: configuration)
            let target = router(server)
            // Not awaited directly: were the cancel to wait on libcurl's blocked queue, the call
            // would never return, and the test must fail rather than hang.
            let call = Task { await networkError { try await fetchData(client, target) } }
            let deadline = ContinuousClock.now + .seconds(20)
            let finished = Locked(false)
            Task { _ = await call.value; finished.withLock { $0 = true } }
            while !finished.withLock({ $0 }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            guard finished.withLock({ $0 }) else {
                // Deadlocked: releasing the client would block this thread in its deinit
                // (finishTasksAndInvalidate waits on the same stuck queue), so it is leaked.
                _ = Unmanaged.passRetained(client.transport)
                Issue.record("limit \(limit): the call did not end within 20 s")
                return
            }
            #expect(await call.value?.code == .bodyTooLarge)
        }
        #expect(leftovers(in: bodies).isEmpty)
    }

    @Test("An error thrown by the body closure is rethrown unchanged and the file is removed")
    func bodyClosureThrows() async throws {
        struct ParseFailure: Error, Equatable {}
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.ok("not xml")]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory))
        let seen = LockedURL()
        await #expect(throws: ParseFailure.self) {
            try await client.withResponse(for: router(server), label: "parse") { file -> Int in
                seen.set(file.fileURL)
                #expect(FileManager.default.fileExists(atPath: file.fileURL.path))
                throw ParseFailure()
            }
        }
        let fileURL = try #require(seen.get())
        #expect(!FileManager.default.fileExists(atPath: fileURL.path))
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("Router headers, method and query, and the configured User-Agent, reach the server")
    func sendsHeadersAndQuery() async throws {
        let server = try await LoopbackServer.start(routes: ["/search": [.ok("[]")]])
        defer { server.stop() }
        var configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net"))
        configuration.userAgent = "TrafficIncidents-test/1"
        let target = TestRouter(baseURL: server.baseURL, path: "search", method: .put, headers: ["X-Trace": "t-1"],
                                task: .queryParameters([.text("road", "경부")]))
        _ = try await fetchData(URLSessionHTTPClient(configuration: configuration), target)
        let request = try #require(await server.requests().first)
        #expect(request.method == "PUT")
        #expect(request.headers["x-trace"] == "t-1")
        #expect(request.headers["user-agent"] == "TrafficIncidents-test/1")
        #expect(request.query == "road=%EA%B2%BD%EB%B6%80")
    }

    @Test("While a body is streaming, its file carries this process's PID and survives removeLeftovers")
    func liveBodyFileIsKept() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: String(repeating: "z", count: 40), chunkSize: 4, chunkDelay: 0.2)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory))
        let target = router(server)
        let call = Task { try await fetchData(client, target) }
        let deadline = ContinuousClock.now + .seconds(10)
        while leftovers(in: directory).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let streaming = leftovers(in: directory)
        #expect(streaming.count == 1)
        #expect(streaming.allSatisfy { TemporaryBodies.ownerPID(ofFileNamed: $0) == getpid() })
        #expect(TemporaryBodies.removeLeftovers(in: directory).isEmpty)
        let (data, _) = try await call.value
        #expect(data == Data(String(repeating: "z", count: 40).utf8))
        #expect(leftovers(in: directory).isEmpty)
    }

    // MARK: Redirects

    @Test("A redirect to another host (127.0.0.1 → localhost) drops the key; other parameters stay")
    func crossHostRedirectDropsKey() async throws {
        let server = try await LoopbackServer.start(routes: [
            Self.feedPath: [ResponseSpec(status: 302, body: "moved", redirectTo: "http://localhost:{port}/moved")],
            "/moved": [.ok("final body")],
        ])
        defer { server.stop() }
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")), onEvent: log.handler)
        let (data, _) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == "final body", "the redirect's own body is not mixed in")
        let requests = try await server.requests()
        try #require(requests.count == 2)
        #expect(requests[0].queryValues("serviceKey") == [FakeKey.encoded])
        #expect(requests[1].path == "/moved")
        #expect(requests[1].headers["host"]?.hasPrefix("localhost") == true)
        #expect(requests[1].queryNames == ["type"], "query after redirect: \(requests[1].query)")
        #expect(FakeKey.leaks(in: requests[1].query).isEmpty)
        #expect(log.decisions == ["done"])
    }

    @Test("A redirect on the same host keeps the key, still encoded once")
    func sameHostRedirectKeepsKey() async throws {
        let server = try await LoopbackServer.start(routes: [
            Self.feedPath: [ResponseSpec(status: 301, redirectTo: "/moved")],
            "/moved": [.ok("final")],
        ])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let (data, _) = try await fetchData(client, router(server))
        #expect(String(decoding: data, as: UTF8.self) == "final")
        let requests = try await server.requests()
        try #require(requests.count == 2)
        #expect(requests[1].path == "/moved")
        #expect(requests[1].queryValues("serviceKey") == [FakeKey.encoded])
    }

    @Test("More than 5 redirects: tooManyRedirects, not retried")
    func tooManyRedirects() async throws {
        let server = try await LoopbackServer.start(routes: ["/loop": [ResponseSpec(redirectTo: "/loop")]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let error = await networkError { try await fetchData(client, router(server, path: "/loop")) }
        #expect(error?.code == .tooManyRedirects)
        #expect(error?.attempts == 1)
        #expect(try await server.requests().count == 6)
    }

    // MARK: Cancellation

    @Test("Cancelling the task during a slow download throws cancelled within seconds, not at the end; no file remains")
    func cancellation() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [ResponseSpec(body: String(repeating: "s", count: 200), chunkSize: 2, chunkDelay: 0.2)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: directory), onEvent: log.handler)
        let target = router(server)
        let task = Task { try await fetchData(client, target) }

        // Wait until the download is under way.
        let deadline = ContinuousClock.now + .seconds(10)
        while try await server.requests().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        let latency = ContinuousClock.now - cancelledAt

        guard case .failure(let failure) = result, let error = failure as? NetworkError else {
            Issue.record("expected a NetworkError, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        // The whole body would take 20 s; a generous bound keeps this stable on a loaded machine.
        #expect(latency < .seconds(6), "\(latency)")
        #expect(log.decisions == ["giveUp"])
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("Cancelling at random moments of a redirect chain never crashes (corelibs redirect hazard)")
    func cancellationDuringRedirects() async throws {
        let server = try await LoopbackServer.start(routes: ["/spin": [ResponseSpec(delay: 0.005, redirectTo: "/spin")]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net")
        var configuration = testConfiguration(directory: directory, maxRetries: 0)
        configuration.maxRedirects = 40
        let client = URLSessionHTTPClient(configuration: configuration)
        let target = router(server, path: "/spin")
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<25 {
            let task = Task { try await fetchData(client, target) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...120, using: &generator)))
            task.cancel()
            let result = await task.result
            guard case .failure(let failure) = result, let error = failure as? NetworkError else {
                Issue.record("expected a NetworkError, got \(result)")
                continue
            }
            #expect(error.code == .cancelled || error.code == .tooManyRedirects, "\(error)")
        }
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("A task cancelled before the call sends nothing")
    func cancelledBeforeStart() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.ok("x")]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let target = router(server)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await fetchData(client, target)
        }
        let result = await task.result
        guard case .failure(let failure) = result else {
            Issue.record("expected failure")
            return
        }
        #expect((failure as? NetworkError)?.code == .cancelled)
        #expect(try await server.requests().isEmpty)
    }

    @Test("Cancelling during the wait between retries ends the call as cancelled")
    func cancellationDuringBackoff() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(503, headers: ["Retry-After": "30"])]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let target = router(server)
        let task = Task { try await fetchData(client, target) }
        let deadline = ContinuousClock.now + .seconds(10)
        while try await server.requests().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        // The server asked to wait 30 s; a generous bound keeps this stable on a loaded machine.
        #expect(ContinuousClock.now - cancelledAt < .seconds(6))
        guard case .failure(let failure) = result else {
            Issue.record("expected failure")
            return
        }
        #expect((failure as? NetworkError)?.code == .cancelled)
        #expect(try await server.requests().count == 1)
    }

    // MARK: Secrets

    @Test("The key, in any encoding, appears in no error description and no event field", arguments: [FakeKey.raw, FakeKey.encoded])
    func secretsNeverLeak(keyText: String) async throws {
        let key = APIKey(keyText)
        let echo = "your key \(FakeKey.raw) / \(FakeKey.encoded) / SECRETKEY%252Babc%252Fxyz%253D is not registered"
        let server = try await LoopbackServer.start(routes: [
            "/unauthorized": [.status(401, body: echo)],
            "/busy": [.status(503, body: echo)],
            "/redirect": [ResponseSpec(redirectTo: "http://localhost:{port}/unauthorized")],
            "/hang": [.hang],
            "/truncated": [ResponseSpec(body: echo, truncateAfter: 10)],
        ])
        defer { server.stop() }
        let log = EventLog()
        let configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net"), requestTimeout: 1, maxRetries: 1, baseDelay: 0.01)
        let client = URLSessionHTTPClient(configuration: configuration, onEvent: log.handler)

        var texts: [String] = []
        for path in ["/unauthorized", "/busy", "/redirect", "/hang", "/truncated"] {
            let target = router(server, path: path, key: key, extra: [.text("echo", keyText)])
            if let error = await networkError({ try await fetchData(client, target) }) {
                texts += [error.description, error.redactedURL, error.detail ?? "", error.bodyExcerpt ?? "", error.label,
                          String(describing: error), String(reflecting: error)]
            }
        }
        let closed = try await LoopbackServer.start()
        let deadURL = closed.baseURL
        closed.stop()
        let refused = TestRouter(baseURL: deadURL, path: "/x", task: .queryParameters([.key("serviceKey", key)]))
        if let error = await networkError({ try await fetchData(client, refused) }) {
            texts += [error.description, error.detail ?? "", String(reflecting: error)]
        }
        for event in log.events {
            texts += [event.description, event.redactedURL, event.errorSummary ?? "", event.label, String(reflecting: event)]
        }

        #expect(log.events.count >= 10)
        for text in texts {
            #expect(FakeKey.leaks(in: text).isEmpty, "leak in: \(text)")
        }
        // Not vacuous: the key did go on the wire, encoded once.
        let first = try #require(await server.requests(path: "/unauthorized").first)
        #expect(first.queryValues("serviceKey") == [FakeKey.encoded])
        #expect(texts.contains { $0.contains("serviceKey=REDACTED") })
    }
}

extension URLSessionHTTPClientTests {
    @Test("A password in the base URL's user-info appears in no error, event or excerpt; it still reaches the server")
    func userInfoPasswordNeverLeaks() async throws {
        let server = try await LoopbackServer.start(routes: [Self.feedPath: [.status(401, body: "bad credentials for user:Hunter2Proxy")]])
        defer { server.stop() }
        let base = try #require(URL(string: "http://user:Hunter2Proxy@127.0.0.1:\(server.port)"))
        let log = EventLog()
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")), onEvent: log.handler)
        let target = TestRouter(baseURL: base, path: Self.feedPath, task: .queryParameters([.text("type", "xml")]))
        let error = try #require(await networkError { try await fetchData(client, target) })
        #expect(error.code == .unacceptableStatus(401))
        #expect(error.redactedURL == "http://user:REDACTED@127.0.0.1:\(server.port)/api/rest/getIncidentInfo?type=xml")
        #expect(error.bodyExcerpt == "bad credentials for user:REDACTED")
        var texts = [error.description, String(reflecting: error)]
        texts += log.events.flatMap { [$0.description, String(reflecting: $0)] }
        for text in texts {
            #expect(!text.contains("Hunter2"), "leak in \(text)")
        }
        let sent = try #require(await server.requests().first)
        #expect(sent.headers["authorization"] == "Basic " + Data("user:Hunter2Proxy".utf8).base64EncodedString())
    }
}

/// A URL handed out of a non-escaping closure.
final class LockedURL: @unchecked Sendable {
    private let lock = NSLock()
    private var url: URL?

    func set(_ url: URL) {
        lock.lock()
        self.url = url
        lock.unlock()
    }

    func get() -> URL? {
        lock.lock()
        defer { lock.unlock() }
        return url
    }
}
