import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A fault-injecting HTTP/1.1 server on 127.0.0.1, for tests that must never reach the
/// internet. Wraps `Scripts/loopback_server.py` (Python 3 standard library only).
///
/// Each instance starts its own server process on an ephemeral port and stops it in `stop()`
/// or `deinit`; the server also exits by itself when this process goes away (it watches its
/// standard input) and after one hour at the latest.
///
/// Responses are scripted per path (no query string) as a sequence of `ResponseSpec`s: each
/// request consumes the next one; the last one repeats. Unknown paths answer 404.
///
/// ```swift
/// let server = try await LoopbackServer.start(routes: [         // or `try LoopbackServer(routes:)`
///     "/api/rest/getIncidentInfo": [.status(503), ResponseSpec(status: 200, bodyFile: feed.path)],
/// ])
/// defer { server.stop() }
/// // ... point a router at server.baseURL ...
/// let seen = try await server.requests()    // every request, with monotonic receive times
/// ```
///
/// The control calls (`script`, `requests`, `reset`) are HTTP calls to the server's `/__script`,
/// `/__requests` and `/__reset` endpoints. Each comes twice: a blocking version for synchronous
/// code and an `async` overload of the same name, which Swift picks inside async code (write
/// `try await server.requests()`). In async tests prefer the async forms and
/// `LoopbackServer.start(routes:)`: Swift's cooperative pool has one thread per core (two
/// here), and tests that block them (waiting for Python to start, or for a control call) stall
/// every other test's networking and make timing assertions flaky.
public final class LoopbackServer: @unchecked Sendable {
    /// The bound port.
    public let port: Int
    /// `http://127.0.0.1:<port>` (no trailing slash).
    public let baseURL: URL

    private let process: Process
    private let stdinPipe: Pipe
    private let stdoutPipe: Pipe
    private let stderrURL: URL
    private let workDirectory: URL
    private let session: URLSession
    private let lock = NSLock()
    private var stopped = false

    /// Starts the server and waits (up to 30 s) for it to report its port.
    ///
    /// - Parameters:
    ///   - routes: responses served from startup, by path; more can be added with `script`.
    ///   - verbose: let the server log method and path of each request to its stderr file.
    /// - Throws: `LoopbackServerError` if Python or the script cannot be started or the
    ///   server does not report a port.
    public init(routes: [String: [ResponseSpec]] = [:], verbose: Bool = false) throws {
        let script = TestPaths.packageRoot.appendingPathComponent("Scripts/loopback_server.py")
        let workDirectory = try TestPaths.temporaryDirectory("loopback")
        var arguments = ["-I", script.path, "--port", "0", "--bind", "127.0.0.1", "--exit-on-stdin-eof", "--lifetime", "3600",
                         "--base-dir", TestPaths.packageRoot.path]
        if !routes.isEmpty {
            let routesFile = workDirectory.appendingPathComponent("routes.json")
            try JSONEncoder().encode(routes).write(to: routesFile)
            arguments += ["--routes", routesFile.path]
        }
        if verbose { arguments.append("--verbose") }

        let process = Process()
        let (executable, prefix) = Self.python()
        process.executableURL = executable
        process.arguments = prefix + arguments
        process.currentDirectoryURL = TestPaths.packageRoot
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        let stderrURL = workDirectory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        do {
            try process.run()
        } catch {
            throw LoopbackServerError("cannot start \(executable.path): \(error)")
        }

        // If the server never prints its port, stop it so the read below sees end of file.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let line = Self.readLine(stdoutPipe.fileHandleForReading)
        watchdog.cancel()

        guard let line, line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)), port > 0 else {
            if process.isRunning { process.terminate() }
            let stderr = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
            throw LoopbackServerError("the server did not report a port (got \(line.map { "'\($0)'" } ?? "nothing")); stderr: \(stderr)")
        }
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        self.process = process
        self.stdinPipe = stdinPipe
        self.stdoutPipe = stdoutPipe
        self.stderrURL = stderrURL
        self.workDirectory = workDirectory
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        self.session = URLSession(configuration: configuration)
    }

    /// Starts a server without blocking a Swift concurrency thread (the process is started and
    /// awaited on a dedicated thread). Same parameters and errors as `init(routes:verbose:)`.
    public static func start(routes: [String: [ResponseSpec]] = [:], verbose: Bool = false) async throws -> LoopbackServer {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoopbackServer, any Error>) in
            let thread = Thread {
                do {
                    continuation.resume(returning: try LoopbackServer(routes: routes, verbose: verbose))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    deinit {
        stop()
        session.invalidateAndCancel()
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// `baseURL` with `path` appended, e.g. `url("/feed")`.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + (path.hasPrefix("/") ? path : "/" + path)) ?? baseURL
    }

    /// Replaces the response sequence of `path` (e.g. `/api/rest/getIncidentInfo`) and restarts
    /// it from its first entry.
    public func script(_ path: String, _ responses: [ResponseSpec]) throws {
        try script([path: responses])
    }

    /// Replaces the response sequences of several paths at once.
    public func script(_ routes: [String: [ResponseSpec]]) throws {
        _ = try control("POST", "/__script", body: JSONEncoder().encode(routes))
    }

    /// Every request received so far (control calls excluded), oldest first.
    public func requests() throws -> [RecordedRequest] {
        let data = try control("GET", "/__requests", body: nil)
        do {
            return try JSONDecoder().decode([RecordedRequest].self, from: data)
        } catch {
            throw LoopbackServerError("cannot decode /__requests: \(error)")
        }
    }

    /// The requests received so far for one path.
    public func requests(path: String) throws -> [RecordedRequest] {
        try requests().filter { $0.path == path }
    }

    /// Forgets all recorded requests and restores the startup routes.
    public func reset() throws {
        _ = try control("POST", "/__reset", body: nil)
    }

    /// `script(_:_:)` without blocking a thread.
    public func script(_ path: String, _ responses: [ResponseSpec]) async throws {
        try await script([path: responses])
    }

    /// `script(_:)` without blocking a thread.
    public func script(_ routes: [String: [ResponseSpec]]) async throws {
        _ = try await asyncControl("POST", "/__script", body: JSONEncoder().encode(routes))
    }

    /// `requests()` without blocking a thread.
    public func requests() async throws -> [RecordedRequest] {
        let data = try await asyncControl("GET", "/__requests", body: nil)
        do {
            return try JSONDecoder().decode([RecordedRequest].self, from: data)
        } catch {
            throw LoopbackServerError("cannot decode /__requests: \(error)")
        }
    }

    /// `requests(path:)` without blocking a thread.
    public func requests(path: String) async throws -> [RecordedRequest] {
        try await requests().filter { $0.path == path }
    }

    /// Opens the gate `name`: responses held by ``ResponseSpec/holdUntil`` go on, later ones
    /// pass at once.
    public func release(gate name: String) async throws {
        _ = try await asyncControl("POST", "/__release", body: JSONEncoder().encode(["gate": name]))
    }

    /// `reset()` without blocking a thread.
    public func reset() async throws {
        _ = try await asyncControl("POST", "/__reset", body: nil)
    }

    /// Stops the server (SIGKILL: it keeps nothing worth a clean exit) and returns once its port
    /// refuses connections (at most 5 s). Idempotent; hanging responses end.
    ///
    /// It does not wait for `Process.isRunning`, which Foundation's one process-manager thread
    /// clears child by child after a SIGTERM that Python acts on when it gets the CPU: the
    /// callers (`defer { server.stop() }` in async tests, `deinit`) hold one of Swift's
    /// cooperative threads, one per core, while they wait. CI's network pass once stalled in
    /// steps of about 5 s, that wait's old bound (not reproduced on this machine, where a stop
    /// took 0.1-0.2 s with 60 servers stopping at once).
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        try? stdinPipe.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(5)
        while Self.accepts(port: port), Date() < deadline { usleep(2_000) }
        try? stdoutPipe.fileHandleForReading.close()
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    /// What the server wrote to stderr (empty unless `verbose` or it failed).
    public func serverLog() -> String {
        (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
    }

    // MARK: Private

    private static func python() -> (URL, [String]) {
        if let override = ProcessInfo.processInfo.environment["LOOPBACK_PYTHON"], !override.isEmpty {
            return (URL(fileURLWithPath: override), [])
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            return (URL(fileURLWithPath: "/usr/bin/python3"), [])
        }
        return (URL(fileURLWithPath: "/usr/bin/env"), ["python3"])
    }

    /// Reads up to the first newline with read(2), retrying on EINTR (`FileHandle.availableData`
    /// traps on EINTR, which a child process exiting elsewhere in the test run can cause).
    private static func readLine(_ handle: FileHandle) -> String? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 256)
        while !buffer.contains(UInt8(ascii: "\n")) {
            let count = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            buffer.append(contentsOf: chunk[0..<count])
        }
        guard !buffer.isEmpty else { return nil }
        let text = String(decoding: buffer, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
    }

    private func controlRequest(_ method: String, _ path: String, body: Data?) -> URLRequest {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        return request
    }

    private func asyncControl(_ method: String, _ path: String, body: Data?) async throws -> Data {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: controlRequest(method, path, body: body))
        } catch {
            throw LoopbackServerError("\(method) \(path) failed: \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode
        guard status == 200 else {
            throw LoopbackServerError("\(method) \(path) answered HTTP \(status ?? -1): \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }

    private func control(_ method: String, _ path: String, body: Data?) throws -> Data {
        let request = controlRequest(method, path, body: body)
        let box = ControlResult()
        let task = session.dataTask(with: request) { data, response, error in
            box.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
        }
        task.resume()
        let (data, status, error) = box.wait()
        if let error { throw LoopbackServerError("\(method) \(path) failed: \(error.localizedDescription)") }
        guard status == 200 else {
            throw LoopbackServerError("\(method) \(path) answered HTTP \(status ?? -1): \(String(decoding: data ?? Data(), as: UTF8.self))")
        }
        return data ?? Data()
    }
}

/// A control call's result, handed from URLSession's queue to the waiting thread.
private final class ControlResult: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var data: Data?
    private var status: Int?
    private var error: (any Error)?

    func set(data: Data?, status: Int?, error: (any Error)?) {
        self.data = data
        self.status = status
        self.error = error
        semaphore.signal()
    }

    func wait() -> (Data?, Int?, (any Error)?) {
        semaphore.wait()
        return (data, status, error)
    }
}

/// Why `LoopbackServer` failed.
public struct LoopbackServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// One scripted response, mirroring the server's JSON fields (see `Scripts/loopback_server.py`).
/// Every field is optional; nil fields are omitted and take the server's defaults.
public struct ResponseSpec: Codable, Sendable, Hashable {
    /// How `close` ends the connection.
    public enum CloseMode: String, Codable, Sendable, Hashable {
        /// No response at all: the connection closes right after the request is read.
        case beforeResponse
        /// The status line and headers are sent, then the connection closes.
        case afterHeaders
    }

    /// HTTP status; default 200 (302 when `redirectTo` is set and this is not 3xx).
    public var status: Int?
    /// Headers sent as given; `Content-Type` defaults to `text/plain; charset=utf-8`.
    public var headers: [String: String]?
    /// Inline body text (UTF-8).
    public var body: String?
    /// Inline body bytes, base64 (set through `init(bodyData:)`).
    public var bodyBase64: String?
    /// Path of a file whose bytes are the body (absolute, or relative to the package root).
    public var bodyFile: String?
    /// Seconds before the status line.
    public var delay: Double?
    /// A gate's name: the response waits before its status line until ``LoopbackServer/release(gate:)``
    /// opens the gate, so a test acts while the request is provably in flight.
    public var holdUntil: String?
    /// Bytes per write when `chunked` or `chunkDelay` is set (default 1024).
    public var chunkSize: Int?
    /// Seconds between body writes.
    public var chunkDelay: Double?
    /// Send `Transfer-Encoding: chunked`, one chunk per `chunkSize` bytes.
    public var chunked: Bool?
    /// Gzip the body and send `Content-Encoding: gzip`.
    public var gzip: Bool?
    /// Announce the full `Content-Length` but send only this many body bytes, then close.
    public var truncateAfter: Int?
    /// Close the connection early.
    public var close: CloseMode?
    /// Never answer; the socket stays open until the server stops.
    public var hang: Bool?
    /// `Location` to redirect to; `{port}` becomes the server's port; without `?` the
    /// request's query string is appended.
    public var redirectTo: String?

    public init(
        status: Int? = nil,
        headers: [String: String]? = nil,
        body: String? = nil,
        bodyData: Data? = nil,
        bodyFile: String? = nil,
        delay: Double? = nil,
        holdUntil: String? = nil,
        chunkSize: Int? = nil,
        chunkDelay: Double? = nil,
        chunked: Bool? = nil,
        gzip: Bool? = nil,
        truncateAfter: Int? = nil,
        close: CloseMode? = nil,
        hang: Bool? = nil,
        redirectTo: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyBase64 = bodyData?.base64EncodedString()
        self.bodyFile = bodyFile
        self.delay = delay
        self.holdUntil = holdUntil
        self.chunkSize = chunkSize
        self.chunkDelay = chunkDelay
        self.chunked = chunked
        self.gzip = gzip
        self.truncateAfter = truncateAfter
        self.close = close
        self.hang = hang
        self.redirectTo = redirectTo
    }

    /// A response with a status and an optional text body.
    public static func status(_ status: Int, body: String? = nil, headers: [String: String]? = nil) -> ResponseSpec {
        ResponseSpec(status: status, headers: headers, body: body)
    }

    /// A 200 response with a text body.
    public static func ok(_ body: String, headers: [String: String]? = nil) -> ResponseSpec {
        ResponseSpec(status: 200, headers: headers, body: body)
    }

    /// A response that never comes.
    public static let hang = ResponseSpec(hang: true)
}

/// One request as the server received it.
public struct RecordedRequest: Codable, Sendable, Hashable {
    /// `GET`, `POST`, ...
    public let method: String
    /// The path without the query string.
    public let path: String
    /// The raw (still percent-encoded) query string; empty when there was none.
    public let query: String
    /// Headers with lower-cased names.
    public let headers: [String: String]
    /// When the request arrived, in seconds of the server's monotonic clock (Python's
    /// `time.monotonic()`, CLOCK_MONOTONIC on Linux: comparable with ``monotonicNow()``).
    public let time: Double
    /// When the server began to answer (after `delay` and `holdUntil`, before any byte was
    /// sent), on the same clock; nil until then. A client cannot have read any of the answer
    /// before this time.
    public let responded: Double?
    /// The request body as UTF-8 text (empty when none).
    public let body: String?

    /// The raw (percent-encoded) values of a query parameter, in order; names compared exactly.
    public func queryValues(_ name: String) -> [String] {
        query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first.map(String.init) == name else { return nil }
            return parts.count > 1 ? String(parts[1]) : ""
        }
    }

    /// The names of the query parameters, in order.
    public var queryNames: [String] {
        query.split(separator: "&").map { String($0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }
    }
}

/// Now on CLOCK_MONOTONIC, the clock of ``LoopbackServer/Request/time``, in seconds.
public func monotonicNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
