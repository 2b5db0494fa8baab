/// Why `Router.asURLRequest()` could not build a request. Its text names the problem and the
/// fix, and never holds a secret (URLs are redacted, values are not quoted).
public struct URLRequestBuildError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem. Compare with the static members, e.g. `error.code == .invalidBaseURL`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidBaseURL, invalidPath, invalidHeader
        }

        private let base: Base

        /// The base URL is not absolute `http`/`https` with a host.
        public static let invalidBaseURL = Code(base: .invalidBaseURL)
        /// The path holds `?` or `#`, or the joined URL is not valid.
        public static let invalidPath = Code(base: .invalidPath)
        /// A header name is not an RFC 9110 token, or a value holds CR, LF or NUL.
        public static let invalidHeader = Code(base: .invalidHeader)

        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// A redacted, one-line explanation.
    public let detail: String

    init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = Redaction.redact(detail)
    }

    /// One line.
    public var description: String {
        NetworkError.flatten("cannot build the HTTP request (\(code)): \(detail)")
    }
}
