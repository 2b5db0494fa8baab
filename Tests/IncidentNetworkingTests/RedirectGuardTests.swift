import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking
import TestSupport

@Suite("Redirect guard")
struct RedirectGuardTests {
    private func url(_ text: String) throws -> URL {
        try #require(URL(string: text))
    }

    @Test("Origins compare scheme, host and port, with default ports filled in", arguments: [
        ("http://h/a", "http://h:80/b", false),
        ("https://h/a", "https://h:443/b", false),
        ("http://H/a", "http://h/b", false),
        ("http://127.0.0.1:8080/a", "http://localhost:8080/a", true),
        ("http://h:8080/a", "http://h:8081/a", true),
        ("https://h/a", "http://h/a", true),
    ])
    func origins(from: String, to: String, crossOrigin: Bool) throws {
        #expect(RedirectGuard.isCrossOrigin(from: try url(from), to: try url(to)) == crossOrigin)
    }

    @Test("Key parameters are removed from a query (any case, even with an encoded name); the rest stays in order")
    func stripping() throws {
        TestKeyNames.register()
        let stripped = RedirectGuard.strippingKeyParameters(from: try url(
            "http://other:1/p?type=xml&serviceKey=A%2BB&APIKEY=x&serviceKe%79=y&key&numOfRows=10#frag"))
        #expect(stripped?.absoluteString == "http://other:1/p?type=xml&numOfRows=10#frag")
        #expect(RedirectGuard.strippingKeyParameters(from: try url("http://o/p?serviceKey=1"))?.absoluteString == "http://o/p")
        #expect(RedirectGuard.strippingKeyParameters(from: try url("http://o/p"))?.absoluteString == "http://o/p")
    }

    @Test("Credential headers are dropped on a cross-origin redirect; others stay")
    func headers() throws {
        TestKeyNames.register()
        var request = URLRequest(url: try url("http://other/p?serviceKey=1&a=2"))
        for name in ["Authorization", "Cookie", "X-API-Key", "apiKey", "serviceKey", "Accept", "X-Trace"] {
            request.setValue("v", forHTTPHeaderField: name)
        }
        let stripped = try #require(RedirectGuard.strippingCredentials(from: request))
        #expect(stripped.url?.absoluteString == "http://other/p?a=2")
        #expect(Set((stripped.allHTTPHeaderFields ?? [:]).keys.map { $0.lowercased() }) == ["accept", "x-trace"])
    }
}

@Suite("Responses without a body")
struct EmptyBodyTests {
    @Test("HEAD and 204 succeed with an empty file (Content-Length is not checked against a body that cannot exist)",
          arguments: [(HTTPMethod.head, 200), (HTTPMethod.get, 204)])
    func emptyBodies(method: HTTPMethod, status: Int) async throws {
        let server = try await LoopbackServer.start(routes: ["/e": [.status(status, body: status == 204 ? nil : "hello")]])
        defer { server.stop() }
        let client = URLSessionHTTPClient(configuration: testConfiguration(directory: try TestPaths.temporaryDirectory("net")))
        let (data, file) = try await fetchData(client, TestRouter(baseURL: server.baseURL, path: "e", method: method))
        #expect(data.isEmpty)
        #expect(file.byteCount == 0)
        #expect(file.statusCode == status)
        #expect(try await server.requests().first?.method == method.rawValue)
    }
}
