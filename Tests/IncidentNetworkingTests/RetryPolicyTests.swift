import Foundation
import TestSupport
import Testing
@testable import IncidentNetworking

@Suite("Retry policy and Retry-After")
struct RetryPolicyTests {
    @Test("Defaults: 3 retries, 0.5 s doubling to 8 s, full jitter, Retry-After capped at 60 s")
    func defaults() {
        let policy = RetryPolicy()
        #expect(policy == .default)
        #expect(policy.maxRetries == 3)
        #expect(policy.baseDelay == 0.5)
        #expect(policy.factor == 2)
        #expect(policy.maxDelay == 8)
        #expect(policy.jitter == .full)
        #expect(policy.maxRetryAfter == 60)
        #expect((0..<7).map(policy.backoffCeiling(forRetry:)) == [0.5, 1, 2, 4, 8, 8, 8])
        #expect(RetryPolicy.retryableStatusCodes == [408, 429, 500, 502, 503, 504])
        let configuration = NetworkConfiguration()
        #expect(configuration.requestTimeout == 30)
        #expect(configuration.attemptTimeout == 300)
        #expect(configuration.maxBodyBytes == 1 << 30)
        #expect(configuration.maxRedirects == 5)
        #expect(configuration.effectiveRequestTimeout == 30)
    }

    @Test("The request timeout is applied in whole seconds, rounded up, at least 1 s (corelibs truncates)")
    func effectiveTimeout() {
        #expect(NetworkConfiguration(requestTimeout: 0.5).effectiveRequestTimeout == 1)
        #expect(NetworkConfiguration(requestTimeout: 0).effectiveRequestTimeout == 1)
        #expect(NetworkConfiguration(requestTimeout: 1.5).effectiveRequestTimeout == 2)
        #expect(NetworkConfiguration(requestTimeout: 7).effectiveRequestTimeout == 7)
    }

    @Test("Full jitter: every delay is within [0, min(maxDelay, base·factorⁿ)]")
    func fullJitterBounds() {
        let policy = RetryPolicy()
        var generator = SeededGenerator(seed: 42)
        for retry in 0..<10 {
            let ceiling = min(8, 0.5 * pow(2, Double(retry)))
            for _ in 0..<200 {
                let delay = policy.delay(forRetry: retry, retryAfter: nil, unitRandom: Double.random(in: 0...1, using: &generator))
                #expect(delay >= 0 && delay <= ceiling)
            }
            #expect(policy.delay(forRetry: retry, retryAfter: nil, unitRandom: 0) == 0)
            #expect(policy.delay(forRetry: retry, retryAfter: nil, unitRandom: 1) == ceiling)
        }
    }

    @Test("Equal jitter stays in [ceiling/2, ceiling]; no jitter is the ceiling")
    func otherJitters() {
        let equal = RetryPolicy(jitter: .equal)
        let none = RetryPolicy(jitter: .none)
        for retry in 0..<6 {
            let ceiling = equal.backoffCeiling(forRetry: retry)
            for random in [0.0, 0.25, 0.5, 1.0] {
                let delay = equal.delay(forRetry: retry, retryAfter: nil, unitRandom: random)
                #expect(delay >= ceiling / 2 && delay <= ceiling)
            }
            #expect(none.delay(forRetry: retry, retryAfter: nil, unitRandom: 0.3) == ceiling)
        }
        // Out-of-range randomness is clamped.
        #expect(RetryPolicy().delay(forRetry: 0, retryAfter: nil, unitRandom: 7) == 0.5)
        #expect(RetryPolicy().delay(forRetry: 0, retryAfter: nil, unitRandom: -1) == 0)
    }

    @Test("Retry-After replaces backoff and is capped at maxRetryAfter")
    func retryAfterCap() {
        let policy = RetryPolicy()
        #expect(policy.delay(forRetry: 0, retryAfter: 2, unitRandom: 0.9) == 2)
        #expect(policy.delay(forRetry: 3, retryAfter: 120, unitRandom: 0.9) == 60)
        #expect(policy.delay(forRetry: 0, retryAfter: -3, unitRandom: 0.9) == 0)
        #expect(RetryPolicy(maxRetryAfter: 5).delay(forRetry: 0, retryAfter: 3600, unitRandom: 0) == 5)
    }

    @Test("What is retried: idempotent methods and transient failures only")
    func retryDecisions() {
        let policy = RetryPolicy(maxRetries: 2)
        let transient: [NetworkError.Code] = [.cannotConnect, .connectionLost, .timedOut, .bodyTruncated]
            + [408, 429, 500, 502, 503, 504].map(NetworkError.Code.unacceptableStatus)
        let permanent: [NetworkError.Code] = [.invalidRequest, .cancelled, .tooManyRedirects, .bodyTooLarge, .transport, .attemptTimedOut]
            + [400, 401, 403, 404, 410, 501, 505].map(NetworkError.Code.unacceptableStatus)
        for code in transient {
            for method in [HTTPMethod.get, .head, .put, .delete] {
                #expect(policy.shouldRetry(code, method: method, attempt: 1), "\(code) \(method)")
                #expect(policy.shouldRetry(code, method: method, attempt: 2))
                #expect(!policy.shouldRetry(code, method: method, attempt: 3), "only maxRetries retries")
            }
            #expect(!policy.shouldRetry(code, method: .post, attempt: 1))
            #expect(!policy.shouldRetry(code, method: .patch, attempt: 1))
        }
        for code in permanent {
            #expect(!policy.shouldRetry(code, method: .get, attempt: 1), "\(code)")
        }
        #expect(!RetryPolicy(maxRetries: 0).shouldRetry(.timedOut, method: .get, attempt: 1))
    }

    @Test("Retry-After: delta-seconds and the three HTTP-date formats (RFC 9110 §5.6.7, §10.2.3)")
    func retryAfterParsing() throws {
        // Sun, 06 Nov 1994 08:49:37 GMT
        let date = Date(timeIntervalSince1970: 784_111_777)
        let now = date.addingTimeInterval(-90)
        #expect(RetryAfter.seconds(from: "120", now: now) == 120)
        #expect(RetryAfter.seconds(from: " 0 ", now: now) == 0)
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 90)
        #expect(RetryAfter.seconds(from: "Sunday, 06-Nov-94 08:49:37 GMT", now: now) == 90)
        #expect(RetryAfter.seconds(from: "Sun Nov  6 08:49:37 1994", now: now) == 90)
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: date.addingTimeInterval(10)) == 0)
        for garbage in ["", "soon", "-5", "1.5", "Sun, 06 Nov 1994"] {
            #expect(RetryAfter.seconds(from: garbage, now: now) == nil, "\(garbage)")
        }
    }
}

/// SplitMix64: a seeded generator so jitter tests are repeatable.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
