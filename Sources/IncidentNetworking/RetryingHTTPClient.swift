import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `HTTPClient`: retries, `Retry-After`, the attempt time bound, cancellation and
/// `NetworkEvent`s, over any one-attempt `HTTPTransport`.
///
/// `URLSessionHTTPClient` and `StubHTTPClient` are this type over `URLSessionTransport` and
/// `StubTransport`, so code tested with the stub meets exactly the retry behaviour it gets in
/// production. All settings come from `transport.configuration`.
///
/// Per call: the router's request is built (a failure is `.invalidRequest`, no attempt made),
/// given `userAgent` if it has none, then sent up to `retryPolicy.maxRetries + 1` times:
/// - each attempt is bounded by `attemptTimeout` with a timer of this client, whatever the
///   transport: when it fires, the attempt is cancelled and fails as `.attemptTimedOut`
///   ("the whole response took longer than N s"; not retried, see `NetworkError.Code`);
/// - a failure that `RetryPolicy.shouldRetry` accepts is retried after
///   `RetryPolicy.delay(forRetry:retryAfter:unitRandom:)` seconds (the server's `Retry-After`,
///   capped, or jittered backoff), waited with `configuration.sleep`;
/// - each attempt ends with exactly one `NetworkEvent` to `onEvent` (`done`, `retry(after)`
///   or `giveUp`);
/// - cancelling the calling task ends the call promptly with `.cancelled`, whether it is in an
///   attempt or waiting to retry;
/// - the 2xx body file is handed to the caller's closure and removed afterwards on every path.
///
/// Creating a client removes what killed processes left in its temporary directory
/// (`TemporaryBodies.removeLeftovers(in:)`).
public struct RetryingHTTPClient<Transport: HTTPTransport>: HTTPClient {
    /// The one-attempt transport; its `configuration` is this client's.
    public let transport: Transport
    private let onEvent: @Sendable (NetworkEvent) -> Void

    /// - Parameters:
    ///   - transport: sends each attempt; its configuration sets the policy.
    ///   - onEvent: called once per attempt, from the calling task, with redacted fields.
    public init(transport: Transport, onEvent: @escaping @Sendable (NetworkEvent) -> Void = { _ in }) {
        self.transport = transport
        self.onEvent = onEvent
        TemporaryBodies.removeLeftovers(in: transport.configuration.temporaryDirectory)
    }

    /// The settings this client was made with (`transport.configuration`).
    public var configuration: NetworkConfiguration { transport.configuration }

    public func withResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        try await perform(target, label: label, streaming: false, body)
    }

    /// See ``HTTPClient/withStreamingResponse(for:label:_:)``. The transport hands the response
    /// over at its headers (``HTTPTransport/send(_:for:streaming:)``); the rest of the download
    /// is bounded by what is left of `attemptTimeout` (a timer of this client, off the calling
    /// task, which is busy running `body`), and cancelling the calling task stops it.
    public func withStreamingResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        try await perform(target, label: label, streaming: true, body)
    }

    private func perform<R>(_ target: any Router, label: String, streaming: Bool, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        let configuration = self.configuration
        let method = target.method
        var request = try target.clientRequest(label: label)
        if let userAgent = configuration.userAgent, request.value(forHTTPHeaderField: "User-Agent") == nil {
            request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        }
        if let url = request.url { Redaction.register(passwordIn: url) }
        let urlText = request.url?.absoluteString ?? target.baseURL.absoluteString
        let policy = configuration.retryPolicy

        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled {
                throw NetworkError(code: .cancelled, label: label, method: method, url: urlText, attempts: attempt - 1)
            }
            let started = ContinuousClock.now
            var result = await boundedAttempt(request, for: target, streaming: streaming)
            var streamed: (outcome: Result<R, any Error>, bytes: Int64)?
            var downloadEnded: ContinuousClock.Instant?
            if case .success(let file) = result, let spool = file.spool {
                let elapsed = ContinuousClock.now - started
                let left = configuration.attemptTimeout - (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                switch await readStreamed(file, spool, secondsLeft: left, body) {
                case .ended(let outcome, let bytes):
                    streamed = (outcome, bytes)
                case .downloadFailed(let failure):
                    file.remove()
                    result = .failure(failure)
                }
                // The attempt's duration is the download's, not the reading that outlasts it.
                downloadEnded = spool.endedAt
            }
            let elapsed = (downloadEnded ?? ContinuousClock.now) - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            func event(_ decision: NetworkEvent.Decision, statusCode: Int?, bytes: Int64, error: String?) {
                onEvent(NetworkEvent(label: label, method: method, url: urlText, statusCode: statusCode, bytes: bytes,
                                     durationMilliseconds: milliseconds, attempt: attempt, decision: decision, errorSummary: error))
            }

            if let streamed, case .success(let file) = result {
                event(.done, statusCode: file.statusCode, bytes: streamed.bytes, error: nil)
                file.remove()
                return try streamed.outcome.get()
            }
            switch result {
            case .success(let file):
                event(.done, statusCode: file.statusCode, bytes: file.byteCount, error: nil)
                defer { file.remove() }
                return try body(file)

            case .failure(let failure):
                if policy.shouldRetry(failure.code, method: method, attempt: attempt) {
                    let delay = policy.delay(forRetry: attempt - 1, retryAfter: failure.retryAfter, unitRandom: configuration.random())
                    event(.retry(afterSeconds: delay), statusCode: failure.statusCode, bytes: failure.bytes, error: failure.summary)
                    do {
                        try await configuration.sleep(delay)
                    } catch {
                        throw NetworkError(code: .cancelled, label: label, method: method, url: urlText, statusCode: failure.statusCode,
                                           attempts: attempt, detail: "cancelled while waiting to retry after \(failure.code)")
                    }
                    continue
                }
                event(.giveUp, statusCode: failure.statusCode, bytes: failure.bytes, error: failure.summary)
                throw NetworkError(code: failure.code, label: label, method: method, url: urlText, statusCode: failure.statusCode,
                                   attempts: attempt, retryAfterSeconds: failure.retryAfter, bodyExcerpt: failure.excerpt,
                                   detail: failure.detail)
            }
        }
    }

    private struct DownloadFailedBeforeHandOver: Error {}

    private enum Streamed<R> {
        /// The download completed (the outcome is `body`'s), or `body` ended it with its own
        /// error; with the body bytes received.
        case ended(Result<R, any Error>, bytes: Int64)
        /// The download failed: `body`'s outcome does not count.
        case downloadFailed(AttemptFailure)
    }

    /// Runs `body` on a response whose download goes on (see ``withStreamingResponse(for:label:_:)``),
    /// with the attempt's remaining time and the task's cancellation stopping the download.
    private func readStreamed<R>(_ file: HTTPResponseFile, _ spool: BodySpool, secondsLeft: Double,
                                 _ body: (HTTPResponseFile) throws -> R) async -> Streamed<R> {
        defer { BodySpool.unregister(spool) }
        let limit = configuration.attemptTimeout
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + max(0, min(secondsLeft, NetworkConfiguration.longestWait)))
        timer.setEventHandler {
            spool.abandon(.attemptTimedOut, "the whole response took longer than \(NetworkError.format(limit)) s")
        }
        timer.resume()
        defer { timer.cancel() }
        let start = configuration.streamingStart
        let outcome: Result<R, any Error>
        do {
            outcome = .success(try await withTaskCancellationHandler {
                spool.waitForHandOver(start)
                if case .failed? = spool.ending { throw DownloadFailedBeforeHandOver() }
                return try body(file)
            } onCancel: {
                spool.abandon(.cancelled, "the calling task was cancelled")
            })
        } catch {
            outcome = .failure(error)
        }
        func failed(_ failure: AttemptFailure) -> Streamed<R> {
            guard failure.code == .attemptTimedOut else { return .downloadFailed(failure) }
            var failure = failure
            failure.detail = (failure.detail ?? "") + "; \(failure.bytes) body bytes received"
            return .downloadFailed(failure)
        }
        switch outcome {
        case .failure(let error):
            // A download that failed before `body` gave up is the attempt's failure, whatever
            // `body` made of it; otherwise `body`'s error stands and the download is stopped.
            if case .failed(let failure)? = spool.ending { return failed(failure) }
            spool.abandon(.cancelled, "the reader stopped: \(type(of: error))")
            let received: Int64 = switch spool.waitForEnd() {
            case .complete(let count): count
            case .failed(let failure): failure.bytes
            }
            return .ended(outcome, bytes: received)
        case .success:
            switch spool.waitForEnd() {
            case .complete(let bytes): return .ended(outcome, bytes: bytes)
            case .failed(let failure): return failed(failure)
            }
        }
    }

    private enum Race: Sendable {
        case attempt(Result<HTTPResponseFile, AttemptFailure>)
        case deadline
        case timerCancelled
    }

    /// One attempt of the transport, raced against `attemptTimeout`: when the timer wins, the
    /// attempt is cancelled and its `.cancelled` becomes `.attemptTimedOut`. (An attempt that
    /// completes or fails on its own meanwhile keeps its own result.)
    private func boundedAttempt(_ request: URLRequest, for target: any Router, streaming: Bool) async -> Result<HTTPResponseFile, AttemptFailure> {
        let transport = self.transport
        let limit = configuration.attemptTimeout
        return await withTaskGroup(of: Race.self) { group in
            group.addTask { .attempt(await transport.send(request, for: target, streaming: streaming)) }
            group.addTask {
                do {
                    // Not Task.sleep: cancelled when every attempt ends, it would hold its
                    // memory for the whole limit (see CancellableSleep).
                    try await CancellableSleep.sleep(seconds: min(limit, NetworkConfiguration.longestWait))
                    return .deadline
                } catch {
                    return .timerCancelled
                }
            }
            var deadlinePassed = false
            while let next = await group.next() {
                switch next {
                case .deadline:
                    deadlinePassed = true
                    group.cancelAll()
                case .timerCancelled:
                    continue
                case .attempt(let result):
                    group.cancelAll()
                    guard deadlinePassed, case .failure(let failure) = result, failure.code == .cancelled else { return result }
                    return .failure(AttemptFailure(
                        code: .attemptTimedOut, statusCode: failure.statusCode,
                        detail: "the whole response took longer than \(NetworkError.format(limit)) s; \(failure.bytes) body bytes received",
                        bytes: failure.bytes))
                }
            }
            return .failure(AttemptFailure(code: .transport, detail: "the attempt ended without a result"))
        }
    }
}
