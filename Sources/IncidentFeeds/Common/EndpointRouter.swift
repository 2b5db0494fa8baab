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

extension EndpointRouter {
    /// The path a provider that appends its operation to a base URL (GITS, ITS) requests below
    /// `baseURL`: `operation`, unless `baseURL` already ends with it (a source may give the
    /// full endpoint, as for every other provider; issue 20: a full GITS URL became
    /// `…/getIncidentInfo/getIncidentInfo`, HTTP 404).
    public static func operationPath(_ operation: String, below baseURL: URL) -> String {
        baseURL.path.split(separator: "/").last.map(String.init) == operation ? "" : operation
    }

    /// The first path segment that `url` repeats right after itself (`getIncidentInfo` in
    /// `…/getIncidentInfo/getIncidentInfo`), which `check-config` warns about; nil when none.
    public static func repeatedSegment(in url: URL) -> String? {
        let segments = url.path.split(separator: "/")
        return zip(segments, segments.dropFirst()).first { $0 == $1 }.map { String($0.0) }
    }

    /// The file name that `url`'s path continues below (`gits.xml` in `…/gits.xml/getIncidentInfo`:
    /// a GITS or ITS `baseURL` given as a recorded file, to which the operation was appended), which
    /// `check-config` warns about; nil when no segment but the last names a feed file (extensions
    /// xml, json, geojson, gz, csv, txt).
    public static func segmentBelowFile(in url: URL) -> String? {
        let fileExtensions: Set<String> = ["xml", "json", "geojson", "gz", "csv", "txt"]
        return url.path.split(separator: "/").dropLast().first { segment in
            guard let dot = segment.lastIndex(of: "."), dot != segment.startIndex else { return false }
            return fileExtensions.contains(segment[segment.index(after: dot)...].lowercased())
        }.map(String.init)
    }
}
