import IncidentJSON
import Testing

/// The printable style (log lines, command output) leaves nothing raw that a terminal acts on,
/// the bidirectional controls included (issue 24, point 6: "Trojan Source").
@Suite("JSON strings in the printable style")
struct PrintableStyleTests {
    @Test("every Bidi_Control character is escaped in the printable style, kept in the compact one; its UTF-8 bytes are flagged")
    func bidiControls() {
        let all = (0...0x10FFFF).compactMap(Unicode.Scalar.init)
        let escaped = all.filter { $0.value >= 0x80 && JSONString.escapes($0.value) }
        #expect(escaped.map(\.value) == [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069])
        #expect(escaped.allSatisfy { !JSONString.escapes($0.value, style: .compact) })
        // The fast path of command output copies text in which needsEscape finds none, and only that.
        for scalar in all {
            var text = "a\(Character(scalar))b"
            #expect(text.withUTF8 { JSONString.needsEscape(utf8: $0) } == JSONString.escapes(scalar.value), "U+\(String(scalar.value, radix: 16))")
        }
        #expect(JSONString.quoted("a\u{202E}b\u{2066}") == "\"a\\u202eb\\u2066\"")
        #expect(JSONString.quoted("경부\u{202E}", style: .compact) == "\"경부\u{202E}\"")
    }
}
