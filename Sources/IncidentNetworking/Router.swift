import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One API call of one provider: where it goes and what it carries (Moya's `TargetType`).
///
/// A provider is usually an enum with one case per call. Credentials go in as
/// `QueryItem.key(_:_:)` values, which are encoded exactly once and redacted from all text.
///
/// ```swift
/// struct GITSIncidents: Router {
///     var baseURL: URL      // from configuration; the loopback server's URL in tests
///     var key: APIKey
///     var path: String { "api/rest/getIncidentInfo" }
///     var task: RequestTask { .queryParameters([.key("serviceKey", key)]) }
/// }
/// // GET <baseURL>/api/rest/getIncidentInfo?serviceKey=abc%2Bdef%2Fghi%3D
/// ```
public protocol Router: Sendable {
    /// Scheme, host, port and an optional path prefix, e.g. `http://127.0.0.1:8080/openapi`.
    /// A trailing slash is optional.
    var baseURL: URL { get }
    /// The path below `baseURL`, unencoded (it is percent-encoded as an RFC 3986 path); a
    /// leading slash is optional. Must not hold `?` or `#`: put parameters in `task`.
    var path: String { get }
    /// The HTTP method; defaults to GET.
    var method: HTTPMethod { get }
    /// Extra request headers; defaults to none.
    var headers: [String: String] { get }
    /// The query parameters.
    var task: RequestTask { get }
    /// A canned response for `StubHTTPClient` (Moya's `sampleData`); defaults to nil.
    var sampleResponse: StubResponse? { get }
}

extension Router {
    /// The request for an `HTTPClient` call labelled `label`: `asURLRequest()`, with a build
    /// failure as the `NetworkError` (`invalidRequest`, no attempt made) every client throws.
    func clientRequest(label: String) throws(NetworkError) -> URLRequest {
        do {
            return try asURLRequest()
        } catch {
            throw NetworkError(code: .invalidRequest, label: label, method: method, url: baseURL.absoluteString,
                               attempts: 0, detail: error.description)
        }
    }

    public var method: HTTPMethod { .get }
    public var headers: [String: String] { [:] }
    public var sampleResponse: StubResponse? { nil }

    /// Builds the request: `baseURL` and `path` joined with exactly one `/`, the query built
    /// by hand (each name and value percent-encoded with RFC 3986's unreserved set; keys via
    /// `APIKey.percentEncoded`) and appended after any query already in `baseURL`, the
    /// method and the headers.
    ///
    /// The request's `timeoutInterval` is Foundation's default; `URLSessionTransport` sets
    /// its own.
    ///
    /// - Throws: `URLRequestBuildError` with `.invalidBaseURL`, `.invalidPath` or
    ///   `.invalidHeader`.
    public func asURLRequest() throws(URLRequestBuildError) -> URLRequest {
        let url = try RequestBuilding.url(baseURL: baseURL, path: path, query: RequestBuilding.query(of: task))
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard RequestBuilding.isToken(name) else {
                throw URLRequestBuildError(.invalidHeader, "header name '\(name)' is not an RFC 9110 token; fix the router's headers")
            }
            // Unicode scalars, not Characters: "\r\n" is one Character and equals neither.
            guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw URLRequestBuildError(.invalidHeader, "the value of header '\(name)' holds CR, LF or NUL; fix the router's headers")
            }
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }
}

/// The pieces of `Router.asURLRequest()`, separately testable.
enum RequestBuilding {
    static func query(of task: RequestTask) -> [QueryItem] {
        switch task {
        case .queryParameters(let items): items
        case .plain: []
        }
    }

    /// Joins base and path with one `/`, appends the encoded query, and validates the result.
    static func url(baseURL: URL, path: String, query: [QueryItem]) throws(URLRequestBuildError) -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty
        else {
            throw URLRequestBuildError(.invalidBaseURL, "base URL '\(baseURL.absoluteString)' is not an absolute http(s) URL with a host; fix the router's baseURL")
        }
        guard !path.contains("?"), !path.contains("#") else {
            throw URLRequestBuildError(.invalidPath, "path '\(path)' holds '?' or '#'; put parameters in the router's task instead")
        }
        var basePath = components.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        var relative = Substring(path)
        while relative.hasPrefix("/") { relative.removeFirst() }
        let joined: String
        if relative.isEmpty {
            joined = basePath.isEmpty ? "/" : (components.percentEncodedPath)
        } else {
            joined = basePath + "/" + PercentEncoding.encodePath(String(relative))
        }
        components.percentEncodedPath = joined
        components.fragment = nil

        var pairs: [String] = []
        if let existing = components.percentEncodedQuery, !existing.isEmpty { pairs.append(existing) }
        pairs.append(contentsOf: query.map(\.percentEncoded))
        components.percentEncodedQuery = pairs.isEmpty ? nil : pairs.joined(separator: "&")

        guard let url = components.url else {
            throw URLRequestBuildError(.invalidPath, "base URL and path '\(path)' do not form a valid URL; fix the router")
        }
        return url
    }

    /// RFC 9110 §5.6.2 token: 1*tchar.
    static func isToken(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
