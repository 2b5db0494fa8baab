import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `HTTPClient` without sockets, for unit tests of callers (Moya's sample-data stubbing).
///
/// Each call builds the router's request (so router bugs still surface as `.invalidRequest`),
/// asks the `responder` — or, without one, uses `Router.sampleResponse` — and then behaves as
/// `URLSessionHTTPClient` would for that response after its last attempt: a 2xx body is
/// written to a temporary file handed to `body` and removed afterwards; any other status
/// throws `NetworkError` `.unacceptableStatus` with the redacted body excerpt and `Retry-After`.
/// No retries, no delays. Errors thrown by the responder (e.g. a `NetworkError(code: .timedOut,
/// ...)` to simulate a failure) are rethrown unchanged.
public struct StubHTTPClient: HTTPClient {
    /// Answers one call: the router and the request built from it.
    public typealias Responder = @Sendable (_ target: any Router, _ request: URLRequest) throws -> StubResponse

    /// Where bodies are written.
    public let temporaryDirectory: URL
    private let responder: Responder?

    /// - Parameters:
    ///   - responder: answers every call; nil uses each router's `sampleResponse`.
    public init(temporaryDirectory: URL = FileManager.default.temporaryDirectory, responder: Responder? = nil) {
        self.temporaryDirectory = temporaryDirectory
        self.responder = responder
    }

    public func withResponse<R>(for target: any Router, label: String, _ body: (HTTPResponseFile) throws -> R) async throws -> R {
        let method = target.method
        let request = try target.clientRequest(label: label)
        let urlText = request.url?.absoluteString ?? target.baseURL.absoluteString
        if Task.isCancelled {
            throw NetworkError(code: .cancelled, label: label, method: method, url: urlText, attempts: 0)
        }
        let response: StubResponse
        if let responder {
            response = try responder(target, request)
        } else if let sample = target.sampleResponse {
            response = sample
        } else {
            throw NetworkError(code: .invalidRequest, label: label, method: method, url: urlText, attempts: 0,
                               detail: "StubHTTPClient has no responder and the router has no sampleResponse")
        }
        let headers = HeaderFields.lowercased(response.headers)
        guard (200...299).contains(response.statusCode) else {
            throw NetworkError(code: .unacceptableStatus(response.statusCode), label: label, method: method, url: urlText,
                               statusCode: response.statusCode, attempts: 1,
                               retryAfterSeconds: headers["retry-after"].flatMap { RetryAfter.seconds(from: $0, now: Date()) },
                               bodyExcerpt: BodyExcerpt.make(response.body))
        }
        let fileURL = temporaryDirectory.appendingPathComponent("incident-stub-\(UUID().uuidString).body")
        do {
            try response.body.write(to: fileURL)
        } catch {
            throw NetworkError(code: .transport, label: label, method: method, url: urlText, attempts: 1,
                               detail: "cannot write the temporary body file: \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let file = HTTPResponseFile(fileURL: fileURL, statusCode: response.statusCode, headers: headers,
                                    byteCount: Int64(response.body.count))
        return try body(file)
    }
}
