import Foundation
import Testing
@testable import IncidentNetworking

@Suite("Redaction")
struct RedactionTests {
    @Test("Key parameter values are replaced, names compared case-insensitively", arguments: [
        ("http://h/p?serviceKey=XYZ123&type=xml", "http://h/p?serviceKey=REDACTED&type=xml"),
        ("http://h/p?type=xml&SERVICEKEY=XYZ123", "http://h/p?type=xml&SERVICEKEY=REDACTED"),
        ("http://h/p?apiKey=XYZ123", "http://h/p?apiKey=REDACTED"),
        ("http://h/p?APIKEY=XYZ123&x=1", "http://h/p?APIKEY=REDACTED&x=1"),
        ("http://h/p?api_key=XYZ123", "http://h/p?api_key=REDACTED"),
        ("http://h/p?authKey=XYZ123", "http://h/p?authKey=REDACTED"),
        ("http://h/p?key=XYZ123", "http://h/p?key=REDACTED"),
        ("url=\"http://h/p?serviceKey=XYZ123\" status=200", "url=\"http://h/p?serviceKey=REDACTED\" status=200"),
        ("<a href='http://h/p?key=XYZ123'>x</a>", "<a href='http://h/p?key=REDACTED'>x</a>"),
        ("<u>http://h/p?key=XYZ123</u>", "<u>http://h/p?key=REDACTED</u>"),
        ("http://h/p?key=XYZ123#frag", "http://h/p?key=REDACTED#frag"),
        ("GET /p?serviceKey=XYZ123 HTTP/1.1", "GET /p?serviceKey=REDACTED HTTP/1.1"),
        ("serviceKey=a\tnext", "serviceKey=REDACTED\tnext"),
        ("http://h/next?u=http%3A%2F%2Fh%2Fp%3FserviceKey%3DXYZ123%26a%3D1", "http://h/next?u=http%3A%2F%2Fh%2Fp%3FserviceKey%3DREDACTED%26a%3D1"),
        ("monkey=banana&turkey=1&keyboard=2", "monkey=banana&turkey=1&keyboard=2"),
        ("http://h/p?serviceKey=&a=1", "http://h/p?serviceKey=&a=1"),
        ("no secrets here", "no secrets here"),
        ("사고 serviceKey=비밀 끝", "사고 serviceKey=REDACTED 끝"),
        ("(http://h/p?serviceKey=a%2Bb%3D) next", "(http://h/p?serviceKey=REDACTED) next"),
        ("see key=abc123); check the base URL", "see key=REDACTED); check the base URL"),
        (#"{"u":"http://h/p?apiKey=abc\"x"}"#, #"{"u":"http://h/p?apiKey=REDACTED\"x"}"#),
        ("apiKey=ab+c/d==,next;key=x:y", "apiKey=REDACTED,next;key=REDACTED:y"),
    ])
    func keyParameters(input: String, expected: String) {
        #expect(Redaction.redact(input) == expected)
    }

    @Test("A registered key is scrubbed in every encoding, anywhere in the text")
    func registeredSecrets() {
        _ = APIKey(FakeKey.encoded)  // registers the key (given here in its encoded form)
        let texts = [
            "raw \(FakeKey.raw) in prose",
            "encoded \(FakeKey.encoded) in prose",
            "lower-case hex SECRETKEY%2babc%2fxyz%3d",
            "partly encoded SECRETKEY%2Babc/xyz=",
            "partly encoded SECRETKEY+abc%2Fxyz%3D",
            "double-encoded SECRETKEY%252Babc%252Fxyz%253D",
            "plus read as a space: SECRETKEY abc/xyz=",
            "plus read as a space, re-encoded: SECRETKEY%20abc%2Fxyz%3D",
            "{\"header\":{\"resultMsg\":\"key SECRETKEY+abc/xyz= is not registered\"}}",
            "<returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR SECRETKEY%2Babc%2Fxyz%3D</returnAuthMsg>",
        ]
        for text in texts {
            let redacted = Redaction.redact(text)
            #expect(FakeKey.leaks(in: redacted).isEmpty, "leak in \(redacted)")
            #expect(redacted.contains("REDACTED"))
        }
    }

    @Test("redact(URL) redacts the absolute string")
    func urlRedaction() throws {
        _ = APIKey(FakeKey.raw)
        let url = try #require(URL(string: "http://127.0.0.1:1/p?serviceKey=\(FakeKey.encoded)&x=\(FakeKey.encoded)"))
        let redacted = Redaction.redact(url)
        #expect(redacted == "http://127.0.0.1:1/p?serviceKey=REDACTED&x=REDACTED")
    }

    @Test("Very short secrets are not registered (they would shred ordinary text)")
    func shortSecretsIgnored() {
        Redaction.register(secret: "ab")
        #expect(Redaction.redact("table ab about") == "table ab about")
    }

    @Test("Registering and redacting from many tasks at once is safe")
    func concurrentUse() async {
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let secret = "CONCURRENT\(index)+x/y="
                    Redaction.register(secret: secret)
                    return !Redaction.redact("value \(secret) end").contains("CONCURRENT\(index)")
                }
            }
            for await clean in group {
                #expect(clean)
            }
        }
    }

    @Test("Key parameter names are compared case-insensitively")
    func names() {
        #expect(Redaction.keyParameterNames == ["serviceKey", "apiKey", "key", "api_key", "authKey"])
        #expect(Redaction.isKeyParameterName("SERVICEKEY"))
        #expect(Redaction.isKeyParameterName("Api_Key"))
        #expect(!Redaction.isKeyParameterName("monkey"))
    }
}
