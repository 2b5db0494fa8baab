import Foundation
import IncidentNetworking

/// The request of a provider whose sources name the endpoint itself (Open511's events URL, a
/// WZDx feed's URL): `GET <baseURL>?<query>`, a query already in `baseURL` kept first.
public struct EndpointRouter: Router {
    /// The endpoint, from the source's `baseURL`.
    public var baseURL: URL
    /// The parameters, a key among them as `QueryItem.key(_:_:)` (encoded once, redacted).
    public var query: [QueryItem]
    /// The `Accept` header.
    public var accept: String
    /// A canned answer for `StubHTTPClient` (Moya's `sampleData`).
    public var sampleResponse: StubResponse?

    public init(baseURL: URL, query: [QueryItem], accept: String, sampleResponse: StubResponse? = nil) {
        self.baseURL = baseURL
        self.query = query
        self.accept = accept
        self.sampleResponse = sampleResponse
    }

    public var path: String { "" }
    public var headers: [String: String] { ["Accept": accept] }
    public var task: RequestTask { .queryParameters(query) }
}
