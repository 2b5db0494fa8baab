/// Rewrites characters XML 1.0 forbids so that libxml2 reads them as U+FFFD instead of
/// rejecting the whole document. Works on UTF-8 only (after `XMLInputDecoder`), in any
/// chunking: a sequence cut by a chunk boundary is held back until it is complete.
///
/// What is illegal (XML 1.0 §2.2 `Char`): C0 controls other than TAB, LF and CR (raw, or
/// written as a character reference such as `&#1;`, `&#x1F;`, `&#0;`), U+FFFE and U+FFFF (raw
/// or referenced), surrogates and values beyond U+10FFFF (referenced: `&#xD800;`,
/// `&#x110000;`). A surrogate encoded in UTF-8 (ED A0–BF xx) is ill-formed UTF-8 (RFC 3629
/// §3) and left to libxml2, which rejects the document like any invalid byte sequence;
/// looking for its lead byte, which starts a quarter of all Hangul syllables, would cost
/// throughput on every Korean document.
///
/// The replacement depends on where the character is, which the filter follows with a small
/// lexical state machine (`<!--` … `-->`, `<?` … `?>`, `<![CDATA[` … `]]>`, everything else):
/// - in text, attribute values and the DTD: a reference to the entity `_:r`
///   (`replacementEntityName`), which the reader's `getEntity` defines as U+FFFD and counts
///   where libxml2 meets it, so the count lands on the right record;
/// - in a CDATA section: the section is closed around that reference
///   (`]]>&_:r;<![CDATA[`);
/// - in a comment or processing instruction: U+FFFD itself, counted in `markupRepairs` (never
///   part of any value).
/// (A control inside a tag but outside an attribute value gets the reference too; such a
/// document is malformed either way, and libxml2 rejects it at that tag.)
/// Character references are rewritten only where libxml2 reads them (not in CDATA, comments
/// or processing instructions), and only when complete within 32 bytes; legal references pass
/// unchanged. Literal `<!--`, `<?` or `<![CDATA[` inside a quoted DTD literal would mislead
/// the state machine (the DTD is rare in feeds and the effect is only a missed repair).
final class XMLCharacterFilter {
    /// The entity `getEntity` resolves to U+FFFD. A colon makes it a name no document can
    /// declare without a namespace error (Namespaces in XML 1.0 §7), so it cannot be shadowed.
    static let replacementEntityName = "_:r"
    private static let textReplacement = Array("&\(replacementEntityName);".utf8)
    private static let cdataReplacement = Array("]]>&\(replacementEntityName);<![CDATA[".utf8)
    private static let replacementCharacter: [UInt8] = [0xEF, 0xBF, 0xBD]
    private static let cdataOpener = Array("[CDATA[".utf8)
    /// Longest character reference followed; longer ones pass unchanged.
    static let maxReferenceBytes = 32
    /// Rewritten output is handed on in pieces of about this size, so a large chunk full of
    /// replacements never builds a large copy.
    static let flushBytes = 256 * 1024

    private enum Lexical { case text, bang, bangDash, cdataOpen, comment, processingInstruction, cdata }
    private enum Pending { case none, reference, utf8 }

    /// Characters replaced in comments and processing instructions.
    private(set) var markupRepairs = 0

    private var lexical = Lexical.text
    /// cdataOpen: bytes of "[CDATA[" matched; comment: dashes seen; processing instruction: 1
    /// after '?'; cdata: closing brackets seen.
    private var progress = 0
    private var lastByte: UInt8 = 0
    private var pending = Pending.none
    /// Bytes of the pending sequence that arrived in earlier chunks (not yet emitted).
    private var carry: [UInt8] = []
    private var pendingLength = 0
    private var referenceHex = false
    private var referenceDigits = 0
    private var referenceValue: UInt32 = 0
    private var out: [UInt8] = []

    /// Forgets the current document.
    func reset() {
        markupRepairs = 0
        lexical = .text
        progress = 0
        lastByte = 0
        pending = .none
        carry.removeAll(keepingCapacity: true)
    }

    /// Emits what the document's end leaves held back, unchanged.
    func finish(_ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        if pending != .none && !carry.isEmpty {
            try carry.withUnsafeBytes { try emit($0) }
        }
        pending = .none
        carry.removeAll(keepingCapacity: true)
    }

    /// Filters the next chunk; `emit` receives it (untouched when nothing needed replacing, which
    /// costs no copy) or its rewritten form.
    func process(_ chunk: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let raw = chunk.baseAddress, chunk.count > 0 else { return }
        let p = raw.assumingMemoryBound(to: UInt8.self)
        let n = chunk.count
        var cursor = Cursor(p: p)
        // -1: the pending sequence began in an earlier chunk (its bytes are in `carry`).
        var pendingStart = -1
        var i = 0
        out.removeAll(keepingCapacity: true)

        while i < n {
            if out.count >= Self.flushBytes {
                try out.withUnsafeBytes { try emit($0) }
                out.removeAll(keepingCapacity: true)
            }
            if pending != .none {
                let b = p[i]
                if pending == .reference {
                    if pendingLength == 1 {
                        if b == UInt8(ascii: "#") { pendingLength = 2; i += 1 } else { keepPending(pendingStart, &cursor) }
                    } else if pendingLength == 2 && b == UInt8(ascii: "x") && !referenceHex {
                        referenceHex = true
                        pendingLength += 1
                        i += 1
                    } else if let digit = Self.digit(b, hex: referenceHex) {
                        referenceValue = min(referenceValue &* (referenceHex ? 16 : 10) &+ digit, 0x110000)
                        referenceDigits += 1
                        pendingLength += 1
                        i += 1
                        if pendingLength > Self.maxReferenceBytes { keepPending(pendingStart, &cursor) }
                    } else if b == UInt8(ascii: ";") && referenceDigits > 0 {
                        i += 1
                        if Self.isXMLChar(referenceValue) {
                            keepPending(pendingStart, &cursor)
                        } else {
                            replacePending(pendingStart, through: i, with: Self.textReplacement, &cursor)
                        }
                    } else {
                        keepPending(pendingStart, &cursor)   // not a reference: b is read again
                    }
                } else {
                    let second = pendingLength == 1
                    let fits = second ? b == 0xBF : (b == 0xBE || b == 0xBF)
                    if !fits {
                        keepPending(pendingStart, &cursor)
                    } else if second {
                        pendingLength = 2
                        i += 1
                    } else {
                        i += 1
                        replacePending(pendingStart, through: i, with: replacement(), &cursor)
                    }
                }
                continue
            }

            switch lexical {
            case .text:
                i = Self.scanText(p, from: i, to: n)
                if i == n { break }
                let b = p[i]
                if b < 0x20 {
                    if b != 0x09 && b != 0x0A && b != 0x0D {
                        cursor.replace(i, through: i + 1, with: Self.textReplacement, into: &out)
                    }
                    i += 1
                } else if b == UInt8(ascii: "&") {
                    startPending(.reference, at: i, &pendingStart)
                    i += 1
                } else if b == UInt8(ascii: "!") || b == UInt8(ascii: "?") {
                    if (i > 0 ? p[i - 1] : lastByte) == UInt8(ascii: "<") {
                        lexical = b == UInt8(ascii: "!") ? .bang : .processingInstruction
                        progress = 0
                    }
                    i += 1
                } else {   // 0xEF: maybe U+FFFE or U+FFFF
                    startPending(.utf8, at: i, &pendingStart)
                    i += 1
                }
            case .bang, .bangDash, .cdataOpen:
                let b = p[i]
                if lexical == .bang && b == UInt8(ascii: "-") {
                    lexical = .bangDash
                } else if lexical == .bang && b == UInt8(ascii: "[") {
                    lexical = .cdataOpen
                    progress = 1
                } else if lexical == .bangDash && b == UInt8(ascii: "-") {
                    lexical = .comment
                    progress = 0
                } else if lexical == .cdataOpen && b == Self.cdataOpener[progress] {
                    progress += 1
                    if progress == Self.cdataOpener.count {
                        lexical = .cdata
                        progress = 0
                    }
                } else {
                    lexical = .text   // a declaration such as <!DOCTYPE: read b again as text
                    continue
                }
                i += 1
            case .comment, .processingInstruction, .cdata:
                let b = p[i]
                if b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D {
                    cursor.replace(i, through: i + 1, with: replacement(), into: &out)
                    i += 1
                    continue
                }
                if b == 0xEF {
                    startPending(.utf8, at: i, &pendingStart)
                    i += 1
                    continue
                }
                switch (lexical, b) {
                case (.comment, UInt8(ascii: "-")), (.cdata, UInt8(ascii: "]")):
                    progress += 1
                case (.processingInstruction, UInt8(ascii: "?")):
                    progress = 1
                case (.comment, UInt8(ascii: ">")) where progress >= 2,
                     (.cdata, UInt8(ascii: ">")) where progress >= 2,
                     (.processingInstruction, UInt8(ascii: ">")) where progress == 1:
                    lexical = .text
                    progress = 0
                default:
                    progress = 0
                }
                i += 1
            }
        }

        var end = n
        if pending != .none {
            if pendingStart < 0 {
                carry.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
                end = cursor.copyStart
            } else {
                carry.removeAll(keepingCapacity: true)
                carry.append(contentsOf: UnsafeBufferPointer(start: p + pendingStart, count: n - pendingStart))
                end = pendingStart
            }
        }
        lastByte = p[n - 1]
        if !cursor.modified {
            if end > 0 { try emit(UnsafeRawBufferPointer(start: p, count: end)) }
        } else {
            if end > cursor.copyStart { out.append(contentsOf: UnsafeBufferPointer(start: p + cursor.copyStart, count: end - cursor.copyStart)) }
            try out.withUnsafeBytes { try emit($0) }
        }
    }

    /// Where the chunk's unchanged bytes start, and whether anything was rewritten.
    private struct Cursor {
        let p: UnsafePointer<UInt8>
        var copyStart = 0
        var modified = false

        /// Replaces bytes `start..<end` of the chunk with `bytes`.
        mutating func replace(_ start: Int, through end: Int, with bytes: [UInt8], into out: inout [UInt8]) {
            if start > copyStart { out.append(contentsOf: UnsafeBufferPointer(start: p + copyStart, count: start - copyStart)) }
            out.append(contentsOf: bytes)
            copyStart = end
            modified = true
        }
    }

    private func startPending(_ kind: Pending, at i: Int, _ pendingStart: inout Int) {
        pending = kind
        pendingStart = i
        pendingLength = 1
        referenceHex = false
        referenceDigits = 0
        referenceValue = 0
    }

    /// The pending bytes stay as they were (the current byte, if not consumed, is read again).
    private func keepPending(_ pendingStart: Int, _ cursor: inout Cursor) {
        if pendingStart < 0 && !carry.isEmpty {
            // Bytes from earlier chunks go out first; this chunk's bytes follow unchanged.
            out.append(contentsOf: carry)
            cursor.modified = true
        }
        pending = .none
        carry.removeAll(keepingCapacity: true)
    }

    /// The pending sequence, which ends before `end`, is replaced with `bytes`.
    private func replacePending(_ pendingStart: Int, through end: Int, with bytes: [UInt8], _ cursor: inout Cursor) {
        if pendingStart < 0 {
            out.append(contentsOf: bytes)
            cursor.copyStart = end
            cursor.modified = true
        } else {
            cursor.replace(pendingStart, through: end, with: bytes, into: &out)
        }
        pending = .none
        carry.removeAll(keepingCapacity: true)
    }

    /// The replacement for an illegal character in the current lexical state.
    private func replacement() -> [UInt8] {
        switch lexical {
        case .cdata:
            progress = 0
            return Self.cdataReplacement
        case .comment, .processingInstruction:
            progress = 0
            markupRepairs += 1
            return Self.replacementCharacter
        case .text, .bang, .bangDash, .cdataOpen:
            lexical = .text
            return Self.textReplacement
        }
    }

    /// The index of the first byte at or after `from` that the text state must look at:
    /// a C0 control (TAB, LF and CR included), `&`, `!`, `?` or 0xEF; `to` when none. In a
    /// typical feed only `&amp;` stops it.
    ///
    /// Optimized builds use `scanTextByVectors`; debug builds (the tests') `scanTextByWords`,
    /// because unspecialized generic SIMD code is about 200 times slower there. Both give the
    /// same answer (FilterScanTests).
    @inline(__always)
    static func scanText(_ p: UnsafePointer<UInt8>, from: Int, to n: Int) -> Int {
        #if DEBUG
        return scanTextByWords(p, from: from, to: n)
        #else
        return scanTextByVectors(p, from: from, to: n)
        #endif
    }

    /// Thirty-two bytes a round as two 16-byte vectors, with lane-wise arithmetic only (SSE2
    /// after optimization, under 2 instructions a byte; `SIMD` comparisons, `any()` and 32-byte
    /// vector types are scalarized by this toolchain): a lane of `y` is zero exactly when
    /// `y &- 1` has its top bit set and `y`'s is clear. For the ASCII targets the top bit of
    /// `y = x ^ target` is the top bit of `x`, so one `~x` masks them all; for 0xEF it is the
    /// inverse, so `x` masks it.
    @inline(__always)
    static func scanTextByVectors(_ p: UnsafePointer<UInt8>, from: Int, to n: Int) -> Int {
        @inline(__always) func hits(_ x: SIMD16<UInt8>) -> SIMD16<UInt8> {
            let one = SIMD16<UInt8>(repeating: 1)
            let ascii = ((x & SIMD16(repeating: 0xE0)) &- one) | ((x ^ SIMD16(repeating: 0x26)) &- one)
                | ((x ^ SIMD16(repeating: 0x21)) &- one) | ((x ^ SIMD16(repeating: 0x3F)) &- one)
            return (ascii & ~x) | (((x ^ SIMD16(repeating: 0xEF)) &- one) & x)
        }
        var i = from
        let raw = UnsafeRawPointer(p)
        while i + 32 <= n {
            let both = hits(raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self))
                | hits(raw.loadUnaligned(fromByteOffset: i + 16, as: SIMD16<UInt8>.self))
            let words = unsafeBitCast(both, to: SIMD2<UInt64>.self)
            if (words[0] | words[1]) & 0x8080_8080_8080_8080 != 0 { break }
            i += 32
        }
        return scanTextTail(p, from: i, to: n)
    }

    /// The same test eight bytes at a time in a `UInt64` (SWAR). A borrow out of a zero byte
    /// can flag the byte above it, never hide one, so a flagged word is read byte by byte.
    @inline(__always)
    static func scanTextByWords(_ p: UnsafePointer<UInt8>, from: Int, to n: Int) -> Int {
        var i = from
        let raw = UnsafeRawPointer(p)
        let ones: UInt64 = 0x0101_0101_0101_0101
        while i + 8 <= n {
            let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let ascii = ((x & 0xE0E0_E0E0_E0E0_E0E0) &- ones) | ((x ^ 0x2626_2626_2626_2626) &- ones)
                | ((x ^ 0x2121_2121_2121_2121) &- ones) | ((x ^ 0x3F3F_3F3F_3F3F_3F3F) &- ones)
            let hits = (ascii & ~x) | (((x ^ 0xEFEF_EFEF_EFEF_EFEF) &- ones) & x)
            if hits & 0x8080_8080_8080_8080 != 0 { break }
            i += 8
        }
        return scanTextTail(p, from: i, to: n)
    }

    @inline(__always)
    private static func scanTextTail(_ p: UnsafePointer<UInt8>, from: Int, to n: Int) -> Int {
        var i = from
        while i < n {
            let b = p[i]
            if b < 0x20 || b == 0x26 || b == 0x21 || b == 0x3F || b == 0xEF { return i }
            i += 1
        }
        return n
    }

    private static func digit(_ b: UInt8, hex: Bool) -> UInt32? {
        switch b {
        case 0x30...0x39: return UInt32(b - 0x30)
        case 0x61...0x66 where hex: return UInt32(b - 0x61 + 10)
        case 0x41...0x46 where hex: return UInt32(b - 0x41 + 10)
        default: return nil
        }
    }

    /// XML 1.0 §2.2 `Char`.
    private static func isXMLChar(_ c: UInt32) -> Bool {
        switch c {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }
}
