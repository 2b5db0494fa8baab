import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the document's bytes into UTF-8 for libxml2, in any chunking.
///
/// The encoding is chosen as XML 1.0 Appendix F and RFC 7303 §3.2 (the HTTP charset is used
/// only when the document says nothing itself) describe it:
/// 1. a byte order mark (UTF-8, UTF-16LE/BE, UTF-32LE/BE), removed; or the first four bytes
///    of `<?` in UTF-16 or UTF-32 without a mark;
/// 2. the `encoding` of the XML declaration, in an ASCII-compatible document;
/// 3. `charset`, the encoding given outside the document (the HTTP `Content-Type` charset);
/// 4. UTF-8.
///
/// UTF-8 passes through untouched. Anything else is converted with glibc's iconv; every
/// Korean label (EUC-KR, KS_C_5601-1987, windows-949, …, the WHATWG Encoding Standard's
/// "EUC-KR" labels) is read as CP949, Microsoft's superset of EUC-KR that Korean servers send
/// under those names (glibc's EUC-KR decoder turns CP949-only syllables such as 똠, bytes 8C 63,
/// into C1 controls; valid EUC-KR decodes identically). libxml2 is then told to ignore the
/// declaration's encoding (`XML_PARSE_IGNORE_ENC`).
///
/// Errors (`XMLParseError.Kind.encoding`): an unknown encoding name (only when it is the one
/// chosen), a declaration of UTF-16/32 in a document without 16/32-bit bytes, bytes invalid in
/// the chosen encoding, or a document ending inside a multi-byte character. Invalid UTF-8 is
/// reported by libxml2, also as `.encoding`.
final class XMLInputDecoder {
    /// The encoding given outside the document, for the next document (see the type's steps).
    var charset: String?
    /// The encoding the current document is read in, once known, e.g. `UTF-8`, `UTF-16LE`,
    /// `CP949`.
    private(set) var encoding: String?

    /// Bytes held until the encoding is known: the first 4, or the XML declaration.
    private var head: [UInt8] = []
    private var decided = false
    private var converter: iconv_t?
    /// The start of a multi-byte character cut by the end of the previous chunk.
    private var leftover: [UInt8] = []
    private let output: UnsafeMutablePointer<UInt8>
    private let outputCapacity = 64 * 1024
    /// Position in the converted text, for error messages (libxml2 has not seen the bad bytes).
    private var line = 1
    private var column = 1

    /// The longest XML declaration looked for before the encoding is decided.
    static let maxDeclarationBytes = 1024

    init() {
        output = .allocate(capacity: outputCapacity)
    }

    deinit {
        closeConverter()
        output.deallocate()
    }

    /// Forgets the current document (keeps `charset`).
    func reset() {
        closeConverter()
        head.removeAll(keepingCapacity: true)
        leftover.removeAll(keepingCapacity: true)
        decided = false
        encoding = nil
        line = 1
        column = 1
    }

    /// Converts the next chunk; `emit` receives UTF-8 pieces in order.
    func push(_ chunk: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard chunk.count > 0 else { return }
        if decided { return try convert(chunk, emit) }
        // Never more than the longest declaration looked for is held.
        let take = min(chunk.count, Self.maxDeclarationBytes - head.count)
        head.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<take]))
        guard let skip = try decide(final: false) else { return }
        try emitHead(skipping: skip, emit)
        if take < chunk.count { try convert(UnsafeRawBufferPointer(rebasing: chunk[take...]), emit) }
    }

    /// Ends the document: decides the encoding if the document was too short to, and fails
    /// when it ends inside a multi-byte character.
    func finish(_ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        if !decided, let skip = try decide(final: true) { try emitHead(skipping: skip, emit) }
        if !leftover.isEmpty {
            throw error("the document ends inside a multi-byte \(encoding ?? "") character (bytes \(hex(leftover)))")
        }
    }

    private func emitHead(skipping skip: Int, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let bytes = head
        head.removeAll(keepingCapacity: true)
        try bytes.withUnsafeBytes { raw in
            guard skip < raw.count else { return }
            try convert(UnsafeRawBufferPointer(rebasing: raw[skip...]), emit)
        }
    }

    // MARK: - Choosing the encoding

    /// Decides the encoding from `head` when it can; returns how many bytes of byte order mark
    /// to skip, or nil to wait for more input.
    private func decide(final: Bool) throws -> Int? {
        let h = head
        if h.count < 4 && !final { return nil }
        let b = h + [UInt8](repeating: 0xAA, count: max(0, 4 - h.count))  // no pattern uses 0xAA
        let marks: [([UInt8], String)] = [
            ([0xEF, 0xBB, 0xBF], "UTF-8"), ([0x00, 0x00, 0xFE, 0xFF], "UTF-32BE"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32LE"),
            ([0xFE, 0xFF], "UTF-16BE"), ([0xFF, 0xFE], "UTF-16LE"),
        ]
        for (mark, name) in marks where b.starts(with: mark) {
            try choose(name, from: "the byte order mark")
            return mark.count
        }
        let unmarked: [([UInt8], String)] = [
            ([0x00, 0x00, 0x00, 0x3C], "UTF-32BE"), ([0x3C, 0x00, 0x00, 0x00], "UTF-32LE"),
            ([0x00, 0x3C, 0x00, 0x3F], "UTF-16BE"), ([0x3C, 0x00, 0x3F, 0x00], "UTF-16LE"),
        ]
        for (pattern, name) in unmarked where b.starts(with: pattern) {
            try choose(name, from: "the document's first bytes")
            return 0
        }
        switch Self.declaredEncoding(h, final: final) {
        case .wait:
            return nil
        case .declared(let name):
            if Self.isWide(name) {
                throw error("the document declares encoding \"\(name)\" but its bytes are 8-bit, not \(name) (no byte order mark); declare the encoding it is in")
            }
            try choose(name, from: "the XML declaration")
        case .none:
            if let charset = charset?.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'")), !charset.isEmpty {
                try choose(charset, from: "the HTTP charset")
            } else {
                try choose("UTF-8", from: "the default")
            }
        }
        return 0
    }

    private enum Declaration { case wait, none, declared(String) }

    /// The `encoding` pseudo-attribute of an XML declaration at the start of `h` (XML 1.0
    /// §2.8, §4.3.3), read as ASCII.
    private static func declaredEncoding(_ h: [UInt8], final: Bool) -> Declaration {
        let open = Array("<?xml".utf8)
        let prefix = min(h.count, open.count)
        guard h[0..<prefix].elementsEqual(open[0..<prefix]) else { return .none }
        if h.count < open.count + 1 { return final ? .none : .wait }
        guard isSpace(h[open.count]) else { return .none }
        guard let end = firstIndex(of: [0x3F, 0x3E], in: h) else {   // "?>"
            return final || h.count >= maxDeclarationBytes ? .none : .wait
        }
        var i = open.count
        while i < end {
            while i < end && isSpace(h[i]) { i += 1 }
            let nameStart = i
            while i < end && isLetter(h[i]) { i += 1 }
            let name = String(decoding: h[nameStart..<i], as: UTF8.self)
            while i < end && isSpace(h[i]) { i += 1 }
            guard i < end, h[i] == UInt8(ascii: "="), !name.isEmpty else { return .none }
            i += 1
            while i < end && isSpace(h[i]) { i += 1 }
            guard i < end, h[i] == UInt8(ascii: "\"") || h[i] == UInt8(ascii: "'") else { return .none }
            let quote = h[i]
            i += 1
            let valueStart = i
            while i < end && h[i] != quote { i += 1 }
            guard i < end else { return .none }
            if name == "encoding" { return .declared(String(decoding: h[valueStart..<i], as: UTF8.self)) }
            i += 1
        }
        return .none
    }

    private static func firstIndex(of needle: [UInt8], in h: [UInt8]) -> Int? {
        guard h.count >= needle.count else { return nil }
        for i in 0...(h.count - needle.count) where h[i] == needle[0] && h[i + 1] == needle[1] { return i }
        return nil
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
    private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }

    /// UTF-16 and UTF-32 (and their UCS names): encodings whose bytes are never ASCII-compatible.
    private static func isWide(_ name: String) -> Bool {
        let n = name.uppercased().replacingOccurrences(of: "_", with: "-")
        return ["UTF-16", "UTF16", "UTF-32", "UTF32", "UCS-2", "UCS2", "UCS-4", "UCS4", "ISO-10646-UCS-2", "ISO-10646-UCS-4"]
            .contains { n.hasPrefix($0) }
    }

    /// WHATWG Encoding Standard labels of "EUC-KR" (which is windows-949), plus CP949's own names.
    private static let koreanLabels: Set<String> = [
        "cseuckr", "csksc56011987", "euc-kr", "euckr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989",
        "ksc5601", "ksc_5601", "windows-949", "cp949", "uhc", "ms949", "x-windows-949",
    ]

    /// Sets `encoding` and opens the converter for `label` (from `source`, for messages).
    private func choose(_ label: String, from source: String) throws {
        decided = true
        // XML 1.0 §4.3.3 EncName: [A-Za-z] ([A-Za-z0-9._] | '-')*. Anything else (iconv's
        // "//IGNORE" or "//TRANSLIT" suffixes included) is refused.
        let valid = label.utf8.first.map(Self.isLetter) == true && label.utf8.count <= 64
            && label.utf8.allSatisfy { Self.isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
        guard valid else {
            throw error("the encoding name \"\(label)\" from \(source) is not a valid encoding name")
        }
        let lower = label.lowercased()
        if lower == "utf-8" || lower == "utf8" {
            encoding = "UTF-8"
            return
        }
        let name = Self.koreanLabels.contains(lower) ? "CP949" : label.uppercased()
        guard let cd = iconv_open("UTF-8", name), cd != iconv_t(bitPattern: -1) else {
            throw error("unknown character encoding \"\(label)\" (from \(source)); the document cannot be read")
        }
        converter = cd
        encoding = name
    }

    // MARK: - Converting

    private func convert(_ chunk: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard chunk.count > 0 else { return }
        guard let converter else { return try emit(chunk) }
        if leftover.isEmpty {
            try convert(chunk, with: converter, emit)
        } else {
            let joined = leftover + chunk
            leftover.removeAll(keepingCapacity: true)
            try joined.withUnsafeBytes { try convert($0, with: converter, emit) }
        }
    }

    private func convert(_ chunk: UnsafeRawBufferPointer, with cd: iconv_t,
                         _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = chunk.baseAddress else { return }
        var input = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self))
        var inputLeft = chunk.count
        while inputLeft > 0 {
            var out: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(output).assumingMemoryBound(to: CChar.self)
            var outLeft = outputCapacity
            var inPointer: UnsafeMutablePointer<CChar>? = input
            let result = iconv(cd, &inPointer, &inputLeft, &out, &outLeft)
            let reason = errno
            if let inPointer { input = inPointer }
            let produced = outputCapacity - outLeft
            if produced > 0 {
                let bytes = UnsafeRawBufferPointer(start: output, count: produced)
                advancePosition(over: bytes)
                try emit(bytes)
            }
            if result == -1 {
                switch reason {
                case E2BIG:
                    continue
                case EINVAL:
                    // An incomplete character at the end: keep it for the next chunk.
                    leftover = Array(UnsafeRawBufferPointer(start: input, count: inputLeft))
                    return
                default:
                    let bad = Array(UnsafeRawBufferPointer(start: input, count: min(inputLeft, 4)))
                    throw error("bytes \(hex(bad)) are not valid \(encoding ?? "") text")
                }
            }
        }
    }

    private func advancePosition(over bytes: UnsafeRawBufferPointer) {
        for b in bytes {
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
    }

    private func closeConverter() {
        if let converter { iconv_close(converter) }
        converter = nil
    }

    private func error(_ message: String) -> XMLParseError {
        XMLParseError(kind: .encoding, line: decided ? line : 1, column: decided ? column : 1, message: message)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "0x%02X", $0) }.joined(separator: " ")
    }
}
