import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// `withStreamingResponse` against a real `Scripts/loopback_server.py`: the body is read while
/// it downloads, under the same rules as `withResponse` (status, size limit, truncation,
/// timeouts, retries, cancellation), and a retry reads the new response from its start.
@Suite("Streamed responses against the loopback server", .serialized)
struct StreamingResponseTests {
    /// Runs each job on a thread of its own: the body closure blocks while it waits for bytes,
    /// as polls do on their store's threads (`StoreExecutor`), never on Swift's few cooperative
    /// threads, which other tests' tasks need to resume.
    final class ThreadPerJob: TaskExecutor {
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
        }
    }
    static let executor = ThreadPerJob()

    private static let path = "/feed"

    /// `testConfiguration` with bodies handed over at their headers, whatever their size.
    private func streamingConfiguration(directory: URL, requestTimeout: Double = 10, maxRetries: Int = 2) -> NetworkConfiguration {
        var configuration = testConfiguration(directory: directory, requestTimeout: requestTimeout, maxRetries: maxRetries)
        configuration.streamingStart = .immediately
        return configuration
    }

    private func router(_ server: LoopbackServer) -> TestRouter {
        TestRouter(baseURL: server.baseURL, path: Self.path, method: .get, task: .plain)
    }

    /// What one call of the body closure read, and how it ended.
    struct Pass: Sendable {
        var bytes = Data()
        /// The download was still under way after the first bytes were read.
        var downloadingAtFirstRead: Bool?
        var downloadFailed = false
    }

    /// Reads each pass with `ResponseBodyReader` in 4 KiB pieces, recording it in `passes`.
    private func fetchStreamed(_ client: any HTTPClient, _ router: any Router, passes: Locked<[Pass]>,
                               stopAfter: Int? = nil) async throws -> Data {
        try await withTaskExecutorPreference(Self.executor) { try await client.withStreamingResponse(for: router, label: "test") { file in
            var pass = Pass()
            defer { passes.withLock { $0.append(pass) } }
            let reader = try ResponseBodyReader(file.fileURL)
            var buffer = [UInt8](repeating: 0, count: 4096)
            do {
                while true {
                    let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                    if n == 0 { break }
                    pass.bytes.append(contentsOf: buffer[0..<n])
                    if pass.downloadingAtFirstRead == nil { pass.downloadingAtFirstRead = file.spool?.ending == nil }
                    if let stopAfter, pass.bytes.count >= stopAfter { throw StopReading() }
                }
            } catch {
                pass.downloadFailed = ResponseBodyReadError.isDownloadFailure(error)
                throw error
            }
            return pass.bytes
        } }
    }

    struct StopReading: Error, Equatable {}

    @Test("The body is read while it downloads (the first bytes before the last are sent), byte-identical; one event with every byte")
    func readsWhileDownloading() async throws {
        let body = String(repeating: "abcdefghij", count: 300)
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: body, chunkSize: 1000, chunkDelay: 0.7)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let log = EventLog()
        let passes = Locked<[Pass]>([])
        let data = try await fetchStreamed(URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory), onEvent: log.handler),
                                           router(server), passes: passes)
        #expect(data == Data(body.utf8))
        let pass = try #require(passes.withLock { $0 }.first)
        // The server waits 0.7 s before each of its last two pieces: the first was read before.
        #expect(pass.downloadingAtFirstRead == true)
        #expect(log.decisions == ["done"])
        #expect(log.events.map(\.bytes) == [3000])
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("The default hand-over: a small or slow body is handed over complete; once enough arrived fast enough, before its end",
          arguments: [false, true])
    func handOverRule(fastEnough: Bool) async throws {
        let body = String(repeating: "abcdefghij", count: 300)
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: body, chunkSize: 1000, chunkDelay: 0.7)]])
        defer { server.stop() }
        var configuration = testConfiguration(directory: try TestPaths.temporaryDirectory("net-stream"))
        #expect(configuration.streamingStart == StreamingStart(bytes: 1 << 20, bytesPerSecond: 32 * 1024 * 1024))
        if fastEnough {
            // The first 1,000 bytes come at once; the rest 0.7 s and 1.4 s later.
            configuration.streamingStart = StreamingStart(bytes: 1000, bytesPerSecond: 1000)
        }
        let passes = Locked<[Pass]>([])
        #expect(try await fetchStreamed(URLSessionHTTPClient(configuration: configuration), router(server), passes: passes) == Data(body.utf8))
        #expect(passes.withLock { $0 }.first?.downloadingAtFirstRead == fastEnough)
    }

    @Test("A body cut off after the reader began is retried from its start: the closure runs again on the new response, its first pass counts for nothing")
    func truncatedBodyRestartsTheRead() async throws {
        let body = String(repeating: "0123456789", count: 400)
        let server = try await LoopbackServer.start(routes: [Self.path: [
            ResponseSpec(body: body, chunkSize: 1000, chunkDelay: 0.3, truncateAfter: 2000), ResponseSpec(body: body),
        ]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let log = EventLog()
        let passes = Locked<[Pass]>([])
        let data = try await fetchStreamed(URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory, maxRetries: 1),
                                                                onEvent: log.handler), router(server), passes: passes)
        #expect(data == Data(body.utf8))
        let all = passes.withLock { $0 }
        try #require(all.count == 2)
        #expect(all[0].downloadFailed)
        #expect(all[0].bytes == Data(body.utf8.prefix(all[0].bytes.count)) && !all[0].bytes.isEmpty && all[0].bytes.count <= 2000,
                "the first pass read \(all[0].bytes.count) bytes of the cut body")
        #expect(all[1].bytes == Data(body.utf8) && !all[1].downloadFailed)
        #expect(log.decisions == ["retry", "done"])
        #expect(log.events.first?.errorSummary?.hasPrefix("bodyTruncated") == true, "\(String(describing: log.events.first?.errorSummary))")
        #expect(try await server.requests(path: Self.path).count == 2)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("With no retry left, a cut-off body is bodyTruncated, whatever error the reader made of it")
    func truncatedBodyIsTheError() async throws {
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: String(repeating: "a", count: 3000), chunkSize: 1000, chunkDelay: 0.2, truncateAfter: 1500)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let client = URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory, maxRetries: 0))
        struct ParserGaveUp: Error {}
        let target = router(server)
        let error = await networkError {
            try await withTaskExecutorPreference(Self.executor) { try await client.withStreamingResponse(for: target, label: "test") { file in
                do {
                    try ResponseBodyReader(file.fileURL).forEachChunk { _ in }
                } catch {
                    throw ParserGaveUp()  // a parser wraps what it read in its own error
                }
            } }
        }
        #expect(error?.code == .bodyTruncated)
        #expect(error?.detail?.hasPrefix("received 1500 bytes of 3000") == true, "\(String(describing: error?.detail))")
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("The reader's own error stops the download at once and is rethrown unchanged; not retried")
    func readerErrorStopsTheDownload() async throws {
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: String(repeating: "r", count: 20_000), chunkSize: 2000, chunkDelay: 1)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let log = EventLog()
        let passes = Locked<[Pass]>([])
        let started = ContinuousClock.now
        await #expect(throws: StopReading()) {
            try await fetchStreamed(URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory), onEvent: log.handler),
                                    router(server), passes: passes, stopAfter: 1)
        }
        // The whole body takes 9 s to send.
        #expect(ContinuousClock.now - started < .seconds(6))
        #expect(passes.withLock { $0 }.count == 1)
        #expect(log.decisions == ["done"])
        #expect(try await server.requests(path: Self.path).count == 1)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("Over maxBodyBytes while being read: bodyTooLarge, not retried", arguments: [false, true])
    func bodyTooLarge(chunked: Bool) async throws {
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: String(repeating: "z", count: 5000), chunkSize: 512, chunked: chunked)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        var configuration = streamingConfiguration(directory: directory)
        configuration.maxBodyBytes = 1000
        let error = await networkError {
            try await fetchStreamed(URLSessionHTTPClient(configuration: configuration), router(server), passes: Locked([]))
        }
        #expect(error?.code == .bodyTooLarge)
        #expect(error?.attempts == 1)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("attemptTimeout bounds the download after its headers (the closure is busy reading): attemptTimedOut, not retried")
    func attemptBound() async throws {
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: String(repeating: "x", count: 60), chunkSize: 1, chunkDelay: 1)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        var configuration = streamingConfiguration(directory: directory, requestTimeout: 5, maxRetries: 2)
        configuration.attemptTimeout = 2
        let log = EventLog()
        let started = ContinuousClock.now
        let error = try #require(await networkError {
            try await fetchStreamed(URLSessionHTTPClient(configuration: configuration, onEvent: log.handler), router(server), passes: Locked([]))
        })
        #expect(error.code == .attemptTimedOut)
        #expect(error.attempts == 1)
        let event = try #require(log.events.first)
        #expect(error.detail == "the whole response took longer than 2 s; \(event.bytes) body bytes received")
        #expect(ContinuousClock.now - started >= .seconds(2))
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("Cancelling the task while the body is read ends the call as cancelled within seconds")
    func cancellation() async throws {
        let server = try await LoopbackServer.start(routes: [Self.path: [ResponseSpec(body: String(repeating: "s", count: 200), chunkSize: 2, chunkDelay: 0.2)]])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let client = URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory))
        let target = router(server)
        let task = Task { try await fetchStreamed(client, target, passes: Locked([])) }
        let deadline = ContinuousClock.now + .seconds(10)
        while try await server.requests().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(6))
        guard case .failure(let failure) = result, let error = failure as? NetworkError else {
            Issue.record("expected a NetworkError, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(leftovers(in: directory).isEmpty)
    }

    @Test("A gzip-encoded body is read decoded; a 4xx is the same error as without streaming, the closure never called")
    func gzipAndStatus() async throws {
        let text = String(repeating: "<incident><road>경부고속도로</road></incident>\n", count: 500)
        let server = try await LoopbackServer.start(routes: [
            Self.path: [ResponseSpec(headers: ["Content-Type": "text/xml"], body: text, gzip: true)],
            "/missing": [.status(404, body: "no such feed")],
        ])
        defer { server.stop() }
        let directory = try TestPaths.temporaryDirectory("net-stream")
        let client = URLSessionHTTPClient(configuration: streamingConfiguration(directory: directory))
        #expect(try await fetchStreamed(client, router(server), passes: Locked([])) == Data(text.utf8))
        let passes = Locked<[Pass]>([])
        let error = await networkError {
            try await fetchStreamed(client, TestRouter(baseURL: server.baseURL, path: "/missing", method: .get, task: .plain), passes: passes)
        }
        #expect(error?.code == .unacceptableStatus(404))
        #expect(error?.bodyExcerpt == "no such feed")
        #expect(passes.withLock { $0 }.isEmpty)
        #expect(leftovers(in: directory).isEmpty)
    }
}
