import Foundation

/// When and how long to wait before retrying a failed request.
///
/// Defaults: up to 3 retries (4 attempts), exponential backoff from 0.5 s doubling to at most
/// 8 s, **full jitter** (the delay before retry *n*, counted from 0, is uniform in
/// `[0, min(maxDelay, baseDelay · factorⁿ)]`, as in AWS's "Exponential Backoff and Jitter"),
/// and a server's `Retry-After` honoured but capped at 60 s.
///
/// What is retried: only idempotent methods (RFC 9110 §9.2.2: GET, HEAD, PUT, DELETE), and
/// only failures whose `NetworkError.Code.isRetryable` is true: connection refused / reset /
/// lost, DNS failure, the idle timeout, a body cut short, and HTTP 408, 429, 500, 502, 503, 504.
/// Never: other statuses, cancellation, the attempt bound (`attemptTimedOut`), too many
/// redirects, a body too large or undecodable.
///
/// When a retryable response carries `Retry-After` (delta-seconds or an HTTP-date, RFC 9110
/// §10.2.3), the delay is exactly that, capped at `maxRetryAfter`; backoff is not added.
///
/// All durations are in seconds.
public struct RetryPolicy: Sendable, Equatable {
    /// How a backoff delay is randomized below its ceiling.
    public enum Jitter: String, Sendable, Equatable, Codable, CaseIterable {
        /// Exactly the ceiling (deterministic; for tests or single clients).
        case none
        /// Uniform in `[0, ceiling]` (the default; best at spreading out many clients).
        case full
        /// Uniform in `[ceiling/2, ceiling]`.
        case equal
    }

    /// HTTP statuses worth retrying: 408, 429, 500, 502, 503, 504 (RFC 9110 §15, RFC 6585 §4).
    public static let retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Retries after the first attempt; 0 disables retrying.
    public var maxRetries: Int
    /// The backoff ceiling before the first retry, in seconds.
    public var baseDelay: Double
    /// The ceiling's growth per retry.
    public var factor: Double
    /// The largest backoff ceiling, in seconds.
    public var maxDelay: Double
    /// How the delay is drawn below the ceiling.
    public var jitter: Jitter
    /// The longest `Retry-After` wait honoured, in seconds; longer requests are cut to this.
    public var maxRetryAfter: Double

    /// Out-of-range values are clamped: counts and durations to ≥ 0, `factor` to ≥ 1.
    public init(
        maxRetries: Int = 3,
        baseDelay: Double = 0.5,
        factor: Double = 2,
        maxDelay: Double = 8,
        jitter: Jitter = .full,
        maxRetryAfter: Double = 60
    ) {
        self.maxRetries = max(0, maxRetries)
        self.baseDelay = max(0, baseDelay)
        self.factor = max(1, factor)
        self.maxDelay = max(0, maxDelay)
        self.jitter = jitter
        self.maxRetryAfter = max(0, maxRetryAfter)
    }

    /// The defaults described on the type.
    public static let `default` = RetryPolicy()

    /// The backoff ceiling before retry `retry` (0 = the first retry), in seconds:
    /// `min(maxDelay, baseDelay · factor^retry)`.
    func backoffCeiling(forRetry retry: Int) -> Double {
        let exponent = Double(max(0, retry))
        let grown = baseDelay * pow(factor, exponent)
        return grown.isFinite ? min(maxDelay, grown) : maxDelay
    }

    /// The delay before retry `retry` (0 = the first retry), in seconds.
    ///
    /// - Parameters:
    ///   - retryAfter: the server's `Retry-After` in seconds, if it sent one.
    ///   - unitRandom: a number in `[0, 1]` (clamped), the jitter's randomness.
    public func delay(forRetry retry: Int, retryAfter: Double?, unitRandom: Double) -> Double {
        if let retryAfter {
            return min(max(0, retryAfter), maxRetryAfter)
        }
        let ceiling = backoffCeiling(forRetry: retry)
        let random = min(1, max(0, unitRandom.isFinite ? unitRandom : 0))
        switch jitter {
        case .none: return ceiling
        case .full: return ceiling * random
        case .equal: return ceiling / 2 + ceiling / 2 * random
        }
    }

    /// Whether a failure on attempt `attempt` (1-based) may be retried.
    public func shouldRetry(_ code: NetworkError.Code, method: HTTPMethod, attempt: Int) -> Bool {
        code.isRetryable && method.isIdempotent && attempt <= maxRetries
    }
}

/// Parses the `Retry-After` header (RFC 9110 §10.2.3).
enum RetryAfter {
    /// Seconds to wait, from `value` received at `now`.
    ///
    /// - `delta-seconds` (`"120"`) → 120.
    /// - an HTTP-date in any of the three formats a recipient must accept (RFC 9110 §5.6.7):
    ///   IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, obsolete RFC 850
    ///   `Sunday, 06-Nov-94 08:49:37 GMT`, asctime `Sun Nov  6 08:49:37 1994` → seconds from
    ///   `now`, 0 when the date is past.
    /// - anything else → nil (ignored).
    static func seconds(from value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return Double(text)
        }
        let squeezed = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: squeezed) {
                return max(0, date.timeIntervalSince(now))
            }
        }
        return nil
    }
}
