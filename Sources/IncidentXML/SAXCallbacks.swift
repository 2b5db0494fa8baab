internal import CLibXML2

// The hot path of `XMLRecordReader`: libxml2 SAX2 callbacks working on one `ReaderState`
// reached through an `UnsafeMutablePointer`. Everything here is a plain value (ints and raw
// pointers), so the callbacks do no reference counting, no exclusivity checks and no heap
// allocation once the per-field buffers have grown to the size of the feed's values. The
// owning reader (a class) is called only once per record, per envelope value, per root
// element and per distinct element name.

/// A reusable byte buffer for one field's text; it keeps its capacity across records.
struct FieldBuffer {
    var bytes: UnsafeMutablePointer<UInt8>
    var count: Int
    var capacity: Int
}

/// A field whose text is being captured: its element's depth and its slot (record fields
/// first, then envelope fields).
struct OpenCapture {
    var depth: Int
    var slot: Int
}

/// What the callbacks need to know about one field slot.
struct FieldInfo {
    var pathStart: Int32      // first name id of the path in `ReaderState.paths`
    var pathLength: Int32
    var repeated: Bool
    var readsAttributes: Bool
    var capturesText: Bool
    var envelope: Bool
}

/// One entry of the element-name cache.
///
/// libxml2 interns every element name and namespace URI in the parser's dictionary
/// (`ctxt->dict`; SAX2 `startElementNs` hands out those interned pointers), so within one parser
/// context equal names have equal pointers. The cache maps the pair (local-name pointer, URI
/// pointer) to what the schema wants from that element, so each start tag costs one hash probe
/// instead of string comparisons. Entries are valid only for the context that produced the
/// pointers: the cache is cleared whenever a context is freed. Were a URI ever not interned, the
/// cache would only be less effective, never wrong, because dictionary strings live as long as
/// the context.
struct NameSlot {
    var name: UInt = 0            // local-name pointer bits; 0 = empty slot
    var uri: UInt = 0             // namespace-URI pointer bits; 0 = no namespace
    var id: Int32 = -1            // index into the schema's distinct names, or -1
    var record: Int32 = -1        // index into schema.recordElements, or -1
    var fieldStart: Int32 = 0     // record-field slots whose path ends with this name:
    var fieldCount: Int32 = 0     //   ReaderState.candidates[fieldStart ..< fieldStart + fieldCount]
    var envelopeStart: Int32 = 0  // envelope-field slots, likewise
    var envelopeCount: Int32 = 0
    var plainField: Int32 = -1    // the only record-field slot for this name, when it is a
                                  //   one-name, single, text-only field (the common case)
    var context = false           // the element of a context attribute
    var foreign = false           // in none of the schema's namespaces
}

/// The mutable parse state shared by the SAX callbacks; only trivial types.
struct ReaderState {
    var ctxt: xmlParserCtxtPtr?
    var owner: UnsafeMutableRawPointer   // the XMLRecordReader, unretained (it owns this state)
    var failed = false
    var finishing = false
    var sawRoot = false
    var depth = 0
    var recordDepth = 0       // depth of the open record element; 0 when outside records
    var recordIndex = 0
    var recordLine = 0
    var skipDepth = 0         // depth of the foreign element being skipped; 0 when none
    var contextDepth = 0      // depth of the innermost open context element; 0 when none
    var textRun = 0           // bytes of text since the last tag
    var recordBytes = 0       // bytes of text (and captured occurrences) inside the open record
    var recordOversized = OversizedRecord.no // the open record passed a limit: it is read for its id only
    var entityBytes = 0       // entity replacement bytes expanded so far
    var cdataPendingCR = false // the last CDATA block ended with CR
    var decodingAttribute = false // inside xmlStringLenDecodeEntities for a wanted attribute
    var recordHasProblems = false
    var pendingRepairs = 0    // substitutions met since the last event, not yet given to a record
    var recordRepairs = 0     // substitutions inside the open record
    var documentRepairs = 0   // substitutions in the document (markup repairs are the filter's)
    var substitutes: xmlDocPtr?        // entities made for undeclared names, general form
    var predefinedSubstitutes: xmlDocPtr? // the same, in the fast form for the main text

    let tracksPath: Bool      // some field's path has more than one name
    let fieldCount: Int       // record fields; envelope fields follow
    let slotCount: Int
    let fields: UnsafeMutablePointer<FieldInfo>
    let paths: UnsafeMutablePointer<Int32>
    let candidates: UnsafeMutablePointer<Int32>

    var open: UnsafeMutablePointer<OpenCapture>
    var openCount = 0
    var openBase = 0          // first capture opened inside the open record
    var buffers: UnsafeMutablePointer<FieldBuffer>
    var counts: UnsafeMutablePointer<Int32>   // occurrences in the open record (envelope: document)
    var isOpen: UnsafeMutablePointer<Bool>    // kept for repeated fields only

    var elements: UnsafeMutablePointer<Int32> // name id of the open element at each depth
    var elementCapacity: Int

    var cache: UnsafeMutablePointer<NameSlot>
    var cacheMask: Int
    var cacheUsed = 0

    let maxText: Int
    let maxRecord: Int
    let maxDepth: Int
    let maxEntityBytes: Int
}

/// Bytes counted against `XMLLimits.maxRecordBytes` for each kept occurrence, besides its text.
let occurrenceOverhead = 32

/// Which limit the open record passed, if any. Such a record is valid input that is too large:
/// it is read on, keeping only values of at most ``oversizedValueBytes`` and no more
/// occurrences, and delivered with a problem naming the limit (the caller sets it aside by its
/// id) instead of ending the document.
enum OversizedRecord: UInt8 {
    case no, record, text
}

/// The longest value kept once a record is over a limit: enough for any id.
let oversizedValueBytes = 1024

/// Largest name cache; past it the cache is cleared and refilled (a document with thousands of
/// distinct element names is odd, but must not grow memory without bound).
let maxNameCacheSlots = 4096

extension UnsafeMutablePointer where Pointee == ReaderState {
    /// The reader that owns this state (unretained: the reader outlives its parses).
    @inline(__always)
    var reader: XMLRecordReader {
        Unmanaged<XMLRecordReader>.fromOpaque(pointee.owner).takeUnretainedValue()
    }

    /// What the schema wants from the element `name` in namespace `uri`.
    @inline(__always)
    func classify(_ name: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) -> NameSlot {
        let n = UInt(bitPattern: name)
        let u = UInt(bitPattern: uri)
        let cache = pointee.cache
        let mask = pointee.cacheMask
        var i = Int(truncatingIfNeeded: ((n ^ (u &<< 7)) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            let entry = cache[i]
            if entry.name == n && entry.uri == u { return entry }
            if entry.name == 0 { return insertName(name, uri) }
            i = (i &+ 1) & mask
        }
    }

    /// Cache miss: ask the owner (string comparison against the schema) and remember.
    func insertName(_ name: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) -> NameSlot {
        if (pointee.cacheUsed + 1) * 2 > pointee.cacheMask + 1 {
            let capacity = pointee.cacheMask + 1
            if capacity < maxNameCacheSlots {
                rehash(capacity: capacity * 2)
            } else {
                pointee.cache.update(repeating: NameSlot(), count: capacity)
                pointee.cacheUsed = 0
            }
        }
        var entry = reader.classifySlow(name: name, uri: uri)
        entry.name = UInt(bitPattern: name)
        entry.uri = UInt(bitPattern: uri)
        let mask = pointee.cacheMask
        var i = Int(truncatingIfNeeded: ((entry.name ^ (entry.uri &<< 7)) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while pointee.cache[i].name != 0 { i = (i &+ 1) & mask }
        pointee.cache[i] = entry
        pointee.cacheUsed += 1
        return entry
    }

    func rehash(capacity: Int) {
        let old = pointee.cache
        let oldCapacity = pointee.cacheMask + 1
        let fresh = UnsafeMutablePointer<NameSlot>.allocate(capacity: capacity)
        fresh.initialize(repeating: NameSlot(), count: capacity)
        let mask = capacity - 1
        for j in 0..<oldCapacity where old[j].name != 0 {
            let e = old[j]
            var i = Int(truncatingIfNeeded: ((e.name ^ (e.uri &<< 7)) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
            while fresh[i].name != 0 { i = (i &+ 1) & mask }
            fresh[i] = e
        }
        old.deallocate()
        pointee.cache = fresh
        pointee.cacheMask = mask
    }

    /// Forgets every cached name (the pointers belong to a context that is going away).
    func clearNameCache() {
        pointee.cache.update(repeating: NameSlot(), count: pointee.cacheMask + 1)
        pointee.cacheUsed = 0
    }

    /// Appends text to buffer `slot`; false when the value would exceed `maxText`.
    @inline(__always)
    func append(slot: Int, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let buffer = pointee.buffers + slot
        let newCount = buffer.pointee.count + count
        if newCount > pointee.maxText { return false }
        if newCount > buffer.pointee.capacity { grow(buffer, to: newCount) }
        (buffer.pointee.bytes + buffer.pointee.count).update(from: bytes, count: count)
        buffer.pointee.count = newCount
        return true
    }

    func grow(_ buffer: UnsafeMutablePointer<FieldBuffer>, to needed: Int) {
        var capacity = Swift.max(64, buffer.pointee.capacity)
        while capacity < needed { capacity *= 2 }
        capacity = Swift.min(capacity, Swift.max(needed, pointee.maxText))
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        fresh.update(from: buffer.pointee.bytes, count: buffer.pointee.count)
        buffer.pointee.bytes.deallocate()
        buffer.pointee.bytes = fresh
        buffer.pointee.capacity = capacity
    }

    /// Records name `id` as the open element at `depth`, growing the path as needed.
    @inline(__always)
    func setElement(_ id: Int32, at depth: Int) {
        if depth >= pointee.elementCapacity {
            let capacity = Swift.max(depth + 1, pointee.elementCapacity * 2)
            let fresh = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
            fresh.update(from: pointee.elements, count: pointee.elementCapacity)
            pointee.elements.deallocate()
            pointee.elements = fresh
            pointee.elementCapacity = capacity
        }
        pointee.elements[depth] = id
    }

    /// Whether the ancestors of the element at `depth` end with the rest of field `slot`'s path.
    @inline(__always)
    func ancestorsMatch(_ info: FieldInfo, at depth: Int) -> Bool {
        let length = Int(info.pathLength)
        if length == 1 { return true }
        if length > depth { return false }
        let path = pointee.paths + Int(info.pathStart)
        for k in 1..<length where pointee.elements[depth - k] != path[length - 1 - k] { return false }
        return true
    }

    /// A start tag at `depth` matched the last name of these field slots: count each
    /// occurrence and start reading the ones whose whole path matches.
    func openFields(_ start: Int32, _ count: Int32, depth: Int, attributeCount: Int,
                    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        for k in Int(start)..<Int(start + count) {
            let slot = Int(pointee.candidates[k])
            let info = pointee.fields[slot]
            guard ancestorsMatch(info, at: depth) else { continue }
            let seen = pointee.counts[slot] + 1
            pointee.counts[slot] = seen
            if info.envelope && seen == 2 { reader.envelopeFieldRepeated(slot) }
            // A single field seen twice is a problem at the record's end (or of the envelope).
            if !info.repeated && seen > 1 { continue }
            if info.repeated && pointee.isOpen[slot] {
                // Nested in itself: it cannot be told apart from its enclosing occurrence.
                reader.addProblem("\(reader.fieldDescription(slot)) is nested in itself")
                continue
            }
            if info.repeated || info.readsAttributes {
                reader.beginOccurrence(slot, attributeCount: attributeCount, attributes)
                if pointee.failed { return }
            }
            if info.capturesText {
                if info.repeated { pointee.isOpen[slot] = true }
                pointee.buffers[slot].count = 0
                pointee.open[pointee.openCount] = OpenCapture(depth: depth, slot: slot)
                pointee.openCount += 1
            }
        }
    }

    /// Gives the substitutions met since the last event to the open record, if any.
    @inline(__always)
    func flushRepairs() {
        let pending = pointee.pendingRepairs
        if pending == 0 { return }
        pointee.pendingRepairs = 0
        if pointee.recordDepth != 0 { pointee.recordRepairs += pending }
    }

    /// Stops the parse with a reader-raised error at the current position.
    func fail(_ kind: XMLParseError.Kind, _ message: String) {
        if pointee.failed { return }
        var line = 0
        var column = 0
        if let input = pointee.ctxt?.pointee.input {
            line = Int(input.pointee.line)
            column = Int(input.pointee.col)
        }
        fail(with: XMLParseError(kind: kind, line: line, column: column, message: message))
    }

    /// Stops the parse with `error`; the first error wins.
    ///
    /// Sets `failed` (every callback returns at once from then on, and entity lookups return
    /// nothing, so no more expansion), `disableSAX`, and `instate = XML_PARSER_EOF`, which
    /// makes libxml2's loops end. This is the first half of libxml2's own `xmlHaltParser`; the
    /// second half, which `xmlStopParser` also runs, frees the input buffer, and libxml2 2.9.14
    /// (and this reader's CDATA callback) still read that buffer after a callback returns
    /// (found by fuzzing with ASan), so it is never called from a callback. The context is
    /// freed only by `reset()` or `deinit`.
    func fail(with error: any Error) {
        if pointee.failed { return }
        pointee.failed = true
        reader.recordFailure(error)
        guard let ctxt = pointee.ctxt else { return }
        ctxt.pointee.disableSAX = 1
        ctxt.pointee.instate = XML_PARSER_EOF
    }
}

@inline(__always)
private func readerState(_ ctx: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ReaderState>? {
    ctx?.assumingMemoryBound(to: ReaderState.self)
}

// MARK: - SAX2 callbacks

private func saxStartElement(
    _ ctx: UnsafeMutableRawPointer?,
    _ localname: UnsafePointer<xmlChar>?,
    _ prefix: UnsafePointer<xmlChar>?,
    _ uri: UnsafePointer<xmlChar>?,
    _ namespaceCount: Int32,
    _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
    _ attributeCount: Int32,
    _ defaultedCount: Int32,
    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    guard let s = readerState(ctx), let localname, !s.pointee.failed else { return }
    let depth = s.pointee.depth + 1
    s.pointee.depth = depth
    s.pointee.textRun = 0
    s.pointee.cdataPendingCR = false
    if depth > s.pointee.maxDepth {
        s.fail(.tooDeep, "elements nested deeper than \(s.pointee.maxDepth) levels")
        return
    }
    if s.pointee.skipDepth != 0 {
        s.flushRepairs()
        return
    }
    if !s.pointee.sawRoot {
        s.pointee.sawRoot = true
        s.reader.didStartRoot(name: localname, uri: uri)
    }
    let entry = s.classify(localname, uri)
    if s.pointee.tracksPath { s.setElement(entry.id, at: depth) }
    if entry.foreign && (s.pointee.recordDepth != 0 || s.pointee.openCount > 0) {
        s.pointee.skipDepth = depth
        s.flushRepairs()
        return
    }
    if s.pointee.recordDepth != 0 {
        s.flushRepairs()
        if entry.plainField >= 0 {
            let slot = Int(entry.plainField)
            let seen = s.pointee.counts[slot] + 1
            s.pointee.counts[slot] = seen
            if seen == 1 {
                s.pointee.buffers[slot].count = 0
                s.pointee.open[s.pointee.openCount] = OpenCapture(depth: depth, slot: slot)
                s.pointee.openCount += 1
            }
        } else if entry.fieldCount > 0 {
            s.openFields(entry.fieldStart, entry.fieldCount, depth: depth, attributeCount: Int(attributeCount), attributes)
        }
    } else if entry.record >= 0 {
        s.pointee.recordDepth = depth
        s.pointee.recordIndex = Int(entry.record)
        s.pointee.recordBytes = 0
        s.pointee.recordOversized = .no
        s.pointee.recordRepairs = s.pointee.pendingRepairs
        s.pointee.pendingRepairs = 0
        s.pointee.recordLine = Int(s.pointee.ctxt?.pointee.input?.pointee.line ?? 0)
        s.pointee.openBase = s.pointee.openCount
        s.pointee.counts.update(repeating: 0, count: s.pointee.fieldCount)
        s.reader.didStartRecord(attributeCount: Int(attributeCount), attributes)
    } else {
        s.pointee.pendingRepairs = 0
        if entry.context {
            s.reader.didStartContext(id: entry.id, depth: depth, attributeCount: Int(attributeCount), attributes)
        }
        if entry.envelopeCount > 0 {
            s.openFields(entry.envelopeStart, entry.envelopeCount, depth: depth, attributeCount: Int(attributeCount), attributes)
        }
    }
}

private func saxEndElement(
    _ ctx: UnsafeMutableRawPointer?,
    _ localname: UnsafePointer<xmlChar>?,
    _ prefix: UnsafePointer<xmlChar>?,
    _ uri: UnsafePointer<xmlChar>?
) {
    guard let s = readerState(ctx), !s.pointee.failed else { return }
    let depth = s.pointee.depth
    s.pointee.depth = depth - 1
    s.pointee.textRun = 0
    s.pointee.cdataPendingCR = false
    s.flushRepairs()
    if s.pointee.skipDepth != 0 {
        if depth == s.pointee.skipDepth { s.pointee.skipDepth = 0 }
        return
    }
    while s.pointee.openCount > 0 && s.pointee.open[s.pointee.openCount - 1].depth == depth {
        s.pointee.openCount -= 1
        let slot = s.pointee.open[s.pointee.openCount].slot
        let info = s.pointee.fields[slot]
        if info.envelope {
            s.reader.didEndEnvelopeField(slot: slot)
        } else if info.repeated || info.readsAttributes {
            // Single values are decoded at the record's end; occurrences now.
            s.pointee.isOpen[slot] = false
            s.reader.didEndOccurrence(slot: slot)
        }
    }
    if depth == s.pointee.recordDepth {
        s.pointee.recordDepth = 0
        s.pointee.openCount = s.pointee.openBase
        s.pointee.openBase = 0
        s.reader.didEndRecord()
    } else if depth == s.pointee.contextDepth {
        s.reader.didEndContext(depth: depth)
    }
}

/// Text: libxml2 calls this several times for one text node (buffer edges, each reference,
/// chunk boundaries); bytes are appended to every open capture and decoded once.
private func saxCharacters(_ ctx: UnsafeMutableRawPointer?, _ text: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let s = readerState(ctx), let text, length > 0, !s.pointee.failed else { return }
    s.pointee.cdataPendingCR = false
    s.flushRepairs()
    appendText(s, text, Int(length))
}

/// CDATA. libxml2 2.9's push parser passes CDATA bytes through without the line-end
/// normalization of XML 1.0 §2.11 (its pull parser and all text outside CDATA do normalize), so
/// CR LF and lone CR become LF here. A CR LF pair may straddle two calls: `cdataPendingCR`
/// remembers a CR that ended the previous block.
private func saxCDATA(_ ctx: UnsafeMutableRawPointer?, _ text: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let s = readerState(ctx), let text, length > 0, !s.pointee.failed else { return }
    s.flushRepairs()
    let count = Int(length)
    var start = 0
    if s.pointee.cdataPendingCR && text[0] == 0x0A { start = 1 }
    s.pointee.cdataPendingCR = false
    var i = start
    while i < count {
        if text[i] == 0x0D {
            if i > start { appendText(s, text + start, i - start) }
            withUnsafePointer(to: lineFeed) { appendText(s, $0, 1) }
            if s.pointee.failed { return }
            if i + 1 < count {
                if text[i + 1] == 0x0A { i += 1 }
            } else {
                s.pointee.cdataPendingCR = true
            }
            start = i + 1
        }
        i += 1
    }
    if count > start { appendText(s, text + start, count - start) }
    if s.pointee.failed { return }
    if s.pointee.cdataPendingCR && isFinalCDATABlock(s, text, count) {
        // The section ends here: an LF in the next section is not part of this CR LF.
        s.pointee.cdataPendingCR = false
    }
}

/// Whether this block is the last of its CDATA section: libxml2 2.9's push parser delivers a
/// section in 300-byte pieces while `]]>` is not yet in its buffer, and the rest at once when
/// it is, straight from the input buffer. Blocks not taken from the input buffer (CDATA inside
/// an entity's replacement text, parsed and normalized by the pull parser) are whole sections.
private func isFinalCDATABlock(_ s: UnsafeMutablePointer<ReaderState>, _ text: UnsafePointer<xmlChar>, _ count: Int) -> Bool {
    guard let input = s.pointee.ctxt?.pointee.input, let base = input.pointee.base,
          let end = input.pointee.end, text >= base, text < end else { return true }
    let after = text + count
    guard end - after >= 3 else { return false }
    return after[0] == UInt8(ascii: "]") && after[1] == UInt8(ascii: "]") && after[2] == UInt8(ascii: ">")
}

private let lineFeed: UInt8 = 0x0A

@inline(__always)
private func appendText(_ s: UnsafeMutablePointer<ReaderState>, _ text: UnsafePointer<xmlChar>, _ count: Int) {
    if s.pointee.failed { return }
    let run = s.pointee.textRun + count
    s.pointee.textRun = run
    let inRecord = s.pointee.recordDepth != 0
    if run > s.pointee.maxText {
        guard inRecord else {
            s.fail(.textTooLarge, "a text node is larger than \(s.pointee.maxText) bytes")
            return
        }
        if s.pointee.recordOversized == .no { s.pointee.recordOversized = .text }
    }
    var i = 0
    if inRecord {
        let recordBytes = s.pointee.recordBytes + count
        s.pointee.recordBytes = recordBytes
        if recordBytes > s.pointee.maxRecord && s.pointee.recordOversized == .no {
            s.pointee.recordOversized = .record
        }
        i = s.pointee.openBase
    }
    if s.pointee.skipDepth != 0 { return }   // text of a foreign element feeds nothing
    let end = s.pointee.openCount
    while i < end {
        let slot = s.pointee.open[i].slot
        if inRecord && s.pointee.recordOversized != .no {
            // Short values only (an id), and none grows long: memory stays bounded.
            if s.pointee.buffers[slot].count + count <= oversizedValueBytes { _ = s.append(slot: slot, text, count) }
        } else if !s.append(slot: slot, text, count) {
            guard inRecord else {
                s.fail(.textTooLarge, "a value is larger than \(s.pointee.maxText) bytes")
                return
            }
            s.pointee.recordOversized = .text
        }
        i += 1
    }
}

/// Structured errors: anything at error level or worse stops the parse; warnings are ignored.
/// Also installed as libxml2's per-thread structured handler while `xmlParseChunk` runs, because
/// libxml2 2.9 reports encoding-conversion failures without a parser context (it would print
/// them to stderr, return 81 and leave `wellFormed` set).
func saxStructuredError(_ ctx: UnsafeMutableRawPointer?, _ error: xmlErrorPtr?) {
    guard let s = readerState(ctx), let error, !s.pointee.failed else { return }
    if error.pointee.level.rawValue < XML_ERR_ERROR.rawValue { return }
    s.fail(with: makeParseError(error.pointee, state: s.pointee))
}

/// Whether libxml2 has consumed all input it was given (so an error there means "ran out").
private func inputExhausted(_ state: ReaderState) -> Bool {
    guard let input = state.ctxt?.pointee.input, let cur = input.pointee.cur, let end = input.pointee.end else {
        return true
    }
    return cur >= end
}

/// Maps one libxml2 error to an `XMLParseError`.
func makeParseError(_ error: xmlError, state: ReaderState) -> XMLParseError {
    let code = Int(error.code)
    var message = error.message.map { String(cString: $0) } ?? "libxml2 error \(code)"
    if code == Int(XML_ERR_INVALID_ENCODING.rawValue) && error.message == nil {
        message = "input conversion failed: bytes invalid in the document's encoding"
    }
    while let last = message.last, last.isWhitespace { message.removeLast() }
    let kind: XMLParseError.Kind
    if state.finishing && (state.depth > 0 || !state.sawRoot)
        && (code == Int(XML_ERR_DOCUMENT_END.rawValue) || code == Int(XML_ERR_DOCUMENT_EMPTY.rawValue)
            || inputExhausted(state)) {
        // At the end of input, libxml2 reports "Extra content at the end of the document" (or
        // an error at the very end of the data) when the root element never closed: say so,
        // naming the innermost open element (`ctxt->name`, markup, never a value).
        kind = .truncated
        if state.sawRoot {
            let inside = state.ctxt?.pointee.name.map { "<\(String(cString: $0).prefix(64))>" } ?? "an element"
            let open = "\(state.depth) element\(state.depth == 1 ? "" : "s") still open"
            message = "the document ended inside \(inside), with \(open) (libxml2: \(message))"
        }
    } else if code == Int(XML_ERR_INVALID_CHAR.rawValue)
                && (message.hasPrefix("Input is not proper") || message.hasSuffix("out of allowed range")) {
        // "Char 0x… out of allowed range" comes from libxml2's UTF-8 decoder; past the
        // character filter it can only be a surrogate encoded in UTF-8, ill-formed UTF-8
        // (RFC 3629 §3) like any other invalid byte sequence.
        kind = .encoding
    } else {
        switch UInt32(truncatingIfNeeded: code) {
        case XML_ERR_DOCUMENT_EMPTY.rawValue:
            kind = .truncated
        case XML_ERR_ENTITY_LOOP.rawValue:
            kind = .entityExpansion
        case XML_ERR_UNKNOWN_ENCODING.rawValue, XML_ERR_UNSUPPORTED_ENCODING.rawValue,
             XML_ERR_INVALID_ENCODING.rawValue:
            kind = .encoding
        case XML_ERR_INTERNAL_ERROR.rawValue where message.hasPrefix("Excessive depth"):
            kind = .tooDeep
        default:
            kind = error.domain == Int32(XML_FROM_I18N.rawValue) ? .encoding : .malformed
        }
    }
    return XMLParseError(kind: kind, line: Int(error.line), column: Int(error.int2), message: message, code: code)
}

// MARK: - DTD support: internal entities are expanded (bounded); external ones are refused

/// `<!DOCTYPE …>`: libxml2 keeps entity declarations in a document, so make one (only
/// documents with a DOCTYPE pay for it); the reader frees it with the context.
private func saxInternalSubset(
    _ ctx: UnsafeMutableRawPointer?,
    _ name: UnsafePointer<xmlChar>?,
    _ externalID: UnsafePointer<xmlChar>?,
    _ systemID: UnsafePointer<xmlChar>?
) {
    guard let s = readerState(ctx), let ctxt = s.pointee.ctxt, !s.pointee.failed else { return }
    if ctxt.pointee.myDoc == nil { xmlSAX2StartDocument(UnsafeMutableRawPointer(ctxt)) }
    xmlSAX2InternalSubset(UnsafeMutableRawPointer(ctxt), name, externalID, systemID)
}

private func saxEntityDecl(
    _ ctx: UnsafeMutableRawPointer?,
    _ name: UnsafePointer<xmlChar>?,
    _ type: Int32,
    _ publicID: UnsafePointer<xmlChar>?,
    _ systemID: UnsafePointer<xmlChar>?,
    _ content: UnsafeMutablePointer<xmlChar>?
) {
    guard let s = readerState(ctx), let ctxt = s.pointee.ctxt, !s.pointee.failed else { return }
    xmlSAX2EntityDecl(UnsafeMutableRawPointer(ctxt), name, type, publicID, systemID, content)
}

/// Every reference to an entity other than the five predefined ones passes here. A declared
/// entity is checked (`admit`); any other name gets a substitute (`substitute`).
private func saxGetEntity(_ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?) -> xmlEntityPtr? {
    guard let s = readerState(ctx), let ctxt = s.pointee.ctxt, let name, !s.pointee.failed else { return nil }
    if let entity = xmlSAX2GetEntity(UnsafeMutableRawPointer(ctxt), name) { return admit(entity, state: s) }
    return substitute(name, state: s)
}

/// The entity an undeclared reference reads as: an HTML 4 named entity (`&nbsp;`, `&eacute;`,
/// `&hellip;`, … from libxml2's `htmlEntityLookup`) as its character, any other name (and the
/// filter's `_:r`) as U+FFFD. Each substitution is counted once, where libxml2 meets the
/// reference (not again when a wanted attribute value is decoded).
///
/// The entities live in two documents of the reader's own, freed with the parser context: a
/// general internal entity, which libxml2 expands anywhere (text, attribute values, inside other
/// entities) by parsing its replacement text, and, for references in the main document's text
/// only (`instate` content, entity depth 0), the same entity marked predefined, which libxml2
/// hands to `characters` directly, about 20 times faster. Predefined entities must not reach
/// attribute values: libxml2 2.9 copies only their first byte there.
private func substitute(_ name: UnsafePointer<xmlChar>, state s: UnsafeMutablePointer<ReaderState>) -> xmlEntityPtr? {
    guard let ctxt = s.pointee.ctxt else { return nil }
    let fast = !s.pointee.decodingAttribute && ctxt.pointee.instate == XML_PARSER_CONTENT && ctxt.pointee.depth == 0
    if !s.pointee.decodingAttribute {
        s.pointee.pendingRepairs += 1
        s.pointee.documentRepairs += 1
    }
    guard let document = fast ? substituteDocument(&s.pointee.predefinedSubstitutes)
                               : substituteDocument(&s.pointee.substitutes) else { return nil }
    let html = htmlEntityLookup(name)
    return XMLCharacterFilter.replacementEntityName.withCString { replacement in
        replacement.withMemoryRebound(to: xmlChar.self, capacity: 4) { replacement in
            let key = html != nil ? name : replacement
            if let entity = xmlGetDocEntity(document, key) { return entity }
            var content = Array(String(UnicodeScalar(html?.pointee.value ?? 0xFFFD) ?? "\u{FFFD}").utf8)
            content.append(0)
            guard let entity = xmlAddDocEntity(document, key, Int32(XML_INTERNAL_GENERAL_ENTITY.rawValue), nil, nil, content)
            else { return nil }
            if fast { entity.pointee.etype = XML_INTERNAL_PREDEFINED_ENTITY }
            return entity
        }
    }
}

/// The reader's document holding substitute entities, made on first use.
private func substituteDocument(_ document: inout xmlDocPtr?) -> xmlDocPtr? {
    if let document { return document }
    guard let fresh = xmlNewDoc(nil) else { return nil }
    guard xmlCreateIntSubset(fresh, nil, nil, nil) != nil else {
        xmlFreeDoc(fresh)
        return nil
    }
    document = fresh
    return fresh
}

private func saxGetParameterEntity(_ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?) -> xmlEntityPtr? {
    guard let s = readerState(ctx), let ctxt = s.pointee.ctxt, !s.pointee.failed else { return nil }
    guard let entity = xmlSAX2GetParameterEntity(UnsafeMutableRawPointer(ctxt), name) else { return nil }
    return admit(entity, state: s)
}

private func admit(_ entity: xmlEntityPtr, state s: UnsafeMutablePointer<ReaderState>) -> xmlEntityPtr? {
    let name = entity.pointee.name.map { String(cString: $0) } ?? "?"
    switch entity.pointee.etype {
    case XML_INTERNAL_PREDEFINED_ENTITY:
        return entity
    case XML_INTERNAL_GENERAL_ENTITY, XML_INTERNAL_PARAMETER_ENTITY:
        let total = s.pointee.entityBytes + Int(entity.pointee.length) + 1
        s.pointee.entityBytes = total
        if total > s.pointee.maxEntityBytes {
            s.fail(.entityExpansion, "entity expansion exceeded \(s.pointee.maxEntityBytes) bytes (at entity '\(name)')")
            return nil
        }
        return entity
    default:
        s.fail(.externalEntity, "reference to external entity '\(name)' refused: external entities are never loaded")
        return nil
    }
}

/// The SAX2 handler every reader uses.
func makeSAXHandler() -> xmlSAXHandler {
    var handler = xmlSAXHandler()
    handler.initialized = UInt32(XML_SAX2_MAGIC)
    handler.startElementNs = saxStartElement
    handler.endElementNs = saxEndElement
    handler.characters = saxCharacters
    handler.cdataBlock = saxCDATA
    // Same function as `characters`, so libxml2 never classifies text as ignorable.
    handler.ignorableWhitespace = saxCharacters
    handler.serror = saxStructuredError
    handler.internalSubset = saxInternalSubset
    handler.entityDecl = saxEntityDecl
    handler.getEntity = saxGetEntity
    handler.getParameterEntity = saxGetParameterEntity
    // externalSubset, resolveEntity, reference: deliberately unset (no external loading; an
    // undeclared entity gets a substitute from getEntity, never silently skipped).
    return handler
}
