import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client for unit tests of callers: `RetryingHTTPClient` over `StubTransport`, so a
/// stubbed call is retried, waited on, bounded and cancelled exactly as a real one.
public typealias StubHTTPClient = RetryingHTTPClient<StubTransport>

extension RetryingHTTPClient where Transport == StubTransport {
    /// A client whose every attempt asks `responder` (nil: each router's `sampleResponse`).
    ///
    /// - Parameter configuration: default `StubTransport.defaultConfiguration` (no waiting
    ///   between retries).
    public init(configuration: NetworkConfiguration = StubTransport.defaultConfiguration, responder: StubTransport.Responder? = nil) {
        self.init(transport: StubTransport(configuration: configuration, responder: responder))
    }

    /// A client whose attempts take the outcomes of `script` in order; the last one repeats.
    public init(configuration: NetworkConfiguration = StubTransport.defaultConfiguration, script: [StubOutcome]) {
        self.init(transport: StubTransport(configuration: configuration, script: script))
    }
}

/// What one stubbed attempt does.
public enum StubOutcome: Sendable, Hashable {
    /// A complete response: 2xx hands its body to the caller; any other status fails as
    /// `.unacceptableStatus` with its `Retry-After` and redacted body excerpt.
    case response(StubResponse)
    /// A failure without a response, e.g. `.timedOut`, `.cannotConnect`, `.connectionLost`.
    case failure(NetworkError.Code, detail: String? = nil)
    /// No answer at all until the attempt is cancelled (by the caller, or by the attempt
    /// bound): a server that hangs.
    case hang
}

/// A canned response: Moya's `sampleData`, with a status and headers.
public struct StubResponse: Sendable, Hashable {
    /// The HTTP status.
    public var statusCode: Int
    /// Response headers, any case.
    public var headers: [String: String]
    /// The body bytes.
    public var body: Data

    public init(statusCode: Int = 200, headers: [String: String] = [:], body: Data) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text` in UTF-8.
    public init(statusCode: Int = 200, headers: [String: String] = [:], text: String) {
        self.init(statusCode: statusCode, headers: headers, body: Data(text.utf8))
    }
}

/// An `HTTPTransport` without sockets (Moya's sample-data stubbing): each attempt's outcome
/// comes from a responder, a script, or the router's `sampleResponse`, and is turned into
/// what `URLSessionTransport` would return for it: a 2xx body in a `TemporaryBodies` file (over
/// `maxBodyBytes` is `.bodyTooLarge`), any other status `.unacceptableStatus` with its
/// `Retry-After` (read with `configuration.now`) and excerpt. A task cancelled before or during
/// the attempt gets `.cancelled`. A router without `sampleResponse` and no responder is
/// `.invalidRequest`.
public struct StubTransport: HTTPTransport {
    /// Answers one attempt: the router and the request built from it.
    public typealias Responder = @Sendable (_ target: any Router, _ request: URLRequest) -> StubOutcome

    /// `NetworkConfiguration()` whose waits between retries are skipped (a cancelled task
    /// still stops there), so a retried stub call costs no time. Give a configuration with a
    /// recording `sleep` to assert on the schedule.
    public static let defaultConfiguration = NetworkConfiguration(sleep: { _ in try Task.checkCancellation() })

    public let configuration: NetworkConfiguration
    private let responder: Responder?

    /// - Parameter responder: answers every attempt; nil uses each router's `sampleResponse`.
    public init(configuration: NetworkConfiguration = StubTransport.defaultConfiguration, responder: Responder? = nil) {
        self.configuration = configuration
        self.responder = responder
    }

    /// Attempts take the outcomes of `script` in order (across calls); the last one repeats.
    /// An empty script answers with each router's `sampleResponse`.
    public init(configuration: NetworkConfiguration = StubTransport.defaultConfiguration, script: [StubOutcome]) {
        guard let last = script.last else {
            self.init(configuration: configuration, responder: nil)
            return
        }
        let next = Locked(0)
        self.init(configuration: configuration) { _, _ in
            let index = next.withLock { index in
                defer { index += 1 }
                return index
            }
            return index < script.count ? script[index] : last
        }
    }

    public func send(_ request: URLRequest, for target: any Router) async -> Result<HTTPResponseFile, AttemptFailure> {
        let cancelled = AttemptFailure(code: .cancelled, detail: "the calling task was cancelled")
        if Task.isCancelled { return .failure(cancelled) }
        let outcome: StubOutcome
        if let responder {
            outcome = responder(target, request)
        } else if let sample = target.sampleResponse {
            outcome = .response(sample)
        } else {
            return .failure(AttemptFailure(code: .invalidRequest,
                                           detail: "StubTransport has no responder and the router has no sampleResponse"))
        }
        switch outcome {
        case .failure(let code, let detail):
            return .failure(AttemptFailure(code: code, detail: detail ?? "simulated by StubTransport"))
        case .hang:
            try? await Task.sleep(for: .seconds(NetworkConfiguration.longestWait))
            return .failure(cancelled)
        case .response(let response):
            return answer(response)
        }
    }

    private func answer(_ response: StubResponse) -> Result<HTTPResponseFile, AttemptFailure> {
        let headers = HeaderFields.lowercased(response.headers)
        let bytes = Int64(response.body.count)
        guard (200...299).contains(response.statusCode) else {
            return .failure(AttemptFailure(code: .unacceptableStatus(response.statusCode), statusCode: response.statusCode,
                                           retryAfter: headers["retry-after"].flatMap { RetryAfter.seconds(from: $0, now: configuration.now()) },
                                           excerpt: BodyExcerpt.make(response.body), bytes: bytes))
        }
        guard bytes <= configuration.maxBodyBytes else {
            return .failure(AttemptFailure(code: .bodyTooLarge, statusCode: response.statusCode,
                                           detail: "the body exceeds maxBodyBytes \(configuration.maxBodyBytes)", bytes: bytes))
        }
        do {
            let body = try TemporaryBodies.create(in: configuration.temporaryDirectory)
            do {
                try body.write(response.body)
            } catch {
                body.remove()
                throw error
            }
            return .success(HTTPResponseFile(body: body, statusCode: response.statusCode, headers: headers, byteCount: bytes))
        } catch {
            return .failure(AttemptFailure(code: .transport, statusCode: response.statusCode,
                                           detail: "cannot write the temporary body file in \(configuration.temporaryDirectory.path): \(error.localizedDescription)"))
        }
    }
}
