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
    }

    @Test("HTTP methods: idempotency per RFC 9110 §9.2.2")
    func idempotency() {
        let methods: [HTTPMethod] = [.get, .post, .put, .patch, .delete, .head]
        #expect(methods.filter(\.isIdempotent) == [.get, .put, .delete, .head])
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

    @Test("QueryItem.key registers its parameter name with Redaction; .text does not")
    func keyItemRegistersItsName() {
        #expect(!Redaction.isKeyParameterName("routerTestToken"))
        _ = QueryItem.text("routerTestToken", "not a key")
        #expect(!Redaction.isKeyParameterName("ROUTERTESTTOKEN"))
        _ = QueryItem.key("routerTestToken", APIKey("value-of-router-test"))
        #expect(Redaction.isKeyParameterName("ROUTERTESTTOKEN"))
        #expect(Redaction.redact("http://h/p?routerTestToken=abc123&x=1") == "http://h/p?routerTestToken=REDACTED&x=1")
    }
}
