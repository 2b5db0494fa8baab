import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real HTTP client: `RetryingHTTPClient` over `URLSessionTransport`.
public typealias URLSessionHTTPClient = RetryingHTTPClient<URLSessionTransport>

extension RetryingHTTPClient where Transport == URLSessionTransport {
    /// A client over a new `URLSessionTransport`.
    ///
    /// - Parameters:
    ///   - configuration: timeouts, retry policy, limits.
    ///   - onEvent: called once per attempt, from the calling task, with redacted fields.
    public init(configuration: NetworkConfiguration = .init(), onEvent: @escaping @Sendable (NetworkEvent) -> Void = { _ in }) {
        self.init(transport: URLSessionTransport(configuration: configuration), onEvent: onEvent)
    }
}

/// One HTTP attempt over one `URLSession` (libcurl on Linux), with a redirect guard and the
/// body streamed to disk. Retries, the attempt bound and events are `RetryingHTTPClient`'s.
///
/// Each attempt
/// - streams a 2xx body into a new file in `temporaryDirectory` (`TemporaryBodies`), handed to
///   the caller when complete, or at once with its headers for `withStreamingResponse` (the
///   caller reads the file as it grows, `ResponseBodyReader`), through a
///   data delegate whose queue applies backpressure (`BoundedDelegateQueue`), so at most a few
///   16 KiB chunks of a body are ever in memory, whatever its size; gzip/deflate bodies are
///   decoded by libcurl (the file holds the decoded bytes);
/// - checks the received size against `Content-Length` when the body was not content-encoded,
///   so a body cut short is `bodyTruncated`, never a short success;
/// - follows up to `maxRedirects` redirects; a redirect to another origin (scheme, host or
///   port differ from the original request) is followed only after removing every registered
///   key parameter (`Redaction.register(keyParameterName:)`) from its query and the
///   `Authorization`, `Proxy-Authorization`, `Cookie` and key-named headers (`RedirectGuard`),
///   so a key never leaves the host it was meant for;
/// - ends promptly with `.cancelled` when the calling task is cancelled (the URLSession task
///   is cancelled).
///
/// Why a data delegate rather than the async `download(for:)` (which, checked on Linux,
/// does honour task cancellation): the delegate sees every byte, so the transport can enforce
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
/// seconds: see `NetworkConfiguration.effectiveRequestTimeout`). The overall bound,
/// `attemptTimeout`, is `RetryingHTTPClient`'s timer, which cancels the attempt; the session's
/// own resource timeout is left at its default (7 days) and never relied on.
///
/// Known limit (swift-corelibs-foundation): if the session's delegate queue is starved for
/// longer than the request timeout exactly while a redirect answer is pending, corelibs' own
/// timer completes the task behind our back and our answer then traps inside Foundation. The
/// delegate answers at once, so this needs a stall of ≥ 1 s; cancellation during redirects is
/// handled (see `Transfer`).
public final class URLSessionTransport: HTTPTransport {
    public let configuration: NetworkConfiguration
    private let session: URLSession
    private let dispatcher: TransferDispatcher

    public init(configuration: NetworkConfiguration = .init()) {
        self.configuration = configuration
        let dispatcher = TransferDispatcher()
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.effectiveRequestTimeout
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        let queue = BoundedDelegateQueue(name: "IncidentNetworking.URLSessionTransport")
        self.session = URLSession(configuration: sessionConfiguration, delegate: dispatcher, delegateQueue: queue)
        self.dispatcher = dispatcher
    }

    /// The session's delegate queue (a `BoundedDelegateQueue`), for tests.
    var delegateQueue: OperationQueue { session.delegateQueue }

    deinit {
        // Not invalidateAndCancel: cancelling a task that awaits a redirect answer crashes
        // swift-corelibs-foundation. Every attempt has ended its task by now anyway.
        session.finishTasksAndInvalidate()
    }

    /// One attempt: a data task whose delegate callbacks feed a `Transfer`.
    public func send(_ request: URLRequest, for target: any Router) async -> Result<HTTPResponseFile, AttemptFailure> {
        await send(request, for: target, streaming: false)
    }

    /// One attempt; with `streaming`, a 2xx response is returned at its headers and its body
    /// goes on into the file (see `Transfer`).
    public func send(_ request: URLRequest, for target: any Router, streaming: Bool) async -> Result<HTTPResponseFile, AttemptFailure> {
        if let failure = Libcurl.loadFailure() { return .failure(AttemptFailure(code: .transport, detail: failure)) }
        var request = request
        request.timeoutInterval = configuration.effectiveRequestTimeout
        let transfer = Transfer(
            directory: configuration.temporaryDirectory,
            originalURL: request.url,
            isHead: request.httpMethod == HTTPMethod.head.rawValue,
            maxBodyBytes: configuration.maxBodyBytes,
            maxRedirects: configuration.maxRedirects,
            requestTimeout: configuration.effectiveRequestTimeout,
            streaming: streaming,
            now: configuration.now
        )
        let task = session.dataTask(with: request)
        dispatcher.register(transfer, for: task)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AttemptResult, Never>) in
                transfer.start(task, continuation: continuation)
            }
        } onCancel: {
            transfer.fail(.cancelled, "the calling task was cancelled")
        }
        // A body handed over at its headers still arrives: its transfer stays registered until
        // the task completes (the dispatcher unregisters it then).
        if case .success(let file) = result, file.spool != nil { return result }
        dispatcher.unregister(task)
        return result
    }
}

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
        unregister(task)
    }
}
