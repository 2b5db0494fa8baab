import Foundation

/// Percent-encoding per RFC 3986 §2.1, done byte by byte over UTF-8 so the result never
/// depends on Foundation's character sets (which leave `+`, `/` and `=` alone in queries).
enum PercentEncoding {
    /// RFC 3986 §2.3 unreserved characters: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// RFC 3986 §3.3 `pchar` plus `/`: unreserved, sub-delims, ":" and "@".
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        return switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
             UInt8(ascii: "@"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// Encodes every byte outside the unreserved set: `+` → `%2B`, `/` → `%2F`, `=` → `%3D`,
    /// space → `%20`, `&` → `%26`, Korean text → its UTF-8 bytes as `%XX`.
    static func encodeUnreserved(_ text: String, lowercaseHex: Bool = false) -> String {
        encode(text, lowercaseHex: lowercaseHex, keeping: isUnreserved)
    }

    /// Encodes a path: every byte outside `pchar` and `/` (including `%` itself) is escaped.
    static func encodePath(_ text: String) -> String {
        encode(text, lowercaseHex: false, keeping: isPathCharacter)
    }

    static func encode(_ text: String, lowercaseHex: Bool, keeping keep: (UInt8) -> Bool) -> String {
        let digits = Array((lowercaseHex ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keep(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether the text holds at least one well-formed `%XX` escape.
    static func containsEscape(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 3 else { return false }
        for index in 0..<(bytes.count - 2) where bytes[index] == UInt8(ascii: "%") {
            if isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2]) { return true }
        }
        return false
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        hexValue(byte) != nil
    }

    /// The value of a hex digit (either case), or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
