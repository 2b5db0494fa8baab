import Foundation
import IncidentNetworking

/// One configured source: a name, a provider, the key and the provider's options.
///
/// Two sources may use the same provider with different parameters (e.g. two ITS bounding
/// boxes); incidents are stored under the source's `name`.
public struct SourceDefinition: Sendable, Equatable {
    /// Unique name; stored as `incidents.source` (e.g. `gits`, `its-seoul`).
    public var name: String
    /// A provider in ``ProviderRegistry`` (`gits`, `its`).
    public var provider: String
    /// The API key; nil only for replaying files.
    public var key: APIKey?
    /// Overrides the provider's default base URL (tests, the demo, a proxy).
    public var baseURL: URL?
    /// Seconds between polls in `run --loop`.
    public var intervalSeconds: Int64 = 300
    /// Seconds an HTTP request may wait for the response to start or for more body bytes.
    public var requestTimeoutSeconds: Double = 30
    /// Seconds one HTTP attempt may take in all, however steadily bytes arrive (a server that
    /// trickles its answer never trips the idle timeout above).
    public var attemptTimeoutSeconds: Double = 300
    /// When and how failed HTTP requests are retried.
    public var retryPolicy: RetryPolicy = .default
    /// The provider's options (``FeedProvider/options``) this source sets.
    public var options = ProviderOptionValues()

    public init(name: String, provider: String, key: APIKey? = nil, baseURL: URL? = nil) {
        self.name = name
        self.provider = provider
        self.key = key
        self.baseURL = baseURL
    }
}

extension SourceDefinition {
    /// The key, for a request.
    /// - Throws: ``FeedError`` `missingKey` when the source has none (a file replay's source).
    public func requiredKey() throws -> APIKey {
        guard let key else { throw FeedError(.missingKey, provider: provider, message: "source '\(name)' has no API key") }
        return key
    }
}

extension URL {
    /// A URL from a literal written in this source code. A malformed literal is a programming
    /// error caught by the tests, not a runtime condition.
    init(constant text: StaticString) {
        guard let url = URL(string: "\(text)") else { preconditionFailure("malformed URL literal \(text)") }
        self = url
    }
}
