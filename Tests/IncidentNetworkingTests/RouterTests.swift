import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import IncidentNetworking

/// A GITS-like router: `getIncidentInfo` with the key in `serviceKey`.
private struct GITSLike: Router {
    var baseURL: URL
    var key: APIKey
    var path: String { "api/rest/getIncidentInfo" }
    var task: RequestTask { .queryParameters([.key("serviceKey", key)]) }
}

private func url(_ text: String) throws -> URL {
    try #require(URL(string: text))
}

@Suite("Router and request building")
struct RouterTests {
    @Test("A key given in raw or encoded form is sent encoded exactly once", arguments: [
        "abc+def/ghi=",
        "abc%2Bdef%2Fghi%3D",
        "abc%2bdef%2fghi%3d",
        "abc%252Bdef%252Fghi%253D",
        "  abc+def/ghi=\n",
    ])
    func goldenKeyURL(given: String) throws {
        let router = GITSLike(baseURL: try url("http://127.0.0.1:8080"), key: APIKey(given))
        let request = try router.asURLRequest()
        #expect(request.url?.absoluteString == "http://127.0.0.1:8080/api/rest/getIncidentInfo?serviceKey=abc%2Bdef%2Fghi%3D")
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
    }

    @Test("Both key forms are the same key")
    func keyFormsAreEqual() {
        #expect(APIKey("abc+def/ghi=") == APIKey("abc%2Bdef%2Fghi%3D"))
        #expect(APIKey("abc+def/ghi=").percentEncoded == "abc%2Bdef%2Fghi%3D")
        #expect(APIKey("").isEmpty)
    }

    @Test("Base URL and path join with exactly one slash", arguments: [
        ("http://127.0.0.1:8080", "api/rest/x", "http://127.0.0.1:8080/api/rest/x"),
        ("http://127.0.0.1:8080/", "api/rest/x", "http://127.0.0.1:8080/api/rest/x"),
        ("http://127.0.0.1:8080", "/api/rest/x", "http://127.0.0.1:8080/api/rest/x"),
        ("http://127.0.0.1:8080/", "/api/rest/x", "http://127.0.0.1:8080/api/rest/x"),
        ("http://127.0.0.1:8080//", "//api/rest/x", "http://127.0.0.1:8080/api/rest/x"),
        ("https://openapi.its.go.kr:9443/openapi", "eventInfo", "https://openapi.its.go.kr:9443/openapi/eventInfo"),
        ("https://openapi.its.go.kr:9443/openapi/", "/eventInfo", "https://openapi.its.go.kr:9443/openapi/eventInfo"),
        ("http://127.0.0.1:8080", "", "http://127.0.0.1:8080/"),
        ("http://127.0.0.1:8080/base/", "", "http://127.0.0.1:8080/base/"),
        ("http://127.0.0.1:8080", "a b/사고", "http://127.0.0.1:8080/a%20b/%EC%82%AC%EA%B3%A0"),
    ])
    func joining(base: String, path: String, expected: String) throws {
        let router = TestRouter(baseURL: try url(base), path: path)
        #expect(try router.asURLRequest().url?.absoluteString == expected)
    }

    @Test("Query values with spaces, Korean text, & + = are encoded with the unreserved set")
    func queryValueEncoding() throws {
        let router = TestRouter(
            baseURL: try url("http://127.0.0.1:8080"),
            path: "q",
            task: .queryParameters([
                .text("road", "경부 고속도로"),
                .text("expr", "a&b=c+d/e?f#g%h"),
                .text("safe", "AZaz09-._~"),
                .text("empty", ""),
                .text("dup", "1"),
                .text("dup", "2"),
                .text("name with space", "v"),
            ])
        )
        let expected = "http://127.0.0.1:8080/q?road=%EA%B2%BD%EB%B6%80%20%EA%B3%A0%EC%86%8D%EB%8F%84%EB%A1%9C"
            + "&expr=a%26b%3Dc%2Bd%2Fe%3Ff%23g%25h&safe=AZaz09-._~&empty=&dup=1&dup=2&name%20with%20space=v"
        #expect(try router.asURLRequest().url?.absoluteString == expected)
    }

    @Test("A query already in the base URL is kept, ours appended")
    func baseQueryKept() throws {
        let router = TestRouter(baseURL: try url("http://h:1/svc?type=xml"), path: "x", task: .queryParameters([.text("a", "1")]))
        #expect(try router.asURLRequest().url?.absoluteString == "http://h:1/svc/x?type=xml&a=1")
    }

    @Test("Key and text items in one query, with other parameters around the key")
    func mixedQuery() throws {
        let router = TestRouter(
            baseURL: try url("http://127.0.0.1:8080"),
            path: "/eventInfo",
            task: .queryParameters([.key("apiKey", APIKey(FakeKey.raw)), .text("type", "all"), .text("getType", "json")])
        )
        #expect(try router.asURLRequest().url?.absoluteString
            == "http://127.0.0.1:8080/eventInfo?apiKey=SECRETKEY%2Babc%2Fxyz%3D&type=all&getType=json")
    }

    @Test("plain: method and headers only")
    func plainTask() throws {
        let router = TestRouter(baseURL: try url("http://h"), path: "p", method: .delete, headers: ["Accept": "text/xml"])
        let request = try router.asURLRequest()
        #expect(request.httpMethod == "DELETE")
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/xml")
        #expect(request.httpBody == nil)
        #expect(request.url?.query == nil)
    }

    private struct Payload: Codable, Equatable, Sendable {
        var name: String
        var count: Int
    }

    @Test("jsonBody: encoded body and Content-Type: application/json")
    func jsonBodyTask() throws {
        let router = TestRouter(baseURL: try url("http://h"), path: "p", method: .post, task: .jsonBody(Payload(name: "사고", count: 2)))
        let request = try router.asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(request.httpBody)
        #expect(try JSONDecoder().decode(Payload.self, from: body) == Payload(name: "사고", count: 2))
    }

    @Test("A Content-Type set by the router's headers wins over the task's")
    func routerContentTypeWins() throws {
        let router = TestRouter(baseURL: try url("http://h"), path: "p", method: .post,
                                headers: ["content-type": "application/vnd.api+json"], task: .jsonBody(Payload(name: "a", count: 1)))
        #expect(try router.asURLRequest().value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
    }

    @Test("rawBody: bytes and content type as given")
    func rawBodyTask() throws {
        let data = Data("<a>1</a>".utf8)
        let router = TestRouter(baseURL: try url("http://h"), path: "p", method: .put, task: .rawBody(data, contentType: "text/xml"))
        let request = try router.asURLRequest()
        #expect(request.httpBody == data)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "text/xml")
        #expect(request.httpMethod == "PUT")
    }

    @Test("bodyAndQuery: both the body and the query")
    func bodyAndQueryTask() throws {
        let data = Data("x=1".utf8)
        let router = TestRouter(baseURL: try url("http://h"), path: "p", method: .post,
                                task: .bodyAndQuery(body: data, contentType: "application/x-www-form-urlencoded",
                                                    query: [.key("serviceKey", APIKey("abc+def/ghi="))]))
        let request = try router.asURLRequest()
        #expect(request.httpBody == data)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.url?.absoluteString == "http://h/p?serviceKey=abc%2Bdef%2Fghi%3D")
    }

    @Test("multipart: RFC 7578 body with a boundary in Content-Type")
    func multipartTask() throws {
        let router = TestRouter(baseURL: try url("http://h"), path: "upload", method: .post, task: .multipart([
            .text("note", "도로"),
            MultipartPart(name: "file", data: Data([0, 1, 2]), filename: "a\"b.bin", contentType: "application/octet-stream"),
        ]))
        let request = try router.asURLRequest()
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
        let body = try #require(request.httpBody)
        var expected = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n도로\r\n".utf8)
        expected.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a%22b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8))
        expected.append(Data([0, 1, 2]))
        expected.append(Data("\r\n--\(boundary)--\r\n".utf8))
        #expect(body == expected)
    }

    private struct Unencodable: Encodable, Sendable {
        var value = Double.nan
    }

    @Test("Build errors are typed and carry no secret")
    func buildErrors() throws {
        func code(_ router: TestRouter) -> URLRequestBuildError.Code? {
            do {
                _ = try router.asURLRequest()
                return nil
            } catch {
                #expect(FakeKey.leaks(in: error.description).isEmpty, "leak in \(error.description)")
                return error.code
            }
        }
        _ = APIKey(FakeKey.raw)
        #expect(code(TestRouter(baseURL: try url("ftp://h/?serviceKey=\(FakeKey.encoded)"), path: "p")) == .invalidBaseURL)
        #expect(code(TestRouter(baseURL: URL(fileURLWithPath: "/tmp"), path: "p")) == .invalidBaseURL)
        #expect(code(TestRouter(baseURL: try url("http://h"), path: "p?serviceKey=\(FakeKey.raw)")) == .invalidPath)
        #expect(code(TestRouter(baseURL: try url("http://h"), path: "p#frag")) == .invalidPath)
        #expect(code(TestRouter(baseURL: try url("http://h"), path: "p", headers: ["Bad Header": "1"])) == .invalidHeader)
        #expect(code(TestRouter(baseURL: try url("http://h"), path: "p", headers: ["X-A": "1\r\nX-B: 2"])) == .invalidHeader)
        #expect(code(TestRouter(baseURL: try url("http://h"), path: "p", method: .post, task: .jsonBody(Unencodable()))) == .jsonEncodingFailed)
    }

    @Test("HTTP methods: idempotency per RFC 9110 §9.2.2")
    func idempotency() {
        #expect(HTTPMethod.allCases.filter(\.isIdempotent) == [.get, .put, .delete, .head])
    }

    @Test("APIKey never shows its value in description, debugDescription, interpolation or dump")
    func keyIsNeverPrinted() {
        let key = APIKey(FakeKey.encoded)
        var dumped = ""
        dump(key, to: &dumped)
        let item = QueryItem.key("serviceKey", key)
        var dumpedItem = ""
        dump(item, to: &dumpedItem)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped,
                     item.description, "\(item)", String(reflecting: item), dumpedItem] {
            #expect(FakeKey.leaks(in: text).isEmpty, "leak in \(text)")
        }
        #expect(key.description == "REDACTED")
        #expect(item.description == "serviceKey=REDACTED")
    }
}
