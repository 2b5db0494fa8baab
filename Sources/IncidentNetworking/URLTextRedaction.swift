/// The passes of `Redaction.redact` that read URLs inside arbitrary text, byte by byte over
/// UTF-8: URL user-info passwords and key parameter values.
enum URLText {
    // MARK: - User-info

    /// Replaces the password of every `scheme://user:password@host` in the text (raw, JSON-escaped
    /// `:\/\/`, or percent-encoded `%3A%2F%2F` inside another URL) by the placeholder.
    ///
    /// The authority is the run after the separator up to the first byte that cannot be in one
    /// (`/ ? #`, whitespace, quotes, `<>\`); its user-info ends at its last `@`, the user at the
    /// first `:` before that. In a percent-encoded URL the separators are `%40` and `%3A`, and
    /// an escape of `/ ? #` ends the authority (the password's own specials are then
    /// double-encoded, `%2540`). A raw URL's password may hold any `%XX` (`p%40ss`).
    static func redactingUserInfo(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var copiedUpTo = 0
        var index = 0
        while index < bytes.count {
            guard let (start, encoded) = authorityStart(bytes, at: index) else {
                index += 1
                continue
            }
            let (end, password) = scanAuthority(bytes, from: start, encoded: encoded)
            if let password, !password.isEmpty {
                out.append(contentsOf: bytes[copiedUpTo..<password.lowerBound])
                out.append(contentsOf: Redaction.placeholder.utf8)
                copiedUpTo = password.upperBound
            }
            index = max(end, start)
        }
        guard copiedUpTo > 0 else { return bytes }
        out.append(contentsOf: bytes[copiedUpTo...])
        return out
    }

    /// Where an authority starts if a scheme separator is at `index`, and whether the URL is
    /// percent-encoded.
    private static func authorityStart(_ bytes: [UInt8], at index: Int) -> (Int, Bool)? {
        if bytes[index] == UInt8(ascii: ":") {
            for separator in ["://", #":\/\/"#] where bytes[index...].starts(with: separator.utf8) {
                return (index + separator.utf8.count, false)
            }
            return nil
        }
        if hasEscape(bytes, at: index, "3a"), hasEscape(bytes, at: index + 3, "2f"), hasEscape(bytes, at: index + 6, "2f") {
            return (index + 9, true)
        }
        return nil
    }

    /// The end of the authority starting at `start`, and the range of its password, if it has
    /// a user-info with a `:`.
    private static func scanAuthority(_ bytes: [UInt8], from start: Int, encoded: Bool) -> (end: Int, password: Range<Int>?) {
        var index = start
        var firstColon: Range<Int>?
        var lastAt: Range<Int>?
        while index < bytes.count {
            var byte = bytes[index]
            var length = 1
            if encoded, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = PercentEncoding.hexValue(bytes[index + 1]), let low = PercentEncoding.hexValue(bytes[index + 2]) {
                byte = high << 4 | low
                length = 3
            } else if encoded, !(PercentEncoding.isUnreserved(byte) || byte >= 0x80
                                 || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "@")) {
                // Raw punctuation in an encoded URL belongs to the text around it.
                break
            }
            guard isAuthorityByte(byte) else { break }
            if byte == UInt8(ascii: "@") { lastAt = index..<(index + length) }
            if byte == UInt8(ascii: ":"), firstColon == nil { firstColon = index..<(index + length) }
            index += length
        }
        guard let at = lastAt, let colon = firstColon, colon.upperBound <= at.lowerBound else { return (index, nil) }
        return (index, colon.upperBound..<at.lowerBound)
    }

    /// RFC 3986 §3.2 authority characters (unreserved, `%`, sub-delims, `:`, `@`, `[`, `]`),
    /// plus any non-ASCII byte (a password that was never encoded).
    private static func isAuthorityByte(_ byte: UInt8) -> Bool {
        PercentEncoding.isUnreserved(byte) || byte >= 0x80 || "%!$&'()*+,;=:@[]".utf8.contains(byte)
    }

    // MARK: - Key parameters

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Bytes a key value is made of: RFC 3986 unreserved characters, `%` escapes, the `+ / =`
    /// of base64 keys (data.go.kr issues base64 keys), and any non-ASCII (a value that was never
    /// encoded). ASCII punctuation ends the value, so the text around a key (`)`, `;`, a JSON
    /// `\"`) survives its redaction.
    private static func isValueByte(_ byte: UInt8) -> Bool {
        PercentEncoding.isUnreserved(byte) || byte >= 0x80 || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    /// Length of the longest of `names` (lower-cased) starting at `index`, or nil.
    private static func keyNameLength(_ bytes: [UInt8], at index: Int, names: [[UInt8]]) -> Int? {
        for name in names where index + name.count <= bytes.count {
            var matches = true
            for offset in 0..<name.count where lowercasedASCII(bytes[index + offset]) != name[offset] {
                matches = false
                break
            }
            if matches { return name.count }
        }
        return nil
    }

    /// Whether `bytes[index...]` starts with `%XY` (hex compared case-insensitively).
    private static func hasEscape(_ bytes: [UInt8], at index: Int, _ hex: String) -> Bool {
        let wanted = Array(hex.lowercased().utf8)
        guard index + 2 < bytes.count, bytes[index] == UInt8(ascii: "%") else { return false }
        return lowercasedASCII(bytes[index + 1]) == wanted[0] && lowercasedASCII(bytes[index + 2]) == wanted[1]
    }

    /// Whether a name may start at `index`: at the start, after a non-name byte, or after a
    /// `%XX` escape (`%3FserviceKey%3D...` inside an encoded URL).
    private static func startsName(_ bytes: [UInt8], at index: Int) -> Bool {
        if index == 0 || !isNameByte(bytes[index - 1]) { return true }
        return index >= 3 && bytes[index - 3] == UInt8(ascii: "%")
            && PercentEncoding.isHexDigit(bytes[index - 2]) && PercentEncoding.isHexDigit(bytes[index - 1])
    }

    /// Replaces the values of `name=value` / `name%3Dvalue` for each of `names` (lower-cased
    /// bytes, longest first).
    static func redactingKeyParameters(_ bytes: [UInt8], names: [[UInt8]]) -> [UInt8] {
        guard !names.isEmpty else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if startsName(bytes, at: index), let nameLength = keyNameLength(bytes, at: index, names: names) {
                let afterName = index + nameLength
                var valueStart: Int?
                var encoded = false
                if afterName < bytes.count, bytes[afterName] == UInt8(ascii: "=") {
                    valueStart = afterName + 1
                } else if hasEscape(bytes, at: afterName, "3d") {
                    valueStart = afterName + 3
                    encoded = true
                }
                if let start = valueStart {
                    var end = start
                    while end < bytes.count, isValueByte(bytes[end]), !(encoded && hasEscape(bytes, at: end, "26")) {
                        end += 1
                    }
                    out.append(contentsOf: bytes[index..<start])
                    if end > start { out.append(contentsOf: Redaction.placeholder.utf8) }
                    index = end
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }
}
