import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request exactly once: no retries, no waiting, no events.
///
/// `RetryingHTTPClient` adds the retry policy, `Retry-After`, the attempt time bound,
/// cancellation and `NetworkEvent`s on top of any transport, so every transport is retried the
/// same way. Implementations: `URLSessionTransport` (real HTTP) and `StubTransport` (scripted
/// outcomes and `Router.sampleResponse`, for unit tests).
public protocol HTTPTransport: Sendable {
    /// The settings of the whole client: the transport applies its own (timeouts, limits,
    /// temporary directory); `RetryingHTTPClient` reads the rest (retry policy, attempt bound,
    /// user agent, sleep, random) from here, so one configuration describes one client.
    var configuration: NetworkConfiguration { get }

    /// Sends `request` once.
    ///
    /// - Parameters:
    ///   - request: the request, already built from `target` (method, URL, headers).
    ///   - target: the router it was built from (a stub answers with its `sampleResponse`).
    /// - Returns: on a complete 2xx response, its body in a new file in
    ///   `configuration.temporaryDirectory` (named and locked by `TemporaryBodies`), which the
    ///   caller removes; otherwise an `AttemptFailure`, and no file remains.
    ///
    /// Cancelling the calling task must end the attempt promptly (well within a second) with
    /// code `.cancelled`: that is also how `RetryingHTTPClient` enforces `attemptTimeout`.
    func send(_ request: URLRequest, for target: any Router) async -> Result<HTTPResponseFile, AttemptFailure>

    /// Sends `request` once; with `streaming`, a transport that can returns a 2xx response as
    /// soon as its headers arrive, its body file still being written (`HTTPResponseFile.spool`
    /// says how the download ends). Default: ``send(_:for:)`` (the whole body first).
    func send(_ request: URLRequest, for target: any Router, streaming: Bool) async -> Result<HTTPResponseFile, AttemptFailure>
}

extension HTTPTransport {
    public func send(_ request: URLRequest, for target: any Router, streaming: Bool) async -> Result<HTTPResponseFile, AttemptFailure> {
        await send(request, for: target)
    }
}

/// Why one attempt got no usable 2xx response. `RetryingHTTPClient` decides from it whether
/// to retry, and turns the last one into a `NetworkError`.
public struct AttemptFailure: Error, Sendable, Equatable {
    /// The kind of failure.
    public var code: NetworkError.Code
    /// The status of the response, if one arrived.
    public var statusCode: Int?
    /// The response's `Retry-After`, in seconds from when it arrived (RFC 9110 §10.2.3).
    public var retryAfter: Double?
    /// The first bytes of a non-2xx body, redacted (`NetworkError.bodyExcerpt`).
    public var excerpt: String?
    /// A one-line explanation (redacted when it becomes a `NetworkError`).
    public var detail: String?
    /// Body bytes received in this attempt.
    public var bytes: Int64

    public init(code: NetworkError.Code, statusCode: Int? = nil, retryAfter: Double? = nil, excerpt: String? = nil,
                detail: String? = nil, bytes: Int64 = 0) {
        self.code = code
        self.statusCode = statusCode
        self.retryAfter = retryAfter
        self.excerpt = excerpt
        self.detail = detail
        self.bytes = bytes
    }

    /// `code: detail`, as `NetworkEvent.errorSummary` shows it.
    var summary: String {
        detail.map { "\(code): \($0)" } ?? "\(code)"
    }
}
