import Foundation

/// Settings of an HTTP client (`RetryingHTTPClient` and its transport). All durations are in
/// seconds.
public struct NetworkConfiguration: Sendable {
    /// The idle timeout: the longest wait for the response to start or for the next body
    /// bytes (`URLRequest.timeoutInterval`, which libcurl-backed URLSession on Linux treats as
    /// "no bytes for this long", checked against a server that never answers). Fails the
    /// attempt with `NetworkError.Code.timedOut` ("no byte for N s"). Default 30 s. Applied in
    /// whole seconds, rounded up, at least 1 s: see `effectiveRequestTimeout`.
    public var requestTimeout: Double
    /// The overall bound of one attempt: connecting, waiting, redirects and the whole body,
    /// however steadily bytes arrive (a server trickling one byte a second never trips the
    /// idle timeout). Enforced by `RetryingHTTPClient`'s own timer for every transport (not by
    /// URLSession's resource timeout); fails the attempt with `.attemptTimedOut` ("the whole
    /// response took longer than N s"), which is not retried. Default 300 s.
    public var attemptTimeout: Double
    /// When and how to retry. Default `RetryPolicy.default`.
    public var retryPolicy: RetryPolicy
    /// The largest body accepted, in bytes (after decoding gzip); larger is
    /// `NetworkError.bodyTooLarge`. Default 1 GiB.
    public var maxBodyBytes: Int64
    /// Redirects followed per attempt; one more is `NetworkError.tooManyRedirects`. Default 5.
    public var maxRedirects: Int
    /// Where response bodies are streamed (see `TemporaryBodies`). Default: the system
    /// temporary directory.
    public var temporaryDirectory: URL
    /// A `User-Agent` for requests whose router sets none; nil keeps the transport's own.
    public var userAgent: String?
    /// Sleeps between attempts; injectable so tests can record the schedule instead of waiting.
    /// Throwing (e.g. `CancellationError`) ends the call with `NetworkError.cancelled`.
    public var sleep: @Sendable (_ seconds: Double) async throws -> Void
    /// A uniform random number in `[0, 1]` for jitter; injectable for deterministic tests.
    public var random: @Sendable () -> Double
    /// The current time, to turn an HTTP-date `Retry-After` into seconds.
    public var now: @Sendable () -> Date
    /// When `HTTPClient.withStreamingResponse` hands a body over while it still arrives.
    /// Default ``StreamingStart/default``.
    public var streamingStart: StreamingStart = .default

    /// Out-of-range values are clamped: `maxRedirects` to ≥ 0, `attemptTimeout` to ≥ 0.
    public init(
        requestTimeout: Double = 30,
        attemptTimeout: Double = 300,
        retryPolicy: RetryPolicy = .default,
        maxBodyBytes: Int64 = 1 << 30,
        maxRedirects: Int = 5,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory,
        userAgent: String? = nil,
        sleep: @escaping @Sendable (_ seconds: Double) async throws -> Void = NetworkConfiguration.taskSleep,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.requestTimeout = requestTimeout
        self.attemptTimeout = attemptTimeout.isNaN ? 0 : max(0, attemptTimeout)
        self.retryPolicy = retryPolicy
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = max(0, maxRedirects)
        self.temporaryDirectory = temporaryDirectory
        self.userAgent = userAgent
        self.sleep = sleep
        self.random = random
        self.now = now
    }

    /// The longest single wait this module schedules (one day): longer or infinite settings
    /// are cut to it.
    static let longestWait: Double = 86_400

    /// `requestTimeout` as URLSession applies it: rounded up to whole seconds, at least 1 s.
    /// swift-corelibs-foundation truncates `timeoutInterval` to whole seconds (`Int(t) * 1000`
    /// ms), so 0.5 s would become an immediate timeout and 1.5 s would become 1 s.
    var effectiveRequestTimeout: Double {
        guard requestTimeout.isFinite else { return Self.longestWait }
        return max(1, requestTimeout.rounded(.up))
    }

    /// The default sleep: ``CancellableSleep``, which throws `CancellationError` when cancelled
    /// and then frees its timer at once.
    public static func taskSleep(_ seconds: Double) async throws {
        try await CancellableSleep.sleep(seconds: min(seconds, longestWait))
    }
}

/// One attempt of one call, reported to `RetryingHTTPClient`'s `onEvent` (one event per
/// attempt, after the attempt ends and the decision is made). Every text field is redacted.
public struct NetworkEvent: Sendable, Equatable, CustomStringConvertible {
    /// What the client does after this attempt.
    public enum Decision: Sendable, Equatable, CustomStringConvertible {
        /// The attempt succeeded; the body goes to the caller.
        case done
        /// The attempt failed and will be retried after this many seconds.
        case retry(afterSeconds: Double)
        /// The attempt failed and the call ends with a `NetworkError`.
        case giveUp

        public var description: String {
            switch self {
            case .done: "done"
            case .retry(let seconds): "retry(\(NetworkError.format((seconds * 1000).rounded() / 1000)))"
            case .giveUp: "giveUp"
            }
        }
    }

    /// The caller's label, e.g. `gits.getIncidentInfo`.
    public let label: String
    /// The request method.
    public let method: HTTPMethod
    /// The request URL, redacted.
    public let redactedURL: String
    /// The response status, if one arrived.
    public let statusCode: Int?
    /// Body bytes received in this attempt.
    public let bytes: Int64
    /// Wall time of the attempt, in milliseconds.
    public let durationMilliseconds: Int
    /// The attempt number, 1-based.
    public let attempt: Int
    /// What happens next.
    public let decision: Decision
    /// The failure, as `NetworkError.Code` plus a redacted detail; nil on success.
    public let errorSummary: String?

    public init(
        label: String, method: HTTPMethod, url: String, statusCode: Int?, bytes: Int64,
        durationMilliseconds: Int, attempt: Int, decision: Decision, errorSummary: String?
    ) {
        self.label = Redaction.redact(label)
        self.method = method
        self.redactedURL = Redaction.redact(url)
        self.statusCode = statusCode
        self.bytes = bytes
        self.durationMilliseconds = durationMilliseconds
        self.attempt = attempt
        self.decision = decision
        self.errorSummary = errorSummary.map(Redaction.redact)
    }

    /// One logfmt line, e.g.
    /// `event=http label=gits method=GET url="http://h/p?serviceKey=REDACTED" status=503 bytes=0 ms=12 attempt=1 decision=retry(0.25) error="unacceptableStatus(503)"`.
    public var description: String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: " ") + "\""
        }
        var parts = ["event=http", "label=\(quoted(label))", "method=\(method.rawValue)", "url=\(quoted(redactedURL))"]
        if let statusCode { parts.append("status=\(statusCode)") }
        parts.append(contentsOf: ["bytes=\(bytes)", "ms=\(durationMilliseconds)", "attempt=\(attempt)", "decision=\(decision)"])
        if let errorSummary { parts.append("error=\(quoted(errorSummary))") }
        return Redaction.redact(parts.joined(separator: " "))
    }
}

/// When `HTTPClient.withStreamingResponse` hands a body over before all of it has arrived.
///
/// Reading a body while it downloads pays only when the network keeps ahead of the reader, and
/// the reader holds what it holds for as long as it reads (a poll holds the database's write
/// transaction, which other sources' polls, lease renewals and `prune` wait for, at most 10 s).
/// So a body is handed over early only once `bytes` of it arrived at `bytesPerSecond` or
/// faster, measured from its headers; a smaller or slower body is handed over complete, exactly
/// as without streaming, and its reader holds nothing while it downloads.
public struct StreamingStart: Sendable, Equatable {
    /// Bytes that must have arrived first.
    public var bytes: Int64
    /// The rate they must have arrived at, in bytes per second since the headers.
    public var bytesPerSecond: Double

    public init(bytes: Int64, bytesPerSecond: Double) {
        self.bytes = bytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// 1 MiB at 32 MiB/s or faster: faster than the feed readers store records (`ingest --file`
    /// stored a 59 MB GITS feed in 4.1 s here, 14.5 MB/s), so a reader handed such a body rarely
    /// waits for the network; bodies under 1 MiB (about 1,700 GITS records) are read once
    /// complete.
    public static let `default` = StreamingStart(bytes: 1 << 20, bytesPerSecond: 32 * 1024 * 1024)

    /// At the headers, whatever follows.
    public static let immediately = StreamingStart(bytes: 0, bytesPerSecond: 0)
}
