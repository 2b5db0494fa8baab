import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

/// A router whose every part is a stored property, for tests.
struct TestRouter: Router {
    var baseURL: URL
    var path: String
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var task: RequestTask = .plain
    var sampleResponse: StubResponse?
}

/// The fake key used throughout: recognisable, and holding all three characters that break
/// naive encoding (`+`, `/`, `=`).
enum FakeKey {
    static let raw = "SECRETKEY+abc/xyz="
    static let encoded = "SECRETKEY%2Babc%2Fxyz%3D"
    /// Substrings that must never appear in log-bound text, in any encoding.
    static let markers = ["SECRETKEY", "abc/xyz", "abc%2Fxyz", "abc%2fxyz", "abc%252Fxyz", "abc xyz"]

    static func leaks(in text: String) -> [String] {
        markers.filter { text.range(of: $0, options: .caseInsensitive) != nil }
    }
}

/// The key parameter names these tests use. `Redaction` knows no provider's names by itself;
/// a test that relies on one registers it (tests run in any order, in one process).
enum TestKeyNames {
    static let all = ["serviceKey", "apiKey", "key", "api_key", "authKey"]

    static func register() {
        for name in all { Redaction.register(keyParameterName: name) }
    }
}

/// Collects `NetworkEvent`s from the client's `@Sendable` callback.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [NetworkEvent] = []

    var handler: @Sendable (NetworkEvent) -> Void {
        { [self] event in
            lock.lock()
            stored.append(event)
            lock.unlock()
        }
    }

    var events: [NetworkEvent] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    var decisions: [String] {
        events.map { event in
            switch event.decision {
            case .done: "done"
            case .retry: "retry"
            case .giveUp: "giveUp"
            }
        }
    }
}

/// Records the delays the client asks to sleep, without sleeping.
final class SleepRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Double] = []

    var sleep: @Sendable (Double) async throws -> Void {
        { [self] seconds in
            lock.withLock { stored.append(seconds) }
        }
    }

    /// Records the delay, then waits until the task is cancelled (a retry that never comes).
    var sleepUntilCancelled: @Sendable (Double) async throws -> Void {
        { [self] seconds in
            lock.withLock { stored.append(seconds) }
            try await Task.sleep(for: .seconds(3600))
        }
    }

    var delays: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// A configuration for loopback tests: short delays, a private temporary directory.
func testConfiguration(
    directory: URL,
    requestTimeout: Double = 10,
    maxRetries: Int = 2,
    baseDelay: Double = 0.05,
    sleep: (@Sendable (Double) async throws -> Void)? = nil,
    random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
) -> NetworkConfiguration {
    var configuration = NetworkConfiguration(
        requestTimeout: requestTimeout,
        retryPolicy: RetryPolicy(maxRetries: maxRetries, baseDelay: baseDelay, factor: 2, maxDelay: 1),
        temporaryDirectory: directory,
        random: random
    )
    if let sleep { configuration.sleep = sleep }
    return configuration
}

/// Files left in a directory (the client must leave none).
func leftovers(in directory: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
}

/// Runs the call and returns the `NetworkError` it threw; records an issue otherwise.
func networkError<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ call: () async throws -> R
) async -> NetworkError? {
    do {
        _ = try await call()
        Issue.record("expected a NetworkError, got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as NetworkError {
        return error
    } catch {
        Issue.record("expected a NetworkError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Reads the response file inside the closure (it is removed afterwards).
func fetchData(_ client: any HTTPClient, _ router: any Router, label: String = "test") async throws -> (Data, HTTPResponseFile) {
    try await client.withResponse(for: router, label: label) { file in
        (try Data(contentsOf: file.fileURL), file)
    }
}
