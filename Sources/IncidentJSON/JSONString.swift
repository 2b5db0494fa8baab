/// JSON string literals (RFC 8259 §7): the one escaper for the JSON text the package writes,
/// ``JSONValue/description`` and the application's log lines and command output.
///
/// `"` and `\` are escaped as `\"` and `\\`, LF, CR and tab as `\n`, `\r`, `\t`, the other
/// characters the style escapes as `\u` and four lowercase hex digits (`\u0001`); everything
/// else is copied as UTF-8, so non-ASCII text stays readable.
public enum JSONString {
    /// Which characters are escaped beyond `"`, `\` and U+0000–U+001F (all that RFC 8259 requires).
    public enum Style: Sendable {
        /// U+0008 and U+000C as `\b` and `\f`; U+007F (DEL) as it is. ``JSONValue``'s compact
        /// text (extension fields are stored in it).
        case compact
        /// U+0008, U+000C and U+007F (DEL) as `\u0008`, `\u000c`, `\u007f`, and the Unicode
        /// bidirectional controls (Bidi_Control: U+061C, U+200E, U+200F, U+202A–U+202E,
        /// U+2066–U+2069), which reorder what a terminal shows ("Trojan Source",
        /// CVE-2021-42574): nothing a terminal acts on is left raw. Log lines and command output.
        case printable
    }

    /// Whether a character (its Unicode scalar value) is written escaped in `style`.
    @inlinable
    public static func escapes(_ value: UInt32, style: Style = .printable) -> Bool {
        value < 0x20 || value == 0x22 || value == 0x5C
            || (style == .printable && (value == 0x7F || (value >= 0x61C && isBidiControl(value))))
    }

    /// Whether UTF-8 text holds a character that ``escapes(_:style:)`` escapes in the printable
    /// style: a control character, `"`, `\`, DEL, or a bidirectional control (Bidi_Control in
    /// Unicode's PropList.txt: U+061C, `D8 9C`; U+200E–U+200F and U+202A–U+202E, `E2 80 8E`–`8F`
    /// and `AA`–`AE`; U+2066–U+2069, `E2 81 A6`–`A9`). Text without one is copied as it is.
    /// Looking at the whole sequence, not its lead byte alone, keeps text with an arrow or
    /// another U+2000–U+2FFF character (`수원IC → 신갈JC`) on the copy (issue 23: every GITS
    /// location went through ``quoted(_:style:)``, half of an ndjson export's time).
    public static func needsEscape(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < utf8.count {
            switch utf8[index] {
            case 0..<0x20, 0x22, 0x5C, 0x7F: return true
            case 0xD8: if index + 1 < utf8.count && utf8[index + 1] == 0x9C { return true }
            case 0xE2 where index + 2 < utf8.count:
                switch (utf8[index + 1], utf8[index + 2]) {
                case (0x80, 0x8E...0x8F), (0x80, 0xAA...0xAE), (0x81, 0xA6...0xA9): return true
                default: break
                }
            default: break
            }
            index += 1
        }
        return false
    }

    /// Unicode's Bidi_Control property (PropList.txt).
    @usableFromInline
    static func isBidiControl(_ value: UInt32) -> Bool {
        Unicode.Scalar(value)?.properties.isBidiControl ?? false
    }

    /// `text` as a quoted JSON string, e.g. `"a\"b\u0001"`.
    public static func quoted(_ text: String, style: Style = .printable) -> String {
        var out = ""
        append(text, to: &out, style: style)
        return out
    }

    /// Appends `text` to `out` as a quoted JSON string.
    public static func append(_ text: String, to out: inout String, style: Style = .printable) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}" where style == .compact: out += "\\b"
            case "\u{0C}" where style == .compact: out += "\\f"
            default:
                if escapes(scalar.value, style: style) {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
