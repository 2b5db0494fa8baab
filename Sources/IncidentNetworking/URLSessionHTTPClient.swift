import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `HTTPClient`: async/await over one `URLSession` (libcurl on Linux), with retries,
/// a redirect guard, and bodies streamed to disk.
///
/// Per call: the router's request is built, then sent up to `retryPolicy.maxRetries + 1`
/// times. Each attempt
/// - streams a 2xx body into a new file in `temporaryDirectory` through a data delegate whose
///   queue applies backpressure (`BoundedDelegateQueue`), so at most a few 16 KiB chunks of a
///   body are ever in memory, whatever its size; gzip/deflate bodies are decoded by libcurl
///   (the file holds the decoded bytes);
/// - checks the received size against `Content-Length` when the body was not content-encoded,
///   so a body cut short is `bodyTruncated`, never a short success;
/// - follows up to `maxRedirects` redirects; a redirect to another origin (scheme, host or
///   port differ from the original request) is followed only after removing every key
///   parameter (`Redaction.keyParameterNames`) from its query and the `Authorization`,
///   `Proxy-Authorization`, `Cookie` and key-named headers — so a key never leaves the host
///   it was meant for;
/// - honours task cancellation promptly (the URLSession task is cancelled, the call throws
///   `NetworkError` `.cancelled`);
/// - ends with exactly one `NetworkEvent` to `onEvent`.
///
/// Why a data delegate rather than the async `download(for:)` (which, checked on Linux,
/// does honour task cancellation): the delegate sees every byte, so the client can enforce
/// `maxBodyBytes` while streaming, compare the count with `Content-Length` (libcurl reports a
/// short body only as an unknown error), keep the first bytes of an error body, and rewrite
/// redirects. A download task (`URLSessionDownloadDelegate`) would bound memory too, but on
/// swift-corelibs-foundation (checked with 6.3.1) it has no `task.response` until the
/// transfer completes (no status or headers while streaming), and it leaves its own body file
/// (`NSTemporaryDirectory()/<UUID>.tmp`) behind whenever a download fails or is cancelled.
///
/// Memory: corelibs has no flow control of its own: libcurl's thread hands each chunk to the
/// delegate queue and carries on, so while the delegate falls behind (slow disk, busy CPU) the
/// chunks pile up in memory, up to the whole body. The session's delegate queue is therefore a
/// `BoundedDelegateQueue`: when it is full, libcurl's thread waits, libcurl stops reading the
/// socket, and TCP slows the server down. Figures are in that type's comment.
///
/// Timeouts: `requestTimeout` is the idle limit (`URLRequest.timeoutInterval`, in whole
/// seconds: see `NetworkConfiguration.effectiveRequestTimeout`); `resourceTimeout` bounds one
/// attempt in total.
///
/// Known limit (swift-corelibs-foundation): if the session's delegate queue is starved for
/// longer than the request timeout exactly while a redirect answer is pending, corelibs' own
/// timer completes the task behind our back and our answer then traps inside Foundation. The
/// delegate answers at once, so this needs a stall of ≥ 1 s; cancellation during redirects is
/// handled (see `Transfer`).
public final class URLSessionHTTPClient: HTTPClient {
    /// The settings this client was made with.
    public let configuration: NetworkConfiguration
    private let onEvent: @Sendable (NetworkEvent) -> Void
    private let session: URLSession
    private let dispatcher: TransferDispatcher

    /// - Parameters:
    ///   - configuration: timeouts, retry policy, limits.
    ///   - onEvent: called once per attempt, from the calling task, with redacted fields.
    public init(configuration: NetworkConfiguration = .init(), onEvent: @escaping @Sendable (NetworkEvent) -> Void = { _ in }) {
        self.configuration = configuration
        self.onEvent = onEvent
        let dispatcher = TransferDispatcher()
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.effectiveRequestTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.resourceTimeout
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        let queue = BoundedDelegateQueue(name: "IncidentNetworking.URLSessionHTTPClient")
        self.session = URLSession(configuration: sessionConfiguration, delegate: dispatcher, delegateQueue: queue)
        self.dispatcher = dispatcher
    }

    /// The session's delegate queue (a `BoundedDelegateQueue`), for tests.
    var delegateQueue: OperationQueue { session.delegateQueue }

    deinit {
        // Not invalidateAndCancel: cancelling a task that awaits a redirect answer crashes
        // swift-corelibs-foundation. Every call has ended its tasks by now anyway.
        session.finishTasksAndInvalidate()
    }

    public func withResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        let method = target.method
        var request = try target.clientRequest(label: label)
        request.timeoutInterval = configuration.effectiveRequestTimeout
        if let userAgent = configuration.userAgent, request.value(forHTTPHeaderField: "User-Agent") == nil {
            request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        }
        let urlText = request.url?.absoluteString ?? target.baseURL.absoluteString
        let policy = configuration.retryPolicy

        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled {
                throw NetworkError(code: .cancelled, label: label, method: method, url: urlText, attempts: attempt - 1)
            }
            let started = ContinuousClock.now
            let result = await performAttempt(request)
            let elapsed = ContinuousClock.now - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)

            switch result {
            case .success(let file):
                onEvent(NetworkEvent(label: label, method: method, url: urlText, statusCode: file.statusCode, bytes: file.byteCount,
                                     durationMilliseconds: milliseconds, attempt: attempt, decision: .done, errorSummary: nil))
                defer { try? FileManager.default.removeItem(at: file.fileURL) }
                return try body(file)

            case .failure(let failure):
                let summary = failure.detail.map { "\(failure.code): \($0)" } ?? "\(failure.code)"
                if policy.shouldRetry(failure.code, method: method, attempt: attempt) {
                    let delay = policy.delay(forRetry: attempt - 1, retryAfter: failure.retryAfter, unitRandom: configuration.random())
                    onEvent(NetworkEvent(label: label, method: method, url: urlText, statusCode: failure.statusCode, bytes: failure.bytes,
                                         durationMilliseconds: milliseconds, attempt: attempt, decision: .retry(afterSeconds: delay),
                                         errorSummary: summary))
                    do {
                        try await configuration.sleep(delay)
                    } catch {
                        throw NetworkError(code: .cancelled, label: label, method: method, url: urlText, statusCode: failure.statusCode,
                                           attempts: attempt, detail: "cancelled while waiting to retry after \(failure.code)")
                    }
                    continue
                }
                onEvent(NetworkEvent(label: label, method: method, url: urlText, statusCode: failure.statusCode, bytes: failure.bytes,
                                     durationMilliseconds: milliseconds, attempt: attempt, decision: .giveUp, errorSummary: summary))
                throw NetworkError(code: failure.code, label: label, method: method, url: urlText, statusCode: failure.statusCode,
                                   attempts: attempt, retryAfterSeconds: failure.retryAfter, bodyExcerpt: failure.excerpt,
                                   detail: failure.detail)
            }
        }
    }

    /// One attempt: a data task whose delegate callbacks feed a `Transfer`.
    private func performAttempt(_ request: URLRequest) async -> AttemptResult {
        let transfer = Transfer(
            fileURL: configuration.temporaryDirectory.appendingPathComponent("incident-http-\(UUID().uuidString).body"),
            originalURL: request.url,
            isHead: request.httpMethod == HTTPMethod.head.rawValue,
            maxBodyBytes: configuration.maxBodyBytes,
            maxRedirects: configuration.maxRedirects,
            requestTimeout: configuration.effectiveRequestTimeout,
            now: configuration.now
        )
        let task = session.dataTask(with: request)
        dispatcher.register(transfer, for: task)
        defer { dispatcher.unregister(task) }
        let resourceTimeout = configuration.resourceTimeout
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AttemptResult, Never>) in
                transfer.start(task, continuation: continuation, resourceTimeout: resourceTimeout)
            }
        } onCancel: {
            transfer.fail(.cancelled, "the calling task was cancelled")
        }
        if case .failure = result {
            transfer.removeFile()
        }
        return result
    }
}

// MARK: - One attempt

enum AttemptResult: Sendable {
    case success(HTTPResponseFile)
    case failure(AttemptFailure)
}

struct AttemptFailure: Sendable {
    var code: NetworkError.Code
    var statusCode: Int?
    var retryAfter: Double?
    var excerpt: String?
    var detail: String?
    var bytes: Int64
}

/// The state of one attempt, fed by delegate callbacks (on the session's queue), the
/// cancellation handler and the resource timer (on other threads); guarded by a lock.
/// The first outcome wins: `finish` resumes the continuation exactly once.
final class Transfer: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<AttemptResult, Never>?
        var result: AttemptResult?
        var task: URLSessionTask?
        var timer: DispatchWorkItem?
        var response: HTTPURLResponse?
        var handle: FileHandle?
        var bytes: Int64 = 0
        var excerpt = Data()
        var redirects = 0
        /// Between our redirect decision and handing it to URLSession: cancelling the task
        /// then would crash swift-corelibs-foundation ("Received callback for HTTP redirection,
        /// but we're not waiting for it"), so a cancel is deferred until the hand-over is done.
        var redirectInFlight = false
        var deferredCancel = false
        /// A failure decided while URLSession still owns the task (too many redirects): it is
        /// reported when the task completes, so nothing cancels the task in between.
        var pendingFailure: (NetworkError.Code, String)?
    }

    /// What to tell URLSession about a redirect.
    enum RedirectDecision {
        /// Follow, with this (possibly stripped) request.
        case follow(URLRequest)
        /// Do not follow: the 3xx becomes the final response.
        case stop
        /// The attempt already ended and its task was cancelled: do not call the completion
        /// handler at all (calling it after a cancel crashes swift-corelibs-foundation).
        case abandon
    }

    let fileURL: URL
    private let originalURL: URL?
    private let isHead: Bool
    private let maxBodyBytes: Int64
    private let maxRedirects: Int
    private let requestTimeout: Double
    private let now: @Sendable () -> Date
    private let state = Locked(State())

    init(fileURL: URL, originalURL: URL?, isHead: Bool, maxBodyBytes: Int64, maxRedirects: Int, requestTimeout: Double,
         now: @escaping @Sendable () -> Date) {
        self.fileURL = fileURL
        self.originalURL = originalURL
        self.isHead = isHead
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
        self.requestTimeout = requestTimeout
        self.now = now
    }

    /// Resumes the task, unless the attempt already ended (cancelled before it started).
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<AttemptResult, Never>, resourceTimeout: Double) {
        let timer = DispatchWorkItem { [weak self] in
            self?.fail(.timedOut, "the attempt took longer than resourceTimeout (\(NetworkError.format(resourceTimeout)) s)")
        }
        let earlier: AttemptResult? = state.withLock { state in
            if let result = state.result { return result }
            state.continuation = continuation
            state.task = task
            state.timer = timer
            return nil
        }
        if let earlier {
            task.cancel()
            continuation.resume(returning: earlier)
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, resourceTimeout), execute: timer)
        task.resume()
    }

    /// Ends the attempt with a failure and cancels the URLSession task.
    func fail(_ code: NetworkError.Code, _ detail: String) {
        finish(cancellingTask: true) { state in
            .failure(AttemptFailure(code: code, statusCode: state.response?.statusCode, detail: detail, bytes: state.bytes))
        }
    }

    /// Removes the body file, if one was created.
    func removeFile() {
        try? FileManager.default.removeItem(at: fileURL)
    }

    private func finish(cancellingTask: Bool, _ makeResult: (inout State) -> AttemptResult) {
        let ending: (CheckedContinuation<AttemptResult, Never>?, URLSessionTask?, DispatchWorkItem?, AttemptResult)? = state.withLock { state in
            guard state.result == nil else { return nil }
            let result = makeResult(&state)
            state.result = result
            try? state.handle?.close()
            state.handle = nil
            let continuation = state.continuation
            state.continuation = nil
            var taskToCancel: URLSessionTask?
            if cancellingTask {
                if state.redirectInFlight {
                    state.deferredCancel = true
                } else {
                    taskToCancel = state.task
                }
            }
            return (continuation, taskToCancel, state.timer, result)
        }
        guard let (continuation, taskToCancel, timer, result) = ending else { return }
        timer?.cancel()
        if let taskToCancel { Self.cancelOffQueue(taskToCancel) }
        continuation?.resume(returning: result)
    }

    /// Cancels the task from another thread. `URLSessionTask.cancel()` waits for the session's
    /// work queue (`workQueue.sync`), and that queue may be waiting for room on the delegate
    /// queue (`BoundedDelegateQueue`): cancelling from a delegate callback would deadlock.
    static func cancelOffQueue(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    // MARK: Delegate callbacks

    func didReceive(response: URLResponse) -> URLSession.ResponseDisposition {
        guard let http = response as? HTTPURLResponse else {
            fail(.transport, "the response is not HTTP")
            return .cancel
        }
        var failure: (NetworkError.Code, String)?
        let proceed: Bool = state.withLock { state in
            guard state.result == nil else { return false }
            state.response = http
            state.bytes = 0
            state.excerpt = Data()
            guard (200...299).contains(http.statusCode) else { return true }
            if let length = Int64(http.value(forHTTPHeaderField: "Content-Length") ?? ""), length > maxBodyBytes {
                failure = (.bodyTooLarge, "Content-Length \(length) exceeds maxBodyBytes \(maxBodyBytes)")
                return false
            }
            do {
                if let handle = state.handle {
                    try handle.truncate(atOffset: 0)
                } else {
                    guard FileManager.default.createFile(atPath: fileURL.path, contents: nil) else {
                        throw CocoaError(.fileWriteUnknown)
                    }
                    state.handle = try FileHandle(forWritingTo: fileURL)
                }
            } catch {
                failure = (.transport, "cannot create the temporary body file in \(fileURL.deletingLastPathComponent().path): \(error.localizedDescription)")
                return false
            }
            return true
        }
        if let (code, detail) = failure { fail(code, detail) }
        return proceed ? .allow : .cancel
    }

    func didReceive(data: Data) {
        var failure: (NetworkError.Code, String)?
        state.withLock { state in
            guard state.result == nil, let response = state.response else { return }
            state.bytes += Int64(data.count)
            if (200...299).contains(response.statusCode) {
                if state.bytes > maxBodyBytes {
                    failure = (.bodyTooLarge, "the body exceeds maxBodyBytes \(maxBodyBytes)")
                    return
                }
                do {
                    try state.handle?.write(contentsOf: data)
                } catch {
                    failure = (.transport, "cannot write the temporary body file: \(error.localizedDescription)")
                }
            } else if state.excerpt.count < BodyExcerpt.collectLimit {
                state.excerpt.append(data.prefix(BodyExcerpt.collectLimit - state.excerpt.count))
            }
        }
        if let (code, detail) = failure { fail(code, detail) }
    }

    /// Decides a redirect. Unless the answer is `.abandon`, the caller must hand the answer to
    /// URLSession and then call `redirectHandedOver()`.
    func willRedirect(to request: URLRequest) -> RedirectDecision {
        let count: Int? = state.withLock { state in
            guard state.result == nil else { return nil }
            state.redirects += 1
            state.redirectInFlight = true
            return state.redirects
        }
        guard let count else { return .abandon }
        if count > maxRedirects {
            // Not `fail`: the task must not be cancelled while URLSession awaits our answer.
            // The 3xx becomes final, the task completes, and `didComplete` reports this.
            state.withLock { $0.pendingFailure = (.tooManyRedirects, "more than \(maxRedirects) redirects") }
            return .stop
        }
        guard RedirectGuard.isCrossOrigin(from: originalURL, to: request.url) else { return .follow(request) }
        // A URL that cannot be rebuilt without its keys is not followed (the 3xx is final).
        return RedirectGuard.strippingCredentials(from: request).map(RedirectDecision.follow) ?? .stop
    }

    /// Called once URLSession has our redirect answer: performs a cancel deferred meanwhile.
    func redirectHandedOver() {
        let task: URLSessionTask? = state.withLock { state in
            state.redirectInFlight = false
            guard state.deferredCancel else { return nil }
            state.deferredCancel = false
            return state.task
        }
        // Called on the delegate queue: never a synchronous cancel there (see `cancelOffQueue`).
        // The redirect answer is already queued on corelibs' work queue, so it still comes first.
        if let task { Self.cancelOffQueue(task) }
    }

    func didComplete(error: Error?) {
        finish(cancellingTask: false) { state in
            let response = state.response
            let status = response?.statusCode
            let retryAfter = response?.value(forHTTPHeaderField: "Retry-After").flatMap { RetryAfter.seconds(from: $0, now: now()) }
            func failure(_ code: NetworkError.Code, _ detail: String?, excerpt: String? = nil) -> AttemptResult {
                .failure(AttemptFailure(code: code, statusCode: status, retryAfter: retryAfter, excerpt: excerpt, detail: detail, bytes: state.bytes))
            }

            if let (code, detail) = state.pendingFailure {
                return failure(code, detail)
            }
            if let error {
                let nsError = error as NSError
                let message = nsError.localizedDescription
                if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
                    return failure(.cancelled, "the request was cancelled")
                }
                if let response {
                    if !(200...299).contains(response.statusCode) {
                        // The status is what matters; the error body was cut short.
                        return failure(.unacceptableStatus(response.statusCode), "the error body was cut short: \(message)",
                                       excerpt: BodyExcerpt.make(state.excerpt))
                    }
                    if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorTimedOut {
                        return failure(.timedOut, "no body bytes for \(NetworkError.format(requestTimeout)) s after \(state.bytes) bytes")
                    }
                    return failure(.bodyTruncated, "received \(state.bytes) bytes\(Self.expectedText(response)): \(message)")
                }
                return failure(Self.classify(nsError), message)
            }

            guard let response else {
                return failure(.transport, "the transfer ended without an HTTP response")
            }
            guard (200...299).contains(response.statusCode) else {
                return failure(.unacceptableStatus(response.statusCode), nil, excerpt: BodyExcerpt.make(state.excerpt))
            }
            if let expected = Self.expectedLength(response, isHead: isHead), state.bytes < expected {
                return failure(.bodyTruncated, "received \(state.bytes) of \(expected) bytes")
            }
            if state.handle == nil {
                // A 2xx whose file could not be opened already failed; this is a safety net.
                return failure(.transport, "no body file")
            }
            return .success(HTTPResponseFile(fileURL: fileURL, statusCode: response.statusCode,
                                             headers: Self.headers(of: response), byteCount: state.bytes))
        }
    }

    // MARK: Helpers

    /// `Content-Length`, when it describes the bytes we receive: not for HEAD, 204 or 304, and
    /// not when a `Content-Encoding` was decoded by libcurl (the length is then the encoded size).
    static func expectedLength(_ response: HTTPURLResponse, isHead: Bool) -> Int64? {
        guard !isHead, response.statusCode != 204, response.statusCode != 304 else { return nil }
        if let encoding = response.value(forHTTPHeaderField: "Content-Encoding"),
           !encoding.trimmingCharacters(in: .whitespaces).isEmpty,
           encoding.lowercased() != "identity" {
            return nil
        }
        return response.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func expectedText(_ response: HTTPURLResponse) -> String {
        expectedLength(response, isHead: false).map { " of \($0)" } ?? ""
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            headers["\(name)"] = "\(value)"
        }
        return HeaderFields.lowercased(headers)
    }

    /// Maps a Foundation error that came before any response to a code.
    static func classify(_ error: NSError) -> NetworkError.Code {
        guard error.domain == NSURLErrorDomain else { return .transport }
        switch error.code {
        case NSURLErrorCannotConnectToHost, NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed,
             NSURLErrorNotConnectedToInternet, NSURLErrorInternationalRoamingOff, NSURLErrorDataNotAllowed:
            return .cannotConnect
        case NSURLErrorTimedOut:
            return .timedOut
        case NSURLErrorNetworkConnectionLost, NSURLErrorBadServerResponse, NSURLErrorZeroByteResource:
            // libcurl's "Empty reply from server" arrives as BadServerResponse: a closed connection.
            return .connectionLost
        case NSURLErrorHTTPTooManyRedirects, NSURLErrorRedirectToNonExistentLocation:
            return .tooManyRedirects
        case NSURLErrorCancelled:
            return .cancelled
        default:
            return .transport
        }
    }
}

// MARK: - Redirects

/// Keeps credentials on the origin they were meant for (RFC 6454 origin: scheme, host, port).
enum RedirectGuard {
    /// Headers dropped on a cross-origin redirect, besides key-named ones.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }

    static func isCrossOrigin(from original: URL?, to next: URL?) -> Bool {
        guard let a = origin(of: original), let b = origin(of: next) else { return true }
        return a != b
    }

    /// The request without key query parameters and credential headers; nil if its URL
    /// cannot be rebuilt (the redirect is then refused).
    static func strippingCredentials(from request: URLRequest) -> URLRequest? {
        guard let url = request.url, let stripped = strippingKeyParameters(from: url) else { return nil }
        var result = request
        result.url = stripped
        for name in (request.allHTTPHeaderFields ?? [:]).keys where isCredentialHeader(name) {
            result.setValue(nil, forHTTPHeaderField: name)
        }
        return result
    }

    static func isCredentialHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if credentialHeaders.contains(lowered) { return true }
        func squeeze(_ text: String) -> String {
            var text = text.lowercased()
            if text.hasPrefix("x-") { text.removeFirst(2) }
            return text.filter { $0 != "-" && $0 != "_" }
        }
        let squeezed = squeeze(name)
        return Redaction.keyParameterNames.contains { squeeze($0) == squeezed }
    }

    /// The URL with every `Redaction.keyParameterNames` item removed from its query.
    static func strippingKeyParameters(from url: URL) -> URL? {
        let text = url.absoluteString
        let (withoutFragment, fragment) = split(text, at: "#")
        let (base, query) = split(withoutFragment, at: "?")
        guard let query else { return url }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            let rawName = String(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let name = rawName.removingPercentEncoding ?? rawName
            return !Redaction.isKeyParameterName(name)
        }
        var rebuilt = base
        if !kept.isEmpty { rebuilt += "?" + kept.joined(separator: "&") }
        if let fragment { rebuilt += "#" + fragment }
        return URL(string: rebuilt)
    }

    private static func split(_ text: String, at separator: Character) -> (String, String?) {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (String(text[..<index]), String(text[text.index(after: index)...]))
    }
}

// MARK: - Delegate queue

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

// MARK: - Session delegate

/// The session's one delegate: routes each task's callbacks to its `Transfer`.
final class TransferDispatcher: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let transfers = Locked<[Int: Transfer]>([:])

    func register(_ transfer: Transfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    func unregister(_ task: URLSessionTask) {
        _ = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func transfer(for task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @Sendable @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let transfer = transfer(for: dataTask) else {
            Transfer.cancelOffQueue(dataTask)
            completionHandler(.cancel)
            return
        }
        // swift-corelibs-foundation ignores the disposition (see its URLSessionDataDelegate
        // docs); `Transfer` cancels the task itself when it refuses a response.
        completionHandler(transfer.didReceive(response: response))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.didReceive(data: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @Sendable @escaping (URLRequest?) -> Void) {
        // No transfer: the attempt ended (cancelled) and was unregistered. Answering now would
        // crash swift-corelibs-foundation, whose task is no longer waiting for the answer.
        guard let transfer = transfer(for: task) else { return }
        switch transfer.willRedirect(to: request) {
        case .follow(let next):
            completionHandler(next)
        case .stop:
            completionHandler(nil)
        case .abandon:
            return
        }
        transfer.redirectHandedOver()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        transfer(for: task)?.didComplete(error: error)
    }
}
