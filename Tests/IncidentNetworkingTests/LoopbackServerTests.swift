import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// The test server itself: the behaviour other suites (and end-to-end tests) rely on.
@Suite("LoopbackServer")
struct LoopbackServerTests {
    private func get(_ client: URLSessionHTTPClient, _ server: LoopbackServer, _ path: String, query: [QueryItem] = []) async throws -> String {
        let target = TestRouter(baseURL: server.baseURL, path: path, task: .queryParameters(query))
        let (data, _) = try await fetchData(client, target)
        return String(decoding: data, as: UTF8.self)
    }

    private func client() throws -> URLSessionHTTPClient {
        URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("server"), maxRetries: 0))
    }

    @Test("Reports an ephemeral port on 127.0.0.1")
    func port() async throws {
        let server = try await LoopbackServer.start()
        defer { server.stop() }
        #expect(server.port > 0)
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
    }

    @Test("A sequence is consumed in order and its last entry repeats; script() restarts it")
    func sequences() async throws {
        let server = try await LoopbackServer.start(routes: ["/s": [.ok("one"), .ok("two")]])
        defer { server.stop() }
        let client = try client()
        #expect(try await get(client, server, "/s") == "one")
        #expect(try await get(client, server, "/s") == "two")
        #expect(try await get(client, server, "/s") == "two")
        try await server.script("/s", [.ok("three")])
        #expect(try await get(client, server, "/s") == "three")
    }

    @Test("Requests are recorded with method, path, raw query, lower-cased headers and monotonic times; reset clears them")
    func recording() async throws {
        let server = try await LoopbackServer.start(routes: ["/r": [.ok("r")]])
        defer { server.stop() }
        let client = try client()
        _ = try await get(client, server, "/r", query: [.text("a", "1 2"), .text("b", "x")])
        _ = try await get(client, server, "/r")
        let requests = try await server.requests()
        try #require(requests.count == 2)
        #expect(requests[0].method == "GET")
        #expect(requests[0].path == "/r")
        #expect(requests[0].query == "a=1%202&b=x")
        #expect(requests[0].queryValues("a") == ["1%202"])
        #expect(requests[0].queryNames == ["a", "b"])
        #expect(requests[0].headers["host"] == "127.0.0.1:\(server.port)")
        #expect(requests[1].query == "")
        #expect(requests[1].time >= requests[0].time)
        try await server.script("/r", [.ok("changed")])
        try await server.reset()
        #expect(try await server.requests().isEmpty)
        #expect(try await get(client, server, "/r") == "r", "reset restores the startup routes")
    }

    @Test("Unknown paths answer 404 with a short body")
    func unknownPath() async throws {
        let server = try await LoopbackServer.start()
        defer { server.stop() }
        let error = await networkError { try await get(try client(), server, "/missing") }
        #expect(error?.code == .unacceptableStatus(404))
        #expect(error?.bodyExcerpt == "no route for /missing\n")
    }

    @Test("bodyFile serves a file's bytes (relative paths from the package root); delay holds the status line")
    func bodyFileAndDelay() async throws {
        let server = try await LoopbackServer.start(routes: ["/pkg": [ResponseSpec(bodyFile: "Package.swift", delay: 0.3)]])
        defer { server.stop() }
        let started = ContinuousClock.now
        let text = try await get(try client(), server, "/pkg")
        #expect(ContinuousClock.now - started >= .seconds(0.3))
        #expect(text == (try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)))
    }

    @Test("holdUntil keeps a response until its gate is released (its responded time after it); answers after the release pass at once")
    func gate() async throws {
        let server = try await LoopbackServer.start(routes: ["/g": [ResponseSpec(body: "held", holdUntil: "g")]])
        defer { server.stop() }
        // The answer waits for this test's release: a client that gives up after 10 s idle failed
        // once when the whole test process stalled that long.
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("server"),
                                                                           requestTimeout: 120, maxRetries: 0))
        let answer = Task { (try await get(client, server, "/g"), ContinuousClock.now) }
        while try await server.requests(path: "/g").isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(300))
        let released = ContinuousClock.now
        let releasedOnServerClock = monotonicNow()
        try await server.release(gate: "g")
        let (text, answered) = try await answer.value
        #expect(text == "held")
        #expect(answered >= released, "the answer came before the gate was released")
        let responded = try #require(try await server.requests(path: "/g").first?.responded)
        #expect(responded >= releasedOnServerClock, "responded is when the answer began, after the gate opened")
        #expect(try await get(client, server, "/g") == "held")
    }

    @Test("A route with a recorded feed, as the demo script serves it (if the shared feeds are present)")
    func recordedFeed() async throws {
        let feeds = (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.sharedFeeds.appendingPathComponent("gg_gits").path)) ?? []
        guard let name = feeds.sorted().first(where: { $0.hasSuffix(".xml") }) else { return }
        let feed = TestPaths.sharedFeed("gg_gits/\(name)")
        let server = try await LoopbackServer.start(routes: ["/api/rest/getIncidentInfo": [ResponseSpec(headers: ["Content-Type": "text/xml;charset=UTF-8"], bodyFile: feed.path)]])
        defer { server.stop() }
        let (data, file) = try await fetchData(try client(), TestRouter(baseURL: server.baseURL, path: "api/rest/getIncidentInfo"))
        #expect(data == (try Data(contentsOf: feed)))
        #expect(file.contentType == "text/xml;charset=UTF-8")
    }

    @Test("stop() is idempotent, and afterwards nothing listens")
    func stop() async throws {
        let server = try await LoopbackServer.start(routes: ["/x": [.hang]])
        server.stop()
        server.stop()
        let error = await networkError { try await get(try client(), server, "/x") }
        #expect(error?.code == .cannotConnect)
    }
}
