import Foundation
import IncidentJSON
import Testing

/// The one JSON string escaper, in its two styles: every ASCII control character's escape,
/// what stays raw, and `escapes` agreeing with what `quoted` writes (callers use it to copy
/// text that needs no escape as it is).
@Suite struct JSONStringTests {
    /// `\u` and four lowercase hex digits.
    private func unicodeEscape(_ value: UInt32) -> String {
        "\\u00" + (value < 0x10 ? "0" : "") + String(value, radix: 16)
    }

    @Test func compactEscapesControlsWithShortFormsAndLeavesDelete() {
        let short: [UInt32: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]
        for value in UInt32(0)..<0x20 {
            let text = String(Character(Unicode.Scalar(value)!))
            #expect(JSONString.quoted(text, style: .compact) == "\"" + (short[value] ?? unicodeEscape(value)) + "\"", "U+\(value)")
        }
        #expect(JSONString.quoted("\u{7F}", style: .compact) == "\"\u{7F}\"")
        #expect(JSONString.quoted("\u{1F}", style: .compact) == #""\u001f""#)
        #expect(JSONString.quoted("a\"b\\c/é😀\u{85}", style: .compact) == "\"a\\\"b\\\\c/é😀\u{85}\"")
    }

    @Test func printableEscapesEveryControlButTabAndLineEndsAsUnicode() {
        let short: [UInt32: String] = [0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"]
        for value in UInt32(0)..<0x20 {
            let text = String(Character(Unicode.Scalar(value)!))
            #expect(JSONString.quoted(text) == "\"" + (short[value] ?? unicodeEscape(value)) + "\"", "U+\(value)")
        }
        #expect(JSONString.quoted("\u{08}\u{0C}\u{7F}") == #""\u0008\u000c\u007f""#)
        #expect(JSONString.quoted("a\"b\\c/é😀\u{85}") == "\"a\\\"b\\\\c/é😀\u{85}\"")
        #expect(JSONString.quoted("") == "\"\"")
    }

    @Test(arguments: [JSONString.Style.compact, .printable])
    func escapesSaysWhichCharactersAreNotCopied(style: JSONString.Style) throws {
        for value in Array(UInt32(0)...0x80) + [0xA0, 0x2028, 0xAC00, 0x1F600] {
            let text = String(Character(Unicode.Scalar(value)!))
            let copied = JSONString.quoted(text, style: style) == "\"" + text + "\""
            #expect(JSONString.escapes(value, style: style) == !copied, "U+\(String(value, radix: 16))")
        }
        // Both styles write JSON that parses back to the text.
        let all = String(String.UnicodeScalarView((UInt32(0)...0x80).compactMap(Unicode.Scalar.init))) + "é😀"
        let json = "[" + JSONString.quoted(all, style: style) + "]"
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] == [all])
    }
}
