/// An HTTP request method (RFC 9110 §9).
public enum HTTPMethod: String, Sendable, Hashable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
    case head = "HEAD"

    /// Whether sending the request twice has the same intended effect as sending it once
    /// (RFC 9110 §9.2.2): GET, HEAD, PUT and DELETE are; POST and PATCH are not.
    /// `RetryPolicy` retries only idempotent requests.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete: true
        case .post, .patch: false
        }
    }
}
