@testable import IncidentNetworking
import Testing

/// Issue 24, point 6: a key echoed with XML/HTML character references (`&#43;` for `+`) was not
/// redacted. Every spelling of a reference, mixed with the other encodings, in logs (redact)
/// and in incident text (secretsRedactor).
@Suite("A key written with character references is redacted")
struct EscapedKeyRedactionTests {
    @Test("decimal, hexadecimal (either case), leading zeros, no semicolon, named, &amp;, mixed with percent-encoding", arguments: [
        "SECRETKEY&#43;abc&#47;xyz&#61;",
        "SECRETKEY&#x2B;abc&#x2f;xyz&#X3D;",
        "SECRETKEY&#0043;abc/xyz=",
        "SECRETKEY&#43abc&#47xyz&#61",
        "SECRETKEY&plus;abc&sol;xyz&equals;",
        "SECRETKEY+abc&sol;xyz=",
        "SECRETKEY&#37;2Babc&#37;2Fxyz&#37;3D",
        "&#83;&#69;&#67;RETKEY+abc/xyz=",
    ])
    func forms(_ escaped: String) throws {
        _ = APIKey(FakeKey.encoded)
        let text = "<p>key \(escaped) is not registered</p>"
        #expect(Redaction.redact(text) == "<p>key REDACTED is not registered</p>")
        let redactor = try #require(Redaction.secretsRedactor())
        #expect(redactor(text) == "<p>key REDACTED is not registered</p>")
    }

    @Test("an ampersand of the key itself written &amp; or &#38;; text with references but no key is left as it is")
    func ampersand() throws {
        Redaction.register(secret: "amp&Key-2024")
        for text in ["k=amp&amp;Key-2024;", "k=amp&#38;Key-2024;", "k=amp&AMP;Key-2024;"] {
            #expect(Redaction.redact(text) == "k=REDACTED;", "\(text)")
        }
        let redactor = try #require(Redaction.secretsRedactor())
        for text in ["AT&amp;T &#43; &plus; &#x; &#; &unknown; & plain", "&#1114112; &#99999999999;"] {
            #expect(Redaction.redact(text) == text)
            #expect(redactor(text) == text)
        }
    }

    @Test("character references are decoded with the span each byte came from")
    func decoding() throws {
        let decoded = try #require(CharacterReferences.decoded(Array("a&#x2B;b&lt;".utf8)))
        #expect(String(decoding: decoded.bytes, as: UTF8.self) == "a+b<")
        #expect(decoded.spans == [0..<1, 1..<7, 7..<8, 8..<12])
        #expect(CharacterReferences.decoded(Array("no references & here".utf8)) == nil)
        let hangul = try #require(CharacterReferences.decoded(Array("&#xAC00;".utf8)))
        #expect(String(decoding: hangul.bytes, as: UTF8.self) == "가")
    }
}
