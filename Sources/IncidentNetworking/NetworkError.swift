import Foundation

/// Why `HTTPClient.withResponse` got no usable 2xx response.
///
/// A struct over a private code enum (as async-http-client's `HTTPClientError`), so new codes
/// can be added without breaking callers. Compare codes with the static members:
/// `error.code == .timedOut`, `error.code == .unacceptableStatus(401)`.
///
/// Every text field is redacted (`Redaction`): the URL, the detail, the body excerpt. The
/// underlying Foundation error is not kept, since its `userInfo` holds the unredacted URL.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: Sendable, Hashable {
            case invalidRequest, cannotConnect, connectionLost, timedOut, attemptTimedOut, unacceptableStatus(Int)
            case bodyTruncated, bodyTooLarge, tooManyRedirects, cancelled, transport
        }

        fileprivate let base: Base

        /// The router could not build a request (`URLRequestBuildError`), or a stub had no answer.
        public static let invalidRequest = Code(base: .invalidRequest)
        /// Connection refused, host not found (DNS), or no network. Retried.
        public static let cannotConnect = Code(base: .cannotConnect)
        /// The connection was reset or closed before a response arrived. Retried.
        public static let connectionLost = Code(base: .connectionLost)
        /// The idle timeout: no byte for `NetworkConfiguration.requestTimeout` seconds (the
        /// detail says "no byte for N s"). Retried: a stalled connection is often transient.
        public static let timedOut = Code(base: .timedOut)
        /// The overall bound: the attempt took longer than `NetworkConfiguration.attemptTimeout`
        /// in total, however steadily bytes arrived (the detail says "the whole response took
        /// longer than N s"). Not retried: the bound exists to cap the time one call takes, a
        /// retry would repeat the same slow transfer and multiply that time by up to
        /// `maxRetries + 1`, and the next scheduled poll tries again anyway.
        public static let attemptTimedOut = Code(base: .attemptTimedOut)
        /// A complete response with a status outside 200–299 (after redirects). Retried only for
        /// 408, 429, 500, 502, 503, 504.
        public static func unacceptableStatus(_ status: Int) -> Code { Code(base: .unacceptableStatus(status)) }
        /// The body ended early: fewer bytes than `Content-Length`, or the connection dropped
        /// mid-body. Retried (it is a lost connection).
        public static let bodyTruncated = Code(base: .bodyTruncated)
        /// The body exceeded `NetworkConfiguration.maxBodyBytes`. Not retried.
        public static let bodyTooLarge = Code(base: .bodyTooLarge)
        /// More than `NetworkConfiguration.maxRedirects` redirects. Not retried.
        public static let tooManyRedirects = Code(base: .tooManyRedirects)
        /// The calling task was cancelled. Not retried.
        public static let cancelled = Code(base: .cancelled)
        /// Any other transport problem (TLS, undecodable content encoding, temporary file I/O).
        /// Not retried.
        public static let transport = Code(base: .transport)

        /// Whether `RetryPolicy` may retry this kind of failure (for an idempotent method).
        public var isRetryable: Bool {
            switch base {
            case .cannotConnect, .connectionLost, .timedOut, .bodyTruncated: true
            case .unacceptableStatus(let status): RetryPolicy.retryableStatusCodes.contains(status)
            case .invalidRequest, .attemptTimedOut, .bodyTooLarge, .tooManyRedirects, .cancelled, .transport: false
            }
        }

        public var description: String {
            switch base {
            case .invalidRequest: "invalidRequest"
            case .cannotConnect: "cannotConnect"
            case .connectionLost: "connectionLost"
            case .timedOut: "timedOut"
            case .attemptTimedOut: "attemptTimedOut"
            case .unacceptableStatus(let status): "unacceptableStatus(\(status))"
            case .bodyTruncated: "bodyTruncated"
            case .bodyTooLarge: "bodyTooLarge"
            case .tooManyRedirects: "tooManyRedirects"
            case .cancelled: "cancelled"
            case .transport: "transport"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// The caller's label for the call, e.g. `gits.getIncidentInfo`.
    public let label: String
    /// The request method.
    public let method: HTTPMethod
    /// The request URL, redacted.
    public let redactedURL: String
    /// The HTTP status of the last response, if one arrived.
    public let statusCode: Int?
    /// Attempts made (1 = no retry; 0 = none, e.g. the request could not be built).
    public let attempts: Int
    /// The last response's `Retry-After`, in seconds from when it arrived (RFC 9110 §10.2.3).
    public let retryAfterSeconds: Double?
    /// For `unacceptableStatus`: the first ≤ 4 KiB of the body as UTF-8, redacted, so a caller
    /// can classify provider errors (e.g. HTTP 401 with `"resultCode":"4005"` = invalid key).
    public let bodyExcerpt: String?
    /// A redacted one-line explanation of the underlying problem, if any.
    public let detail: String?

    /// Creates an error; every text argument is redacted here.
    ///
    /// - Parameters:
    ///   - url: the request URL (redacted here).
    public init(
        code: Code,
        label: String,
        method: HTTPMethod,
        url: String,
        statusCode: Int? = nil,
        attempts: Int,
        retryAfterSeconds: Double? = nil,
        bodyExcerpt: String? = nil,
        detail: String? = nil
    ) {
        self.code = code
        self.label = Redaction.redact(label)
        self.method = method
        self.redactedURL = Redaction.redact(url)
        self.statusCode = statusCode
        self.attempts = attempts
        self.retryAfterSeconds = retryAfterSeconds
        self.bodyExcerpt = bodyExcerpt.map(Redaction.redact)
        self.detail = detail.map(Redaction.redact)
    }

    /// One line: the label, why it failed, after how many attempts, what to do, and last the
    /// request (`gits: HTTP 404 Not Found; check the base URL and path; GET https://…`), so
    /// that a line cut at 80 columns still says what is wrong. No secrets.
    public var description: String { description(adding: nil) }

    /// ``description`` with the caller's `advice` (what to change in its own configuration)
    /// after this error's own, still before the request, which stays last.
    public func description(adding advice: String?) -> String {
        var text = "\(label): \(summary)"
        if attempts > 1 { text += " after \(attempts) attempts" }
        if let detail, !detail.isEmpty { text += " (\(detail))" }
        if let retryAfterSeconds { text += "; server asked to retry after \(Self.format(retryAfterSeconds)) s" }
        if let excerpt = bodyExcerpt.map(Self.oneLine), !excerpt.isEmpty {
            text += "; body: \(excerpt)"
        }
        text += "; \(self.advice)"
        if let advice { text += "; \(advice)" }
        text += "; \(method.rawValue) \(redactedURL)"
        return Redaction.redact(Self.flatten(text))
    }

    /// Line breaks become spaces, so the description stays one log line.
    static func flatten(_ text: String) -> String {
        String(text.unicodeScalars.map { CharacterSet.newlines.contains($0) ? " " : Character($0) })
    }

    private var summary: String {
        switch code.base {
        case .invalidRequest: "the request could not be built"
        case .cannotConnect: "could not connect (connection refused, unknown host or no network)"
        case .connectionLost: "the connection was lost before a response arrived"
        case .timedOut, .attemptTimedOut: "timed out"
        case .unacceptableStatus(let status): HTTPStatus.reason(status).isEmpty ? "HTTP \(status)" : "HTTP \(status) \(HTTPStatus.reason(status))"
        case .bodyTruncated: "the response body was cut short"
        case .bodyTooLarge: "the response body is larger than the configured limit"
        case .tooManyRedirects: "too many redirects"
        case .cancelled: "cancelled"
        case .transport: "transport error"
        }
    }

    /// What to do, in this layer's terms; the program adds what to change in its configuration
    /// (``description(adding:)``).
    private var advice: String {
        switch code.base {
        case .invalidRequest: return "fix the router or its configuration"
        case .cannotConnect: return "check the base URL, DNS and network, then retry later"
        case .connectionLost, .bodyTruncated: return "the server or network dropped the connection; retry later"
        case .timedOut: return "the server is slow or unreachable; retry later"
        case .attemptTimedOut: return "the server sends too slowly; retry later"
        case .unacceptableStatus(let status):
            switch status {
            case 401, 403: return "check the API key (expired, unregistered or wrong encoding?)"
            case 404: return "check the base URL and path"
            case 408: return "the server found the request too slow; retry later"
            case 429: return "too many requests: retried with growing delays; the next poll tries again"
            case 500...599: return "the provider has a problem; retry later"
            default: return "check the request against the provider's API guide"
            }
        case .bodyTooLarge: return "narrow the query (the limit is the program's)"
        case .tooManyRedirects: return "check the base URL (redirect loop?)"
        case .cancelled: return "nothing to do (the caller cancelled)"
        case .transport: return "see the detail; retrying will not help until it is fixed"
        }
    }

    private static func oneLine(_ text: String) -> String {
        let flat = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return flat.count > 200 ? String(flat.prefix(200)) + "…" : flat
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.3f", seconds)
    }
}

/// Reason phrases for log text (RFC 9110 §15).
enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 300...399: "Redirection"
        default: ""
        }
    }
}
