/// The byte-level pass that runs before yajl: it repairs strings, enforces the limits before
/// anything is buffered, and hands yajl only whole tokens.
///
/// yajl 2.1 rejects raw control characters and invalid UTF-8 in strings, decodes unpaired
/// `\uD800`–`\uDFFF` escapes into invalid UTF-8 (and drops the byte after a lone high
/// surrogate), accepts `\v` and `\f` as whitespace, and buffers a token split across chunks in
/// full, lexing it again from its first byte on every later chunk (quadratic in the token for
/// small chunks). This filter, in one pass over each byte:
/// - inside strings: escapes raw U+0000–U+001F, replaces each ill-formed UTF-8 subpart with
///   U+FFFD and each unpaired surrogate escape with `\uFFFD` (same length), counting each;
/// - outside strings: rejects any byte that cannot start or continue a token (with a message
///   naming it), tracks the depth, and rejects data after the one top-level value;
/// - bounds strings, numbers and depth as soon as they exceed `JSONLimits`;
/// - withholds a token that the input ends inside (a string, a number, a literal) until it is
///   complete, so yajl never buffers or re-lexes one: each byte is copied at most twice.
/// The output (`bytes[0..<count]`) is RFC 8259 JSON text for every document yajl then accepts;
/// `ready` bytes of it are whole tokens, to be given to yajl and then `discard`ed.
/// `anchors` map output positions back to document offsets for error reports.
///
/// A class over a struct: the filter is called once per piece of input, and inside `process`
/// the state is one `inout` value, with none of the per-access exclusivity checks of class
/// properties.
final class JSONInputFilter {
    typealias Failure = FilterState.Failure
    private var s: FilterState

    init(limits: JSONLimits) { s = FilterState(limits: limits) }
    deinit { s.deallocate() }

    /// The filtered bytes not yet discarded; `bytes[0..<ready]` is complete tokens.
    var bytes: UnsafeMutablePointer<UInt8> { s.bytes }
    var count: Int { s.count }
    /// Output bytes that are whole tokens: everything but a token the input ended inside.
    var ready: Int { s.ready }
    /// Nesting depth at the end of the input so far (exact for a valid prefix).
    var openContainers: Int { s.openContainers }
    var byteOrderMark: Bool { s.byteOrderMark }
    /// Document bytes processed so far.
    var consumed: Int { s.consumed }
    var repairs: JSONRepairs { s.repairs }

    func reset() { s.reset() }
    func process(_ p: UnsafePointer<UInt8>, _ n: Int) -> Failure? { s.process(p, n) }
    func finish() -> Failure? { s.finish() }
    func discard(_ r: Int) { s.discard(r) }
    func position(ofOut e: Int) -> (offset: Int, line: Int, column: Int) { s.position(ofOut: e) }
}

/// `JSONInputFilter`'s state and logic.
struct FilterState {
    /// The filtered bytes not yet discarded; `bytes[0..<ready]` is complete tokens.
    private(set) var bytes: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    private let maxDepth: Int
    private let maxString: Int
    private let maxNumber: Int
    /// `betweenClass` then `stringSpecial`, 256 bytes each: read through a pointer in the loop
    /// (a global array costs a lazy-initialization check and a bounds check per byte).
    private let tables: UnsafeMutablePointer<UInt8>

    private enum Mode { case start, between, string, bare }
    private var mode = Mode.start
    private var depth = 0
    /// True once the top-level value is complete: only whitespace may follow.
    private var valueComplete = false
    private var sawValue = false
    private var bomMatched = 0
    private(set) var byteOrderMark = false
    /// Document bytes processed so far (the offset of the next input byte).
    private(set) var consumed = 0
    private(set) var repairs = JSONRepairs()

    // The token being read (string or bare run), as output index and document offset.
    private var tokenStartOut = 0
    private var tokenStartOriginal = 0
    private var tokenFirstByte: UInt8 = 0
    // Inside a string: 0 none, 1 after a backslash, 2...5 after `\u` and (escape - 2) hex digits.
    private var escape = 0
    private var hexValue: UInt32 = 0
    private var escapeStartOut = 0
    // Inside a UTF-8 sequence: continuation bytes still needed and the range of the next one.
    private var utf8Need = 0
    private var utf8Low: UInt8 = 0x80
    private var utf8High: UInt8 = 0xBF
    private var utf8StartOut = 0
    /// Output index of a high-surrogate escape waiting for its low half, or -1.
    private var pendingHighOut = -1

    /// A point where output and document realign after a repair that changed the length:
    /// output index `out` is document offset `original`. `newline`: the repair was a raw LF.
    struct Anchor {
        var out: Int
        var original: Int
        var newline: Bool
    }
    /// Sorted by `out`; the first is always at output index 0.
    private(set) var anchors = [Anchor(out: 0, original: 0, newline: false)]
    /// LF bytes in the document before output index 0.
    private var linesBeforeOut0 = 0
    /// Document offset of the start of the line that holds output index 0.
    private var lineStartBeforeOut0 = 0

    /// A problem the filter found, at output index `out` (document offset `original`).
    struct Failure {
        var kind: JSONParseError.Kind
        var message: String
        var original: Int
        var out: Int
    }

    init(limits: JSONLimits) {
        maxDepth = limits.maxDepth
        maxString = limits.maxStringBytes
        maxNumber = limits.maxNumberBytes
        capacity = 64 * 1024
        bytes = .allocate(capacity: capacity)
        tables = .allocate(capacity: 512)
        tables.initialize(from: betweenClass + stringSpecial, count: 512)
    }

    func deallocate() {
        bytes.deallocate()
        tables.deallocate()
    }

    /// Output bytes that are whole tokens: everything but a token the input ended inside.
    var ready: Int {
        switch mode {
        case .string, .bare: return tokenStartOut
        case .start, .between: return count
        }
    }

    /// Nesting depth at the end of the input so far (exact for a valid prefix).
    var openContainers: Int { depth }

    /// Forgets the document; keeps the buffer.
    mutating func reset() {
        count = 0
        mode = .start
        depth = 0
        valueComplete = false
        sawValue = false
        bomMatched = 0
        byteOrderMark = false
        consumed = 0
        repairs = JSONRepairs()
        escape = 0
        utf8Need = 0
        pendingHighOut = -1
        anchors = [Anchor(out: 0, original: 0, newline: false)]
        linesBeforeOut0 = 0
        lineStartBeforeOut0 = 0
    }

    // MARK: - Filtering

    /// Filters the next `n` document bytes, appending to the output. Returns the first problem
    /// found, if any; the output then ends where it was found and `ready` excludes the token it
    /// is in. Must not be called again after a failure (until `reset`).
    mutating func process(_ p: UnsafePointer<UInt8>, _ n: Int) -> Failure? {
        let base = consumed
        consumed += n
        let between = UnsafePointer(tables)
        let special = UnsafePointer(tables + 256)
        var i = 0
        var run = 0  // first input byte not yet copied to the output
        reserve(n)

        @inline(__always) func flush(_ end: Int) {
            let length = end - run
            if length > 0 {
                reserve(length)
                (bytes + count).update(from: p + run, count: length)
                count += length
            }
            run = end
        }
        @inline(__always) func outIndex(_ at: Int) -> Int { count + (at - run) }
        func fail(_ kind: JSONParseError.Kind, _ message: String, at: Int) -> Failure {
            flush(at)
            return Failure(kind: kind, message: message, original: base + at, out: count)
        }

        if mode == .start {
            while i < n {
                let b = p[i]
                if b == utf8BOM[bomMatched] {
                    bomMatched += 1
                    i += 1
                    if bomMatched == 3 {
                        byteOrderMark = true
                        mode = .between
                        run = i
                        anchors = [Anchor(out: count, original: base + i, newline: false)]
                        break
                    }
                    continue
                }
                if bomMatched > 0 {
                    run = i
                    return Failure(kind: .encoding, message: "the document starts with a broken UTF-8 byte order mark (EF BB BF expected)", original: base + i, out: count)
                }
                if b == 0xFE || b == 0xFF {
                    return Failure(kind: .encoding, message: "the document starts with byte 0x\(hex(b)), a UTF-16 or UTF-32 byte order mark; JSON must be UTF-8 (RFC 8259 §8.1)", original: base + i, out: count)
                }
                mode = .between
                break
            }
            if mode == .start { return nil }
        }

        scan: while i < n {
            switch mode {
            case .start:
                break scan  // unreachable: handled above
            case .between:
                while i < n {
                    let b = p[i]
                    let c = between[Int(b)]
                    if c == Class.space {
                        i += b == 0x20 && i + 8 <= n && allSpaces(p + i) ? 8 : 1
                        continue
                    }
                    if valueComplete {
                        return fail(.malformed, "data after the end of the JSON value (\(describe(b))): a JSON text is exactly one value (RFC 8259 §2)", at: i)
                    }
                    sawValue = true
                    switch c {
                    case Class.open:
                        depth += 1
                        if depth > maxDepth {
                            return fail(.tooDeep, "objects and arrays nested deeper than \(maxDepth) (JSONLimits.maxDepth)", at: i)
                        }
                        i += 1
                    case Class.close:
                        if depth > 0 {
                            depth -= 1
                            if depth == 0 { valueComplete = true }
                        }
                        i += 1
                    case Class.punct:
                        i += 1
                    case Class.quote:
                        tokenStartOut = outIndex(i)
                        tokenStartOriginal = base + i
                        mode = .string
                        i += 1
                        continue scan
                    case Class.bare:
                        tokenStartOut = outIndex(i)
                        tokenStartOriginal = base + i
                        tokenFirstByte = b
                        mode = .bare
                        i += 1
                        continue scan
                    default:
                        // UTF-16 and UTF-32 put a NUL in byte 0 or 1 (RFC 4627 §3's detection).
                        if b == 0 && base + i - (byteOrderMark ? 3 : 0) <= 1 {
                            return fail(.encoding, "a NUL byte at byte \(base + i), the start of the document: it looks like UTF-16 or UTF-32; JSON must be UTF-8 (RFC 8259 §8.1)", at: i)
                        }
                        return fail(.malformed, unexpectedByteMessage(b), at: i)
                    }
                }
            case .bare:
                let soFar = base + i - tokenStartOriginal
                let stop = min(n, i + max(0, maxNumber + 1 - soFar))
                while i + 8 <= stop && allNumberBytes(p + i) { i += 8 }
                while i < stop && between[Int(p[i])] == Class.bare { i += 1 }
                let length = base + i - tokenStartOriginal
                if length > maxNumber {
                    flush(i)
                    let failure = isLetter(tokenFirstByte)
                        ? Failure(kind: .malformed, message: "an invalid literal: expected true, false or null", original: tokenStartOriginal, out: tokenStartOut)
                        : Failure(kind: .numberTooLarge, message: "a number longer than \(maxNumber) bytes (JSONLimits.maxNumberBytes)", original: tokenStartOriginal, out: tokenStartOut)
                    return failure
                }
                if i < n {
                    if let failure = leadingZero(p, run: run, end: i) { flush(i); return failure }
                    mode = .between
                    if depth == 0 { valueComplete = true }
                }
            case .string:
                if escape == 0 && utf8Need == 0 && pendingHighOut < 0 {
                    // Fast path: skip bytes that need nothing, within the length limit.
                    let soFar = base + i - tokenStartOriginal - 1
                    let stop = min(n, i + max(0, maxString + 1 - soFar))
                    while i + 8 <= stop && !hasStringSpecial(p + i) { i += 8 }
                    while i < stop && special[Int(p[i])] == 0 { i += 1 }
                }
                if base + i - tokenStartOriginal - 1 > maxString {
                    flush(i)
                    return Failure(kind: .stringTooLarge, message: "a string longer than \(maxString) bytes (JSONLimits.maxStringBytes)", original: tokenStartOriginal, out: tokenStartOut)
                }
                if i == n { break scan }
                let b = p[i]
                if utf8Need > 0 {
                    if b >= utf8Low && b <= utf8High {
                        utf8Need -= 1
                        utf8Low = 0x80
                        utf8High = 0xBF
                        i += 1
                        continue scan
                    }
                    // Ill-formed: the partial sequence becomes one U+FFFD; `b` is read again.
                    flush(i)
                    count = utf8StartOut
                    appendReplacementCharacter()
                    anchors.append(Anchor(out: count, original: base + i, newline: false))
                    repairs.invalidUTF8 += 1
                    utf8Need = 0
                    continue scan
                }
                if escape == 1 {
                    if b == UInt8(ascii: "u") {
                        escape = 2
                        hexValue = 0
                    } else {
                        escape = 0
                        if pendingHighOut >= 0 { flush(i); patchUnpaired(pendingHighOut); pendingHighOut = -1 }
                    }
                    i += 1  // any other escaped byte passes; yajl rejects the invalid ones
                    continue scan
                }
                if escape >= 2 {
                    guard let digit = hexDigit(b) else {
                        escape = 0  // not hex: yajl reports it; read `b` again
                        continue scan
                    }
                    hexValue = hexValue << 4 | digit
                    escape += 1
                    i += 1
                    if escape == 6 {
                        escape = 0
                        flush(i)
                        finishUnicodeEscape()
                    }
                    continue scan
                }
                if pendingHighOut >= 0 && b != UInt8(ascii: "\\") {
                    flush(i)
                    patchUnpaired(pendingHighOut)
                    pendingHighOut = -1
                }
                switch b {
                case UInt8(ascii: "\""):
                    i += 1
                    mode = .between
                    if depth == 0 { valueComplete = true }
                case UInt8(ascii: "\\"):
                    escapeStartOut = outIndex(i)
                    escape = 1
                    i += 1
                case 0..<0x20:
                    flush(i)
                    appendEscaped(controlCharacter: b)
                    i += 1
                    run = i
                    anchors.append(Anchor(out: count, original: base + i, newline: b == 0x0A))
                    repairs.controlCharacters += 1
                case 0x80...:
                    let (need, low, high) = utf8Lead(b)
                    if need == 0 {
                        flush(i)
                        appendReplacementCharacter()
                        i += 1
                        run = i
                        anchors.append(Anchor(out: count, original: base + i, newline: false))
                        repairs.invalidUTF8 += 1
                    } else {
                        utf8StartOut = outIndex(i)
                        utf8Need = need
                        utf8Low = low
                        utf8High = high
                        i += 1
                    }
                default:
                    i += 1
                }
            }
        }
        flush(n)
        return nil
    }

    /// Ends the document. Returns the problem when it ends inside a string or before any value;
    /// otherwise a number or literal at the very end becomes ready.
    mutating func finish() -> Failure? {
        switch mode {
        case .start:
            if bomMatched > 0 {
                return Failure(kind: .encoding, message: "the document starts with a broken UTF-8 byte order mark (EF BB BF expected)", original: consumed, out: count)
            }
            return Failure(kind: .truncated, message: "the document is empty: no JSON value", original: consumed, out: count)
        case .string:
            return Failure(kind: .truncated, message: "the document ended inside a string that starts at byte \(tokenStartOriginal)", original: consumed, out: count)
        case .bare:
            if let failure = leadingZero(bytes, run: 0, end: 0) { return failure }
            mode = .between
            if depth == 0 { valueComplete = true }
        case .between:
            break
        }
        if !sawValue {
            return Failure(kind: .truncated, message: "the document is empty: no JSON value", original: consumed, out: count)
        }
        return nil
    }

    /// The bare token that ends at input index `end` (its start in the output, its rest in
    /// `p[run..<end]`) as a number with a leading zero (`01`, `-007`), which RFC 8259 §6 forbids
    /// and yajl would report only as a missing comma.
    private func leadingZero(_ p: UnsafePointer<UInt8>, run: Int, end: Int) -> Failure? {
        guard tokenFirstByte == UInt8(ascii: "0") || tokenFirstByte == UInt8(ascii: "-") else { return nil }
        func byte(_ k: Int) -> UInt8? {
            let index = tokenStartOut + k
            if index < count { return bytes[index] }
            let input = run + index - count
            return input < end ? p[input] : nil
        }
        let isDigit = { (b: UInt8?) in b.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }
        let zero = byte(0) == UInt8(ascii: "-") ? 1 : 0
        guard byte(zero) == UInt8(ascii: "0"), isDigit(byte(zero + 1)) else { return nil }
        return Failure(kind: .malformed, message: "a number with a leading zero: RFC 8259 §6 allows none",
                       original: tokenStartOriginal, out: tokenStartOut)
    }

    /// Forgets the first `r` output bytes (given to yajl), keeping the mapping and line counts.
    mutating func discard(_ r: Int) {
        guard r > 0 else { return }
        // Lines: LF bytes in the discarded output, plus raw LFs repaired inside strings.
        var lines = countNewlines(bytes, r)
        if lines > 0 {
            var last = r - 1
            while bytes[last] != 0x0A { last -= 1 }
            lineStartBeforeOut0 = max(lineStartBeforeOut0, original(ofOut: last) + 1)
        }
        var kept: [Anchor] = [Anchor(out: 0, original: original(ofOut: r), newline: false)]
        for anchor in anchors {
            if anchor.out <= r {
                if anchor.newline {
                    lines += 1
                    lineStartBeforeOut0 = max(lineStartBeforeOut0, anchor.original)
                }
            } else {
                kept.append(Anchor(out: anchor.out - r, original: anchor.original, newline: anchor.newline))
            }
        }
        linesBeforeOut0 += lines
        anchors = kept
        if count > r { (bytes).update(from: bytes + r, count: count - r) }
        count -= r
        tokenStartOut -= r
        escapeStartOut -= r
        utf8StartOut -= r
        if pendingHighOut >= 0 { pendingHighOut -= r }
    }

    /// The document offset of output index `e`.
    func original(ofOut e: Int) -> Int {
        var anchor = anchors[0]
        for a in anchors where a.out <= e { anchor = a }
        return anchor.original + (e - anchor.out)
    }

    /// Document offset, 1-based line and 1-based byte column of output index `e`.
    func position(ofOut e: Int) -> (offset: Int, line: Int, column: Int) {
        let e = min(max(0, e), count)
        let offset = original(ofOut: e)
        var lines = linesBeforeOut0
        var lineStart = lineStartBeforeOut0
        for i in 0..<e where bytes[i] == 0x0A {
            lines += 1
            lineStart = max(lineStart, original(ofOut: i) + 1)
        }
        for a in anchors where a.newline && a.out <= e {
            lines += 1
            lineStart = max(lineStart, a.original)
        }
        return (offset, lines + 1, max(1, offset - lineStart + 1))
    }

    // MARK: - Output helpers

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: bytes, count: count)
        bytes.deallocate()
        bytes = grown
        capacity = newCapacity
    }

    private mutating func append(_ byte: UInt8) {
        reserve(1)
        bytes[count] = byte
        count += 1
    }

    private mutating func appendReplacementCharacter() {
        append(0xEF); append(0xBF); append(0xBD)
    }

    private mutating func appendEscaped(controlCharacter b: UInt8) {
        append(UInt8(ascii: "\\"))
        switch b {
        case 0x08: append(UInt8(ascii: "b"))
        case 0x09: append(UInt8(ascii: "t"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0C: append(UInt8(ascii: "f"))
        case 0x0D: append(UInt8(ascii: "r"))
        default:
            append(UInt8(ascii: "u")); append(UInt8(ascii: "0")); append(UInt8(ascii: "0"))
            append(hexDigits[Int(b >> 4)]); append(hexDigits[Int(b & 0xF)])
        }
    }

    /// A `\uXXXX` escape just ended at the output's end (its backslash at `escapeStartOut`).
    private mutating func finishUnicodeEscape() {
        let value = hexValue
        let isLow = (0xDC00...0xDFFF).contains(value)
        if pendingHighOut >= 0 {
            if isLow && escapeStartOut == pendingHighOut + 6 {
                pendingHighOut = -1
                return
            }
            patchUnpaired(pendingHighOut)
            pendingHighOut = -1
        }
        if (0xD800...0xDBFF).contains(value) {
            pendingHighOut = escapeStartOut
        } else if isLow {
            patchUnpaired(escapeStartOut)
        }
    }

    /// Rewrites the escape `\uDxxx` at output index `at` as `\uFFFD` (same length).
    private mutating func patchUnpaired(_ at: Int) {
        for k in 2..<6 { bytes[at + k] = k == 5 ? UInt8(ascii: "D") : UInt8(ascii: "F") }
        repairs.unpairedSurrogates += 1
    }
}

private let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF]
private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

// Eight bytes at a time (SWAR). For a word `v`, `~(((v & 0x7F…) + 0x7F…) | v | 0x7F…)` has the
// high bit set in exactly the zero bytes of `v`; `(v - 0x01…) & ~v & 0x80…` is non-zero when
// some byte of `v` is zero (it may also flag bytes above that one, fine for "any").
private let ones: UInt64 = 0x0101_0101_0101_0101
private let highs: UInt64 = 0x8080_8080_8080_8080
private let low7s: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

@inline(__always)
private func load8(_ p: UnsafePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
}

/// True when the 8 bytes at `p` are all spaces (indentation).
@inline(__always)
private func allSpaces(_ p: UnsafePointer<UInt8>) -> Bool {
    load8(p) == 0x2020_2020_2020_2020
}

/// The high bit of each byte of `v` that is zero, and of no other byte.
@inline(__always)
private func zeroBytes(_ v: UInt64) -> UInt64 {
    ~(((v & low7s) &+ low7s) | v | low7s)
}

/// True when the 8 bytes at `p` are all digits, `-` or `.` (the bytes of most numbers). A digit
/// `d` has `d ^ 0x30` below 10, so adding 0x76 to its low 7 bits leaves the high bit clear.
@inline(__always)
private func allNumberBytes(_ p: UnsafePointer<UInt8>) -> Bool {
    let w = load8(p)
    let t = w ^ (ones &* 0x30)
    let digits = ~(((t & low7s) &+ ones &* 0x76) | t) & highs
    let signs = zeroBytes(w ^ (ones &* 0x2D)) | zeroBytes(w ^ (ones &* 0x2E))
    return digits | signs == highs
}

/// True when some of the 8 bytes at `p` needs a look inside a string: `"`, `\`, a byte below
/// 0x20 or above 0x7F.
@inline(__always)
private func hasStringSpecial(_ p: UnsafePointer<UInt8>) -> Bool {
    let w = load8(p)
    let quote = w ^ (ones &* 0x22)
    let backslash = w ^ (ones &* 0x5C)
    let control = (w &- ones &* 0x20) & ~w
    let found = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | control | w
    return found & highs != 0
}

/// LF bytes in `p[0..<n]`: per word, the high bit of each LF byte moved to the low bit and
/// summed bytewise; the byte sums are added up every 255 words, before one can overflow.
private func countNewlines(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
    let lf = ones &* 0x0A
    var count = 0
    var i = 0
    while i + 8 <= n {
        var sums: UInt64 = 0
        var words = 0
        while words < 255 && i + 8 <= n {
            sums &+= zeroBytes(load8(p + i) ^ lf) >> 7
            i += 8
            words += 1
        }
        count += Int((sums &* ones) >> 56)
    }
    while i < n {
        if p[i] == 0x0A { count += 1 }
        i += 1
    }
    return count
}

/// Byte classes outside strings.
private enum Class {
    static let invalid: UInt8 = 0
    static let space: UInt8 = 1
    static let open: UInt8 = 2
    static let close: UInt8 = 3
    static let punct: UInt8 = 4
    static let quote: UInt8 = 5
    static let bare: UInt8 = 6
}

private let betweenClass: [UInt8] = {
    var table = [UInt8](repeating: Class.invalid, count: 256)
    for b in [0x20, 0x09, 0x0A, 0x0D] { table[b] = Class.space }  // RFC 8259 §2 whitespace only
    for b in "{[".utf8 { table[Int(b)] = Class.open }
    for b in "}]".utf8 { table[Int(b)] = Class.close }
    for b in ",:".utf8 { table[Int(b)] = Class.punct }
    table[Int(UInt8(ascii: "\""))] = Class.quote
    // Bytes of numbers and of the literals true, false, null.
    for b in "0123456789+-.eEtrufalsn".utf8 { table[Int(b)] = Class.bare }
    return table
}()

/// Bytes inside a string that need a look: quote, backslash, control characters, non-ASCII.
private let stringSpecial: [UInt8] = {
    var table = [UInt8](repeating: 0, count: 256)
    for b in 0..<0x20 { table[b] = 1 }
    for b in 0x80..<0x100 { table[b] = 1 }
    table[Int(UInt8(ascii: "\""))] = 1
    table[Int(UInt8(ascii: "\\"))] = 1
    return table
}()

/// Continuation bytes needed after lead byte `b` and the valid range of the first one
/// (Unicode 15 Table 3-7, well-formed UTF-8 byte sequences); need 0 for a byte that cannot lead.
@inline(__always)
private func utf8Lead(_ b: UInt8) -> (Int, UInt8, UInt8) {
    switch b {
    case 0xC2...0xDF: return (1, 0x80, 0xBF)
    case 0xE0: return (2, 0xA0, 0xBF)
    case 0xE1...0xEC, 0xEE...0xEF: return (2, 0x80, 0xBF)
    case 0xED: return (2, 0x80, 0x9F)
    case 0xF0: return (3, 0x90, 0xBF)
    case 0xF1...0xF3: return (3, 0x80, 0xBF)
    case 0xF4: return (3, 0x80, 0x8F)
    default: return (0, 0, 0)
    }
}

@inline(__always)
private func hexDigit(_ b: UInt8) -> UInt32? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
    default: return nil
    }
}

private func isLetter(_ b: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20)
}

/// Two lowercase hex digits.
func hex(_ b: UInt8) -> String {
    String(decoding: [hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]], as: UTF8.self)
}

/// One document byte named for a message: a printable ASCII character is quoted, any other byte
/// is given in hex (never a run of the document, which may hold a secret).
func describe(_ b: UInt8) -> String {
    switch b {
    case 0: return "a NUL byte (0x00)"
    case 0x01..<0x20, 0x7F: return "a control character (0x\(hex(b)))"
    case 0x80...: return "a non-ASCII byte (0x\(hex(b)))"
    default: return "'\(String(UnicodeScalar(b)))'"
    }
}

private func unexpectedByteMessage(_ b: UInt8) -> String {
    switch b {
    case UInt8(ascii: "/"):
        return "'/' outside a string: comments are not allowed in JSON (RFC 8259)"
    case UInt8(ascii: "'"):
        return "a single quote outside a string: JSON strings use double quotes (RFC 8259 §7)"
    case UInt8(ascii: "N"), UInt8(ascii: "I"):
        return "\(describe(b)) outside a string: NaN and Infinity are not JSON numbers (RFC 8259 §6)"
    case 0x0B, 0x0C:
        return "\(describe(b)) outside a string: JSON whitespace is only space, tab, LF and CR (RFC 8259 §2)"
    case 0x80...:
        return "\(describe(b)) outside a string: outside strings JSON is ASCII (RFC 8259 §2)"
    default:
        return "\(describe(b)) is not allowed outside a string"
    }
}
