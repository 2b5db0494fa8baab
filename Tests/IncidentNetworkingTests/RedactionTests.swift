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
        TestKeyNames.register()
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

    @Test("the credentials of an authorization scheme written out are replaced, any case; words that only contain the name, and short words after it, are not",
          arguments: [
              ("Authorization: Bearer abc.DEF-123_~+/=", "Authorization: Bearer REDACTED"),
              ("error: bearer  eyJhbGciOiJIUzI1NiJ9.e30.x, retry", "error: bearer  REDACTED, retry"),
              ("BASIC dXNlcjpwYXNz== sent", "BASIC REDACTED sent"),
              ("the Basic plan; a bearer", "the Basic plan; a bearer"),
              ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Authorization: Basic REDACTED"),
              ("Cyberbasic value and debearer x", "Cyberbasic value and debearer x"),
          ])
    func authorizationCredentials(text: String, expected: String) {
        #expect(Redaction.redact(text) == expected)
    }

    @Test("redact(URL) redacts the absolute string")
    func urlRedaction() throws {
        TestKeyNames.register()
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
        TestKeyNames.register()
        #expect(Redaction.isKeyParameterName("SERVICEKEY"))
        #expect(Redaction.isKeyParameterName("Api_Key"))
        #expect(!Redaction.isKeyParameterName("monkey"))
    }

    @Test("No name is known until registered: registering one makes its values redacted and stripped from redirects")
    func registration() throws {
        let text = "http://h/p?sessionTicketZ=abc123&x=1"
        let url = try #require(URL(string: text))
        #expect(Redaction.redact(text) == text)
        #expect(RedirectGuard.strippingKeyParameters(from: url)?.absoluteString == text)
        Redaction.register(keyParameterName: "sessionTicketZ")
        Redaction.register(keyParameterName: "sessionTicketZ")
        Redaction.register(keyParameterName: "")
        #expect(Redaction.redact(text) == "http://h/p?sessionTicketZ=REDACTED&x=1")
        #expect(Redaction.redact("SESSIONTICKETZ%3Dabc%26x%3D1") == "SESSIONTICKETZ%3DREDACTED%26x%3D1")
        #expect(RedirectGuard.strippingKeyParameters(from: url)?.absoluteString == "http://h/p?x=1")
        #expect(RedirectGuard.isCredentialHeader("X-Session-Ticket-Z"))
        #expect(Redaction.keyParameterNames.filter { $0 == "sessionticketz" }.count == 1)
    }

    @Test("URL user-info: the password is replaced in any URL in the text; the user and the rest stay", arguments: [
        ("http://user:secret@proxy.example/api/", "http://user:REDACTED@proxy.example/api/"),
        ("https://user:secret@proxy.example:8443", "https://user:REDACTED@proxy.example:8443"),
        ("http://:secret@proxy.example/api/", "http://:REDACTED@proxy.example/api/"),
        ("http://user:@proxy.example/api/", "http://user:@proxy.example/api/"),
        ("http://user@proxy.example:8080/api/", "http://user@proxy.example:8080/api/"),
        ("http://proxy.example:8080/api/?a=b@c", "http://proxy.example:8080/api/?a=b@c"),
        ("http://user:p%40ss%2Fw0rd@proxy.example/", "http://user:REDACTED@proxy.example/"),
        ("http://us%40er:pa:ss@proxy.example/", "http://us%40er:REDACTED@proxy.example/"),
        ("http://user:s3cr!t$;=@[::1]:8080/x", "http://user:REDACTED@[::1]:8080/x"),
        ("http://user:비밀@proxy.example/", "http://user:REDACTED@proxy.example/"),
        ("a http://u1:one@h1/x and https://u2:two@h2?q=1, then ftp://u3:three@h3#f.",
         "a http://u1:REDACTED@h1/x and https://u2:REDACTED@h2?q=1, then ftp://u3:REDACTED@h3#f."),
        (#"{"proxy":"http://user:secret@proxy.example/api/","n":1}"#, #"{"proxy":"http://user:REDACTED@proxy.example/api/","n":1}"#),
        (#"{"proxy":"http:\/\/user:secret@proxy.example\/api\/"}"#, #"{"proxy":"http:\/\/user:REDACTED@proxy.example\/api\/"}"#),
        ("connect to http://user:secret@proxy.example:3128 failed: refused",
         "connect to http://user:REDACTED@proxy.example:3128 failed: refused"),
        ("(http://user:secret@proxy.example)", "(http://user:REDACTED@proxy.example)"),
        ("http://h/next?u=http%3A%2F%2Fuser%3Asecret%40proxy.example%2Fapi%2F&x=1",
         "http://h/next?u=http%3A%2F%2Fuser%3AREDACTED%40proxy.example%2Fapi%2F&x=1"),
        ("http%3a%2f%2fuser%3ap%2540ss%40proxy.example%3A8080", "http%3a%2f%2fuser%3aREDACTED%40proxy.example%3A8080"),
        ("http%3A%2F%2Fuser%40proxy.example%2F", "http%3A%2F%2Fuser%40proxy.example%2F"),
        ("no url: user:secret@host", "no url: user:secret@host"),
    ])
    func userInfo(input: String, expected: String) {
        #expect(Redaction.redact(input) == expected)
    }

    @Test("A configured URL's password is registered: scrubbed from any text, in any encoding")
    func registeredURLPassword() throws {
        let url = try #require(URL(string: "http://alice:Pr0xy%2BPass%2Fword@proxy.example:3128/api/"))
        Redaction.register(passwordIn: url)
        for text in ["the proxy said: Pr0xy+Pass/word is wrong", "Pr0xy%2BPass%2Fword", "lower-case hex: Pr0xy%2bPass%2fword",
                     #"{"msg":"bad password Pr0xy+Pass/word"}"#] {
            let redacted = Redaction.redact(text)
            #expect(!redacted.contains("Pr0xy"), "leak in \(redacted)")
            #expect(redacted.contains("REDACTED"))
        }
        // Nothing to register: no password, or an empty one.
        Redaction.register(passwordIn: try #require(URL(string: "http://bob@proxy.example/")))
        Redaction.register(passwordIn: try #require(URL(string: "http://bob:@proxy.example/")))
        #expect(Redaction.redact("bob is here") == "bob is here")
    }

    @Test("A URL password never reaches a NetworkError, an event or a build error")
    func userInfoInErrorsAndEvents() throws {
        let url = "http://user:hunter2@proxy.example/api/getIncidentInfo?type=xml"
        let error = NetworkError(code: .cannotConnect, label: "t", method: .get, url: url, attempts: 1,
                                 bodyExcerpt: "proxy http://user:hunter2@proxy.example denied", detail: "could not reach \(url)")
        let event = NetworkEvent(label: "t", method: .get, url: url, statusCode: nil, bytes: 0, durationMilliseconds: 1, attempt: 1,
                                 decision: .giveUp, errorSummary: "cannotConnect: \(url)")
        let buildError = URLRequestBuildError(.invalidPath, "base URL '\(url)' is wrong")
        for text in [error.description, error.redactedURL, error.detail ?? "", error.bodyExcerpt ?? "", String(reflecting: error),
                     event.description, event.redactedURL, event.errorSummary ?? "", buildError.description] {
            #expect(!text.contains("hunter2"), "leak in \(text)")
        }
        #expect(error.redactedURL == "http://user:REDACTED@proxy.example/api/getIncidentInfo?type=xml")
    }
}
