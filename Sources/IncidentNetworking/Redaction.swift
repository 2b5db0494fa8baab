import Foundation

/// The one place that turns URLs, requests and any other text into log-safe text.
///
/// Two passes, both applied by `redact(_:)`:
/// 1. **Key parameters**: in any URL-ish text, the value of a parameter named in
///    `keyParameterNames` (compared case-insensitively, written `name=value` or, inside an
///    encoded URL, `name%3Dvalue`) is replaced by `REDACTED`. The value is the run of
///    unreserved characters, `%` escapes and `+ / =` that follows (up to `%26` in the encoded
///    form). A name only counts when
///    it is not the tail of a longer word (`monkey=1` is left alone).
/// 2. **Registered secrets**: every string given to `register(secret:)` is replaced, in any of
///    its encodings (raw, percent-encoded with upper- or lower-case hex and with any mix of its
///    special characters encoded, double-encoded `%252B`, and `+` read as a space), wherever it
///    appears: bodies, error messages, JSON.
///
/// `APIKey.init` registers its key, so a key is scrubbed from text even where it does not sit
/// behind a key parameter name. Thread-safe: the registry is guarded by a lock.
public enum Redaction {
    /// The text that replaces a secret.
    public static let placeholder = "REDACTED"

    /// Query parameter names whose values are secrets, compared case-insensitively:
    /// data.go.kr's `serviceKey`, openapi.its.go.kr's `apiKey`, and common variants.
    public static let keyParameterNames: [String] = ["serviceKey", "apiKey", "key", "api_key", "authKey"]

    /// Secrets shorter than this are not registered: replacing 1–3 character strings everywhere
    /// would shred ordinary text, and no real API key is that short.
    public static let minimumSecretLength = 4

    /// Every registered form as UTF-8 bytes, longest first.
    private static let registry = Locked<[[UInt8]]>([])

    /// Whether `name` (already percent-decoded) is one of `keyParameterNames`, ignoring case.
    public static func isKeyParameterName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return keyParameterNames.contains { $0.lowercased() == lowered }
    }

    /// Registers a secret so that `redact` replaces it in every encoding. Idempotent.
    ///
    /// - Parameter secret: the raw (decoded) secret; surrounding whitespace is ignored.
    ///   Secrets shorter than `minimumSecretLength` are ignored.
    public static func register(secret: String) {
        let raw = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard raw.count >= minimumSecretLength else { return }
        let forms = encodedForms(of: raw).map { Array($0.utf8) }
        registry.withLock { secrets in
            var set = Set(secrets)
            set.formUnion(forms)
            // Longest first, so a longer form is replaced before a shorter one inside it.
            secrets = set.sorted { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Returns `text` with key parameter values and registered secrets replaced by `REDACTED`.
    public static func redact(_ text: String) -> String {
        let secrets = registry.withLock { $0 }
        var bytes = Array(text.utf8)
        for secret in secrets {
            bytes = replacing(secret, in: bytes)
        }
        return redactKeyParameters(bytes)
    }

    /// Returns the URL's absolute string, redacted as `redact(_:)` does.
    public static func redact(_ url: URL) -> String {
        redact(url.absoluteString)
    }

    // MARK: - Encoded forms

    /// Every spelling of `raw` that a URL, a log line or a careless re-encoding may contain.
    static func encodedForms(of raw: String) -> Set<String> {
        var forms: Set<String> = [raw]
        let special = Array(Set(raw.utf8.filter { !PercentEncoding.isUnreserved($0) })).sorted()
        // Any subset of the special characters encoded (URLComponents, for one, encodes some
        // and not others), in both hex cases. Capped so a pathological secret stays cheap.
        if special.count <= 5 {
            for mask in 1..<(1 << special.count) {
                let chosen = Set(special.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
                for lower in [false, true] {
                    forms.insert(PercentEncoding.encode(raw, lowercaseHex: lower) { byte in
                        !chosen.contains(byte)
                    })
                }
            }
        } else {
            forms.insert(PercentEncoding.encodeUnreserved(raw))
            forms.insert(PercentEncoding.encodeUnreserved(raw, lowercaseHex: true))
        }
        let encoded = PercentEncoding.encodeUnreserved(raw)
        forms.insert(PercentEncoding.encodeUnreserved(encoded))  // double-encoded: %252B
        forms.insert(PercentEncoding.encodeUnreserved(PercentEncoding.encodeUnreserved(raw, lowercaseHex: true), lowercaseHex: true))
        if raw.contains("+") {
            // A server or tool that read '+' as a space (form decoding), then maybe re-encoded it.
            let spaced = raw.replacingOccurrences(of: "+", with: " ")
            forms.insert(spaced)
            forms.insert(PercentEncoding.encodeUnreserved(spaced))
            forms.insert(PercentEncoding.encodeUnreserved(spaced, lowercaseHex: true))
        }
        return forms.filter { $0.count >= minimumSecretLength }
    }

    // MARK: - Key parameters

    private static let namesLongestFirst: [[UInt8]] = keyParameterNames
        .map { Array($0.lowercased().utf8) }
        .sorted { $0.count > $1.count }

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

    /// Length of a key parameter name starting at `index`, or nil.
    private static func keyNameLength(_ bytes: [UInt8], at index: Int) -> Int? {
        for name in namesLongestFirst where index + name.count <= bytes.count {
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

    /// Replaces every occurrence of `needle` in `haystack` by the placeholder. Byte-wise over
    /// UTF-8 (secrets are matched exactly, without Unicode normalization); returns the input
    /// unchanged, without copying, when the needle does not occur.
    private static func replacing(_ needle: [UInt8], in haystack: [UInt8]) -> [UInt8] {
        guard let first = needle.first, needle.count <= haystack.count else { return haystack }
        var out: [UInt8] = []
        var copiedUpTo = 0
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) {
                if out.isEmpty { out.reserveCapacity(haystack.count) }
                out.append(contentsOf: haystack[copiedUpTo..<index])
                out.append(contentsOf: placeholder.utf8)
                index += needle.count
                copiedUpTo = index
            } else {
                index += 1
            }
        }
        guard copiedUpTo > 0 else { return haystack }
        out.append(contentsOf: haystack[copiedUpTo...])
        return out
    }

    static func redactKeyParameters(_ text: String) -> String {
        redactKeyParameters(Array(text.utf8))
    }

    static func redactKeyParameters(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if startsName(bytes, at: index), let nameLength = keyNameLength(bytes, at: index) {
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
                    if end > start { out.append(contentsOf: placeholder.utf8) }
                    index = end
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
