import IncidentCore
import IncidentNetworking

/// Why a feed's response could not be turned into incidents. Nothing is stored for it.
///
/// `description` is one line that names the provider, what failed and what to do; it never
/// contains an API key (it passes through ``Redaction/redact(_:)``).
public struct FeedError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The provider's own envelope reports an error (GITS `headerCd` ≠ 0, ITS `resultCode`).
        case apiError = "api_error"
        /// The data.go.kr gateway answered instead of the API (`OpenAPI_ServiceResponse`).
        case gatewayError = "gateway_error"
        /// The key was refused (ITS HTTP 401 / 4005, gateway 30).
        case invalidKey = "invalid_key"
        /// The daily request quota is used up (gateway 22, HTTP 429 past the retries).
        case quotaExceeded = "quota_exceeded"
        /// The body is not what this provider sends (an HTML error page, another document).
        case unexpectedResponse = "unexpected_response"
        /// The body is malformed or truncated XML/JSON.
        case malformedBody = "malformed_body"
        /// A record lacks its id or holds a value that cannot be read.
        case invalidRecord = "invalid_record"
        /// A file given to `ingest --file` cannot be read.
        case unreadableFile = "unreadable_file"
        /// A source's options are wrong for its provider.
        case configuration = "configuration"
        /// A source that is polled over HTTP has no API key.
        case missingKey = "missing_key"
    }

    public var kind: Kind
    /// Who the error is about: the provider's name where it is raised; a live poll puts its
    /// source's name here (`its-seoul`), which ``description`` leads with.
    public var provider: String
    /// The provider's code for the error (`headerCd`, `resultCode`, `returnReasonCode`).
    public var code: String?
    public var message: String
    /// For `quotaExceeded`: the provider's `Retry-After`, in seconds, when it gave one.
    public var retryAfterSeconds: Double?

    public init(_ kind: Kind, provider: String, code: String? = nil, message: String, retryAfterSeconds: Double? = nil) {
        self.kind = kind
        self.provider = provider
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String {
        Redaction.redact("\(provider): \(message)")
    }
}

extension FeedError: QuotaExhaustion {
    /// The longest a quota error can keep a source from running: a day, which covers a daily
    /// quota, so that a server's absurd `Retry-After` cannot switch a source off for years.
    public static let maxQuotaPauseSeconds: Int64 = 86_400

    /// For `quotaExceeded`: after the provider's `Retry-After` when it gave one (at most a day),
    /// else at the next midnight in Korea, when the daily quotas of Korean public APIs reset.
    public func quotaResumesAt(failedAt: UTCInstant) -> UTCInstant? {
        guard kind == .quotaExceeded else { return nil }
        if let retryAfterSeconds, retryAfterSeconds.isFinite {
            let seconds = min(Double(Self.maxQuotaPauseSeconds), max(0, retryAfterSeconds)).rounded(.up)
            return failedAt.adding(seconds: Int64(seconds))
        }
        return failedAt.nextKoreaMidnight
    }
}
