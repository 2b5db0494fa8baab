import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

typealias AttemptResult = Result<HTTPResponseFile, AttemptFailure>

/// The state machine of one `URLSessionTransport` attempt, fed by delegate callbacks (on the
/// session's queue) and the cancellation handler (on another thread); guarded by a lock.
/// The first outcome wins: `finish` resumes the continuation exactly once.
///
/// A 2xx body goes to a `TemporaryBody` created when the response arrives; a non-2xx body is
/// only collected up to `BodyExcerpt.collectLimit` bytes for the error's excerpt.
///
/// Streaming (`streaming: true`): a 2xx response resumes the continuation as soon as its
/// headers arrive, with a body file that is still being written (a `BodySpool`); the rest of
/// the attempt's outcome (complete, cut off, too large, timed out, cancelled) goes to the spool.
final class Transfer: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<AttemptResult, Never>?
        var result: AttemptResult?
        var task: URLSessionTask?
        var response: HTTPURLResponse?
        var body: TemporaryBody?
        /// The body being read while it arrives (streaming, once a 2xx response arrived).
        var spool: BodySpool?
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

    private let directory: URL
    private let originalURL: URL?
    private let isHead: Bool
    private let maxBodyBytes: Int64
    private let maxRedirects: Int
    private let requestTimeout: Double
    private let streaming: Bool
    private let now: @Sendable () -> Date
    private let state = Locked(State())

    /// - Parameters:
    ///   - directory: where a 2xx body file is created.
    ///   - requestTimeout: the idle timeout URLSession applies, for messages.
    ///   - streaming: hand a 2xx body over as soon as its headers arrive (see the type).
    ///   - now: the clock for `Retry-After` dates.
    init(directory: URL, originalURL: URL?, isHead: Bool, maxBodyBytes: Int64, maxRedirects: Int, requestTimeout: Double,
         streaming: Bool = false, now: @escaping @Sendable () -> Date) {
        self.directory = directory
        self.originalURL = originalURL
        self.isHead = isHead
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
        self.requestTimeout = requestTimeout
        self.streaming = streaming
        self.now = now
    }

    /// Resumes the task, unless the attempt already ended (cancelled before it started).
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<AttemptResult, Never>) {
        let earlier: AttemptResult? = state.withLock { state in
            if let result = state.result { return result }
            state.continuation = continuation
            state.task = task
            return nil
        }
        if let earlier {
            task.cancel()
            continuation.resume(returning: earlier)
            return
        }
        task.resume()
    }

    /// Ends the attempt with a failure and cancels the URLSession task.
    func fail(_ code: NetworkError.Code, _ detail: String) {
        finish(cancellingTask: true) { state in
            .failure(AttemptFailure(code: code, statusCode: state.response?.statusCode, detail: detail, bytes: state.bytes))
        }
    }

    /// Decides the result once; a failure removes the body file at once. A body already handed
    /// over (streaming) learns the result through its spool.
    private func finish(cancellingTask: Bool, _ makeResult: (inout State) -> AttemptResult) {
        let ending: (CheckedContinuation<AttemptResult, Never>?, URLSessionTask?, TemporaryBody?, AttemptResult, BodySpool?)? = state.withLock { state in
            guard state.result == nil else { return nil }
            let result = makeResult(&state)
            state.result = result
            var unwanted: TemporaryBody?
            if case .failure = result {
                unwanted = state.body
                state.body = nil
            }
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
            return (continuation, taskToCancel, unwanted, result, state.spool)
        }
        guard let (continuation, taskToCancel, unwanted, result, spool) = ending else { return }
        unwanted?.remove()
        if let taskToCancel { Self.cancelOffQueue(taskToCancel) }
        switch result {
        case .success(let file): spool?.finish(.complete(bytes: file.byteCount))
        case .failure(let failure): spool?.finish(.failed(failure))
        }
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
        var handOver: (CheckedContinuation<AttemptResult, Never>, HTTPResponseFile)?
        let proceed: Bool = state.withLock { state in
            guard state.result == nil else { return false }
            if state.spool != nil {
                // The body was handed over already: another response cannot replace it.
                failure = (.transport, "a second response arrived after the body of the first had begun")
                return false
            }
            state.response = http
            state.bytes = 0
            state.excerpt = Data()
            guard (200...299).contains(http.statusCode) else { return true }
            if let length = Int64(http.value(forHTTPHeaderField: "Content-Length") ?? ""), length > maxBodyBytes {
                failure = (.bodyTooLarge, "Content-Length \(length) exceeds maxBodyBytes \(maxBodyBytes)")
                return false
            }
            do {
                if let body = state.body {
                    try body.truncate()
                } else {
                    state.body = try TemporaryBodies.create(in: directory)
                }
            } catch {
                failure = (.transport, "cannot create the temporary body file in \(directory.path): \(error.localizedDescription)")
                return false
            }
            if streaming, let body = state.body, let continuation = state.continuation {
                let spool = BodySpool(url: body.url) { [weak self] code, detail in self?.fail(code, detail) }
                BodySpool.register(spool)
                state.spool = spool
                state.continuation = nil
                let announced = Self.expectedLength(http, isHead: isHead) ?? 0
                handOver = (continuation, HTTPResponseFile(body: body, spool: spool, statusCode: http.statusCode,
                                                           headers: Self.headers(of: http), byteCount: announced))
            }
            return true
        }
        if let (code, detail) = failure { fail(code, detail) }
        if let (continuation, file) = handOver { continuation.resume(returning: .success(file)) }
        return proceed ? .allow : .cancel
    }

    func didReceive(data: Data) {
        var failure: (NetworkError.Code, String)?
        let written: (spool: BodySpool, bytes: Int64)? = state.withLock { state in
            guard state.result == nil, let response = state.response else { return nil }
            state.bytes += Int64(data.count)
            if (200...299).contains(response.statusCode) {
                if state.bytes > maxBodyBytes {
                    failure = (.bodyTooLarge, "the body exceeds maxBodyBytes \(maxBodyBytes)")
                    return nil
                }
                do {
                    try state.body?.write(data)
                } catch {
                    failure = (.transport, "cannot write the temporary body file: \(error.localizedDescription)")
                }
                return state.spool.map { ($0, state.bytes) }
            } else if state.excerpt.count < BodyExcerpt.collectLimit {
                state.excerpt.append(data.prefix(BodyExcerpt.collectLimit - state.excerpt.count))
            }
            return nil
        }
        if let (code, detail) = failure {
            fail(code, detail)
        } else if let written {
            written.spool.advance(to: written.bytes)
        }
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
                        return failure(.timedOut, "\(idleText) after \(state.bytes) body bytes")
                    }
                    return failure(.bodyTruncated, "received \(state.bytes) bytes\(Self.expectedText(response)): \(message)")
                }
                let code = Self.classify(nsError)
                return failure(code, code == .timedOut ? "\(idleText) before any response" : message)
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
            guard let body = state.body else {
                // A 2xx whose file could not be opened already failed; this is a safety net.
                return failure(.transport, "no body file")
            }
            return .success(HTTPResponseFile(body: body, statusCode: response.statusCode,
                                             headers: Self.headers(of: response), byteCount: state.bytes))
        }
    }

    /// What the idle timeout means, e.g. `no byte for 30 s`.
    private var idleText: String {
        "no byte for \(NetworkError.format(requestTimeout)) s"
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
