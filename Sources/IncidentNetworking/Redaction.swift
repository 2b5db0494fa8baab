import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one place that turns URLs, requests and any other text into log-safe text.
///
/// Four passes, all applied by `redact(_:)`:
/// 1. **Registered secrets**: every string given to `register(secret:)` (API keys, URL
///    passwords) is replaced, in any of its encodings (raw, percent-encoded with upper- or
///    lower-case hex and with any mix of its special characters encoded, double-encoded
///    `%252B`, and `+` read as a space), also written with XML/HTML character references
///    (`&#43;`, `&#x2B;`, `&plus;`, `&amp;`: a server echoing the key in an HTML page),
///    wherever it appears: bodies, error messages, JSON.
/// 2. **URL user-info**: in any URL in the text, `scheme://user:password@host` keeps the user
///    and loses the password (`http://user:REDACTED@host`), also when the URL is itself
///    percent-encoded inside another (`http%3A%2F%2Fuser%3Asecret%40host`) or JSON-escaped
///    (`http:\/\/user:secret@host`). An empty password, or a user without one, is left as is.
/// 3. **Key parameters**: the value of a parameter whose name was registered with
///    `register(keyParameterName:)` (compared case-insensitively, written `name=value` or,
///    inside an encoded URL, `name%3Dvalue`) is replaced. The value is the run of unreserved
///    characters, `%` escapes and `+ / =` that follows (up to `%26` in the encoded form). A
///    name only counts when it is not the tail of a longer word (`monkey=1` is left alone).
/// 4. **Authorization credentials**: the word after `Bearer ` or `Basic ` (any case), as a
///    program's stderr or an echoed header may show it.
///
/// Nothing here knows a provider: `APIKey.init` registers its key, `QueryItem.key(_:_:)` its
/// parameter name, and whoever configures a URL with a password calls
/// `register(passwordIn:)`. Thread-safe: the registry is guarded by a lock.
public enum Redaction {
    /// The text that replaces a secret.
    static let placeholder = "REDACTED"

    /// Secrets shorter than this are not registered: replacing 1–3 character strings everywhere
    /// would shred ordinary text, and no real API key is that short.
    static let minimumSecretLength = 4

    private struct Registry {
        /// Every registered form of every secret as UTF-8 bytes, longest first.
        var secrets: [[UInt8]] = []
        /// Key parameter names, lower-cased ASCII bytes, longest first.
        var names: [[UInt8]] = []
        /// Per registered secret, its longest run of unreserved characters, which every form
        /// of it contains (percent-encoding and `+` as a space leave those alone); empty when
        /// it has none, and then text must always be searched.
        var anchors: [[UInt8]] = []
    }

    private static let registry = Locked(Registry())

    /// Registers a secret so that `redact` replaces it in every encoding. Idempotent.
    ///
    /// - Parameter secret: the raw (decoded) secret; surrounding whitespace is ignored.
    ///   Secrets shorter than `minimumSecretLength` (4) are ignored.
    public static func register(secret: String) {
        let raw = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard raw.count >= minimumSecretLength else { return }
        let forms = encodedForms(of: raw).map { Array($0.utf8) }
        let anchor = raw.utf8.split { !PercentEncoding.isUnreserved($0) }.max { $0.count < $1.count }.map(Array.init) ?? []
        registry.withLock { registry in
            var set = Set(registry.secrets)
            let known = set.count
            set.formUnion(forms)
            guard set.count > known else { return }
            registry.anchors.append(anchor.count >= 2 ? anchor : [])
            // Longest first, so a longer form is replaced before a shorter one inside it.
            registry.secrets = set.sorted { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Registers the password of `url`'s user-info (`http://user:password@host/`) as a secret,
    /// in its decoded and its percent-encoded spelling, so it is scrubbed from any text, not
    /// only from URLs. Call it for every configured URL that may carry one (a base URL, a
    /// proxy). No password (or a shorter one than `minimumSecretLength`): nothing happens;
    /// the user-info pass still hides it inside URLs.
    public static func register(passwordIn url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return }
        for password in [components.password, components.percentEncodedPassword].compactMap({ $0 }) {
            register(secret: password)
        }
    }

    /// Registers a query parameter name whose values are secrets (a provider's `serviceKey`,
    /// `apiKey`, ...): `redact` then replaces `name=value` values, compared case-insensitively,
    /// and `RedirectGuard` strips such parameters (and headers of that name) from cross-origin
    /// redirects. `QueryItem.key(_:_:)` calls this for its name. Idempotent; an empty name is
    /// ignored.
    public static func register(keyParameterName name: String) {
        let lowered = Array(name.lowercased().utf8)
        guard !lowered.isEmpty else { return }
        registry.withLock { registry in
            guard !registry.names.contains(lowered) else { return }
            registry.names.append(lowered)
            registry.names.sort { $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Whether `name` (already percent-decoded) is a registered key parameter name, ignoring case.
    static func isKeyParameterName(_ name: String) -> Bool {
        let lowered = Array(name.lowercased().utf8)
        return registry.withLock { $0.names.contains(lowered) }
    }

    /// The registered key parameter names, lower-cased.
    static var keyParameterNames: [String] {
        registry.withLock { $0.names }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Returns `text` with registered secrets, URL passwords and key parameter values replaced
    /// by `REDACTED`.
    public static func redact(_ text: String) -> String {
        let registry = registry.withLock { $0 }
        var bytes = replacingSecrets(registry.secrets, in: Array(text.utf8))
        bytes = URLText.redactingUserInfo(bytes)
        bytes = URLText.redactingKeyParameters(bytes, names: registry.names)
        bytes = redactingAuthorizationCredentials(bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Pass 4: the credentials of an HTTP authorization scheme written out (`Bearer abc.def`,
    /// `Basic dXNlcjpw`, as a program's stderr or an echoed header may show them; RFC 9110
    /// §11.4, token68 syntax): the word after the scheme name is replaced, whatever the case,
    /// when it is 8 characters or more (text such as an excerpt stored with a record keeps
    /// "basic plan").
    static func redactingAuthorizationCredentials(_ bytes: [UInt8]) -> [UInt8] {
        let minimumCredentialLength = 8
        let schemes: [[UInt8]] = [Array("bearer".utf8), Array("basic".utf8)]
        func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
        func isToken68(_ byte: UInt8) -> Bool {
            isLetter(byte) || (48...57).contains(byte) || Array("-._~+/=".utf8).contains(byte)
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let scheme = schemes.first { scheme in
                index + scheme.count < bytes.count && (index == 0 || !isLetter(bytes[index - 1]))
                    && zip(scheme, bytes[index...]).allSatisfy { $0 == $1 | 0x20 } && bytes[index + scheme.count] == 32
            }
            guard let scheme else {
                result.append(bytes[index])
                index += 1
                continue
            }
            var end = index + scheme.count
            while end < bytes.count && bytes[end] == 32 { end += 1 }
            let start = end
            while end < bytes.count && isToken68(bytes[end]) { end += 1 }
            result += bytes[index..<start]
            // A credential is long: "Basic plan" in a stored excerpt or reason is left as it is.
            result += end - start >= minimumCredentialLength ? Array(placeholder.utf8) : Array(bytes[start..<end])
            index = end
        }
        return result
    }

    /// A function that replaces the secrets registered now (pass 1 of ``redact(_:)`` only) in
    /// text that a response may carry into the database (an incident's description: a server
    /// may echo the key it was sent). Text holding none of the secrets' anchors is returned as
    /// is after one byte search per secret, so a poll of many records stays fast; nil when no
    /// secret is registered (a replayed file without a configuration): nothing to do.
    public static func secretsRedactor() -> (@Sendable (String) -> String)? {
        let registry = registry.withLock { $0 }
        guard !registry.secrets.isEmpty else { return nil }
        let anchors = registry.anchors
        let secrets = registry.secrets
        return { text in
            var text = text
            // A named reference stands for punctuation only, which no anchor holds; a numeric one
            // (`&#83;`) may spell an anchor's characters too.
            let mayHold = text.withUTF8 { bytes in
                anchors.contains { anchor in anchor.isEmpty || contains(anchor, in: bytes) } || contains(numericReference, in: bytes)
            }
            guard mayHold else { return text }
            return String(decoding: replacingSecrets(secrets, in: Array(text.utf8)), as: UTF8.self)
        }
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

    // MARK: - Secrets

    /// The start of a numeric character reference, `&#`.
    private static let numericReference: [UInt8] = [0x26, 0x23]

    /// Whether `haystack` contains `needle` (not empty).
    private static func contains(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return false }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// Replaces every form of every secret (longest first) in `text` by the placeholder, also
    /// where character references spell it (`abc&#43;def`, `&#x2F;`, `&sol;`, `&amp;`, any
    /// mix; ``CharacterReferences``): the whole escaped span is replaced.
    private static func replacingSecrets(_ secrets: [[UInt8]], in text: [UInt8]) -> [UInt8] {
        var bytes = text
        for secret in secrets { bytes = replacing(secret, in: bytes) }
        guard let decoded = CharacterReferences.decoded(bytes) else { return bytes }
        // Spans of `bytes` that spell a secret, found longest secret first, none overlapping.
        var spans: [Range<Int>] = []
        for secret in secrets {
            var index = 0
            while let match = firstRange(of: secret, in: decoded.bytes, from: index) {
                let span = decoded.spans[match.lowerBound].lowerBound..<decoded.spans[match.upperBound - 1].upperBound
                if !spans.contains(where: { $0.overlaps(span) }) { spans.append(span) }
                index = match.upperBound
            }
        }
        guard !spans.isEmpty else { return bytes }
        var out: [UInt8] = []
        var copiedUpTo = 0
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            out.append(contentsOf: bytes[copiedUpTo..<span.lowerBound])
            out.append(contentsOf: placeholder.utf8)
            copiedUpTo = span.upperBound
        }
        out.append(contentsOf: bytes[copiedUpTo...])
        return out
    }

    /// The first occurrence of `needle` (not empty) in `haystack` at or after `start`.
    private static func firstRange(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard let first = needle.first, start + needle.count <= haystack.count else { return nil }
        for index in start...(haystack.count - needle.count)
        where haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) {
            return index..<(index + needle.count)
        }
        return nil
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
}
