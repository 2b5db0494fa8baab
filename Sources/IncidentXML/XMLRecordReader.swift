import Foundation
internal import CLibXML2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming, bounded-memory record reader over libxml2's SAX2 push parser.
///
/// Configure it with an `XMLRecordSchema`; feed the document in chunks of any size (`parse`),
/// then call `finish()`. `onRecord` receives one `XMLRecord` as soon as each record element
/// ends, with the `XMLEnvelope` read so far. Memory is bounded by one record and the `limits`,
/// not by the document: the reader keeps one reusable byte buffer per field and decodes each
/// value to a `String` once, at the end of its record (or of its occurrence).
///
/// Values: see `XMLRecord` and `XMLRecordSchema` (fields by path, single or repeated, exact
/// namespaces, foreign elements skipped). A record that is ambiguous (a single field twice) is
/// still delivered, with `XMLRecord.problems`, and the document goes on.
///
/// Encodings: byte order mark, then the XML declaration, then `charset` (the HTTP charset),
/// then UTF-8 (see `charset`). UTF-8, UTF-16LE/BE and UTF-32LE/BE, EUC-KR/CP949 and whatever
/// else glibc's iconv knows are read; libxml2 always sees UTF-8.
///
/// Repairs: one bad character does not reject the document. Characters XML forbids (C0
/// controls other than TAB, LF, CR; surrogates; U+FFFE, U+FFFF), raw or as character
/// references (`&#1;`, `&#x1F;`, `&#0;`, `&#xD800;`, `&#x110000;`), are read as U+FFFD; HTML 4
/// named entities that XML does not define (`&nbsp;`, `&eacute;`, `&hellip;`, …) as their
/// characters; a reference to any other undeclared entity (`&foo;`, or one an external DTD
/// that is never read might declare) as U+FFFD. Each substitution is counted in
/// `XMLRecord.repairs` for the record it is in and in `repairs` for the document. Bytes
/// invalid in the document's encoding are not repaired: they usually mean the whole document
/// is in another encoding, and substituting would corrupt every record, so they fail the
/// document (`.encoding`). Only a document that cannot be parsed is rejected, with libxml2's
/// line, column and message.
///
/// Untrusted input is safe: no network (`XML_PARSE_NONET`), never
/// `XML_PARSE_NOENT`/`DTDLOAD`/`HUGE`/recovery; internal entities from an internal DTD subset
/// are expanded within `XMLLimits.maxEntityExpansionBytes`; any reference to an external
/// entity fails with `.externalEntity` and loads nothing; the external DTD subset is never
/// read. Limits (defaults): text run or value 16 MiB, record 32 MiB (a record over either is
/// delivered with a problem, read for its short values only), depth 256, unfinished markup
/// 2 MiB, entity expansion 1 MiB; see `XMLLimits`.
///
/// Process-wide effects, once, when the first reader is created: `xmlInitParser()` and an
/// external-entity loader that refuses every URL (for every libxml2 user in the process). While
/// `xmlParseChunk` runs, the calling thread's libxml2 structured error handler is the
/// reader's (libxml2 reports some errors without a context), and the previous one is put back
/// after.
///
/// Errors: `parse`, `finish` and `parse(contentsOf:)` throw `XMLParseError` for malformed,
/// truncated, wrongly encoded or over-limit input, and rethrow whatever `onRecord` throws
/// unchanged (same type and value). After any error the reader refuses input (`.inputRefused`)
/// until `reset()`. Records delivered before an error stay delivered: roll back in the caller.
///
/// Not thread-safe: use one reader from one thread at a time. Sources: libxml2 2.9.14 API
/// (parser.h `xmlCreatePushParserCtxt`, `xmlParseChunk`; SAX2.h; HTMLparser.h
/// `htmlEntityLookup`), XML 1.0 (Fifth Edition), Namespaces in XML 1.0, RFC 7303.
public final class XMLRecordReader {
    /// What this reader extracts.
    public let schema: XMLRecordSchema
    /// The limits enforced on every document.
    public let limits: XMLLimits

    /// The character encoding given outside the document: the `charset` parameter of its HTTP
    /// `Content-Type` (see `charset(inContentType:)`). Used only when the document has neither a
    /// byte order mark nor an `encoding` in its XML declaration (XML 1.0 Appendix F); nil then
    /// means UTF-8. Read when a document's first bytes are examined, so set it before feeding a
    /// document; it stays set for the following ones (`reset()` keeps it). An unknown name is
    /// an `.encoding` error of the documents that need it.
    public var charset: String? {
        get { decoder.charset }
        set { decoder.charset = newValue }
    }

    /// The encoding the current document is read in, once its first bytes were examined, e.g.
    /// `UTF-8`, `UTF-16LE`, `CP949` (every Korean label reads as CP949).
    public var encoding: String? { decoder.encoding }

    /// Characters substituted so far in the current document (see "Repairs"): those inside
    /// records, and those outside them (envelope, comments, the DTD).
    public var repairs: Int { state.pointee.documentRepairs + filter.markupRepairs }

    private let onRecord: (XMLRecord, XMLEnvelope) throws -> Void
    private let compiled: CompiledSchema
    private let state: UnsafeMutablePointer<ReaderState>
    private let decoder = XMLInputDecoder()
    private let filter = XMLCharacterFilter()

    private var phase = Phase.idle
    /// True while libxml2 runs (and so while `onRecord` runs): libxml2 is not re-entrant.
    private var insideLibxml2 = false
    /// The first UTF-8 bytes, given to libxml2 when the push context is created.
    private var head: [UInt8] = []
    private var failure: (any Error)?

    /// The envelope read so far, kept whole: it goes out with every record, and one stored
    /// property costs one exclusivity check where four would cost four.
    private var currentEnvelope: XMLEnvelope
    /// Whether the schema has record attributes, context attributes, and fields that keep
    /// occurrences: per-record state the hot path then never touches.
    private let usesRecordAttributes: Bool
    private let usesContext: Bool
    private let usesOccurrences: Bool
    private var recordAttributeValues: [String?] = []
    private var occurrences: [XMLOccurrence] = []
    /// Index in `occurrences` of each record field slot's open occurrence.
    private var occurrenceIndex: [Int]
    private var recordProblems: [String] = []
    private var contextValues: [String?]
    private var contextProblems: [String] = []
    private var contextStack: [ContextFrame] = []

    private enum Phase { case idle, parsing, finished, failed }

    /// What an enclosing context element replaced, to restore at its end.
    private struct ContextFrame {
        var depth: Int
        var values: [String?]
        var problems: [String]
    }

    /// Largest piece handed to `xmlParseChunk` at once; also the granularity of the
    /// `maxMarkupBytes` check.
    static let pieceSize = 256 * 1024

    /// Creates a reader. `onRecord` is called on the calling thread, from inside `parse` or
    /// `finish`, once per record, in document order; what it throws stops the parse and comes
    /// out of that call unchanged.
    public init(
        schema: XMLRecordSchema,
        limits: XMLLimits = .default,
        onRecord: @escaping (XMLRecord, XMLEnvelope) throws -> Void
    ) {
        _ = libxml2Setup
        self.schema = schema
        self.limits = limits
        self.onRecord = onRecord
        let compiled = CompiledSchema(schema)
        self.compiled = compiled
        currentEnvelope = Self.emptyEnvelope(schema)
        usesRecordAttributes = !schema.recordAttributes.isEmpty
        usesContext = !schema.contextAttributes.isEmpty
        usesOccurrences = schema.fields.contains { $0.cardinality == .repeated || !$0.attributes.isEmpty }
        contextValues = Array(repeating: nil, count: schema.contextAttributes.count)
        occurrenceIndex = Array(repeating: -1, count: schema.fields.count)

        let slotCount = compiled.fieldInfos.count
        let capacity = max(1, slotCount)
        let buffers = UnsafeMutablePointer<FieldBuffer>.allocate(capacity: capacity)
        for i in 0..<slotCount {
            buffers.advanced(by: i).initialize(to: FieldBuffer(bytes: .allocate(capacity: 64), count: 0, capacity: 64))
        }
        func table<T>(_ values: [T], minimum: T) -> UnsafeMutablePointer<T> {
            let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(1, values.count))
            if values.isEmpty { pointer.initialize(to: minimum) } else { pointer.initialize(from: values, count: values.count) }
            return pointer
        }
        let counts = table(Array(repeating: Int32(0), count: slotCount), minimum: 0)
        let isOpen = table(Array(repeating: false, count: slotCount), minimum: false)
        let fields = table(compiled.fieldInfos, minimum: FieldInfo(pathStart: 0, pathLength: 0, repeated: false,
                                                                   readsAttributes: false, capturesText: false, envelope: false))
        let paths = table(compiled.paths, minimum: 0)
        let candidates = table(compiled.candidates, minimum: 0)
        // Each slot is captured at most once at a time, so the stack never exceeds slotCount.
        let open = UnsafeMutablePointer<OpenCapture>.allocate(capacity: capacity)
        let elementCapacity = 64
        let elements = UnsafeMutablePointer<Int32>.allocate(capacity: elementCapacity)
        elements.initialize(repeating: -1, count: elementCapacity)
        let cacheCapacity = 64
        let cache = UnsafeMutablePointer<NameSlot>.allocate(capacity: cacheCapacity)
        cache.initialize(repeating: NameSlot(), count: cacheCapacity)

        state = .allocate(capacity: 1)
        state.initialize(to: ReaderState(
            ctxt: nil,
            owner: UnsafeMutableRawPointer(open),  // replaced by self below
            tracksPath: compiled.fieldInfos.contains { $0.pathLength > 1 },
            fieldCount: schema.fields.count, slotCount: slotCount,
            fields: fields, paths: paths, candidates: candidates,
            open: open, buffers: buffers, counts: counts, isOpen: isOpen,
            elements: elements, elementCapacity: elementCapacity,
            cache: cache, cacheMask: cacheCapacity - 1,
            maxText: limits.maxTextBytes, maxRecord: limits.maxRecordBytes,
            maxDepth: limits.maxDepth, maxEntityBytes: limits.maxEntityExpansionBytes
        ))
        state.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        freeContext()
        for i in 0..<state.pointee.slotCount { state.pointee.buffers[i].bytes.deallocate() }
        state.pointee.buffers.deallocate()
        state.pointee.counts.deallocate()
        state.pointee.isOpen.deallocate()
        state.pointee.fields.deallocate()
        state.pointee.paths.deallocate()
        state.pointee.candidates.deallocate()
        state.pointee.open.deallocate()
        state.pointee.elements.deallocate()
        state.pointee.cache.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The envelope read so far: the root element (known after the first start tag) and the
    /// envelope field values seen so far (nil until seen).
    public var envelope: XMLEnvelope { currentEnvelope }

    private static func emptyEnvelope(_ schema: XMLRecordSchema) -> XMLEnvelope {
        XMLEnvelope(values: Array(repeating: nil, count: schema.envelopeFields.count),
                    attributes: schema.envelopeFields.map { Array(repeating: nil, count: $0.attributes.count) })
    }

    /// Parses the next chunk of the document; any size, split anywhere (even inside a
    /// multi-byte character or a byte order mark). Records completed by this chunk are
    /// delivered before it returns.
    ///
    /// - Throws: `XMLParseError`, or what `onRecord` threw (unchanged).
    public func parse(_ chunk: UnsafeRawBufferPointer) throws {
        try acceptInput()
        try run {
            try decoder.push(chunk) { utf8 in try filter.process(utf8) { try deliver($0) } }
        }
    }

    /// Parses the next chunk of the document; see `parse(_: UnsafeRawBufferPointer)`.
    public func parse(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses the next chunk of the document; see `parse(_: UnsafeRawBufferPointer)`.
    public func parse(_ data: Data) throws {
        try data.withUnsafeBytes { try parse($0) }
    }

    /// Ends the document (libxml2 `terminate = 1`) and delivers anything still pending.
    ///
    /// - Throws: `XMLParseError` `.truncated` when the root element is not closed or there was
    ///   no document at all; `.encoding` when it ends inside a multi-byte character; other kinds
    ///   as for `parse`; what `onRecord` threw, unchanged.
    public func finish() throws {
        try acceptInput()
        try run {
            try decoder.finish { utf8 in try filter.process(utf8) { try deliver($0) } }
            try filter.finish { try deliver($0) }
            if state.pointee.ctxt == nil { try startContext() }
            state.pointee.finishing = true
            try feed(nil, count: 0, terminate: true)
            if !state.pointee.sawRoot || state.pointee.depth != 0 {
                state.fail(.truncated, state.pointee.sawRoot ? "the document ended inside an element" : "the document is empty")
                try rethrowFailure()
            }
        }
        phase = .finished
    }

    /// Reads the file at `file` in chunks of `chunkSize` bytes (default 256 KiB), then calls
    /// `finish()`. `charset` is the encoding the file was served with (the HTTP charset; nil when
    /// none): it sets `self.charset`, which applies only if the document declares nothing itself.
    ///
    /// - Throws: `XMLParseError` `.io` when the file cannot be opened or read; otherwise as
    ///   `parse` and `finish`.
    public func parse(contentsOf file: URL, charset: String? = nil, chunkSize: Int = 256 * 1024) throws {
        try acceptInput()
        self.charset = charset
        let path = file.path
        let fd = open(path, O_RDONLY)
        if fd < 0 { throw ioError("cannot open \(path)") }
        defer { close(fd) }
        // The same loop as JSONRecordReader.parse(contentsOf:chunkSize:); the targets share no dependency.
        let size = max(1, chunkSize)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("cannot read \(path)")
            }
            if n == 0 { break }
            try parse(UnsafeRawBufferPointer(start: buffer, count: n))
        }
        try finish()
    }

    /// The `charset` parameter of an HTTP `Content-Type` value (RFC 9110 §8.3: parameter names
    /// are case-insensitive, values may be quoted), e.g. `EUC-KR` for
    /// `text/xml; charset="EUC-KR"`; nil when absent.
    public static func charset(inContentType contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2,
                  pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            let value = pair[1].trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"")))
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Forgets the current document (finished, failed or half-read) so the reader can read a
    /// new one; keeps its buffers and `charset`.
    ///
    /// Must not be called from inside `onRecord` (a programming error that traps): throw from
    /// `onRecord` to stop instead.
    public func reset() {
        precondition(!insideLibxml2, "XMLRecordReader.reset() called from inside onRecord")
        freeContext()
        decoder.reset()
        filter.reset()
        let slots = state.pointee.slotCount
        state.pointee.failed = false
        state.pointee.finishing = false
        state.pointee.sawRoot = false
        state.pointee.depth = 0
        state.pointee.recordDepth = 0
        state.pointee.skipDepth = 0
        state.pointee.contextDepth = 0
        state.pointee.textRun = 0
        state.pointee.recordBytes = 0
        state.pointee.entityBytes = 0
        state.pointee.cdataPendingCR = false
        state.pointee.decodingAttribute = false
        state.pointee.pendingRepairs = 0
        state.pointee.recordRepairs = 0
        state.pointee.documentRepairs = 0
        state.pointee.openCount = 0
        state.pointee.openBase = 0
        state.pointee.counts.update(repeating: 0, count: max(1, slots))
        state.pointee.isOpen.update(repeating: false, count: max(1, slots))
        for i in 0..<slots { state.pointee.buffers[i].count = 0 }
        phase = .idle
        head.removeAll(keepingCapacity: true)
        failure = nil
        currentEnvelope = Self.emptyEnvelope(schema)
        state.pointee.recordHasProblems = false
        occurrences.removeAll(keepingCapacity: true)
        recordProblems.removeAll(keepingCapacity: true)
        contextValues = Array(repeating: nil, count: schema.contextAttributes.count)
        contextProblems = []
        contextStack.removeAll()
    }

    // MARK: - Driving libxml2

    private func acceptInput() throws {
        if insideLibxml2 {
            throw XMLParseError(kind: .inputRefused, message: "parse or finish called from inside onRecord")
        }
        switch phase {
        case .idle, .parsing:
            return
        case .failed, .finished:
            throw XMLParseError(
                kind: .inputRefused,
                message: phase == .failed
                    ? "the reader stopped at an earlier error; call reset() to read another document"
                    : "the document was finished; call reset() to read another document")
        }
    }

    /// Runs `body`; any error stops the document (errors of the decoder are raised outside
    /// libxml2 and recorded here).
    private func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            if !state.pointee.failed { state.fail(with: error) }
            phase = .failed
            throw failure ?? error
        }
    }

    /// Hands UTF-8 to libxml2, creating the push context with the first four bytes.
    private func deliver(_ piece: UnsafeRawBufferPointer) throws {
        guard let base = piece.baseAddress, piece.count > 0 else { return }
        var offset = 0
        if state.pointee.ctxt == nil {
            let take = min(4 - head.count, piece.count)
            head.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[0..<take]))
            offset = take
            if head.count < 4 { return }
            try startContext()
        }
        while offset < piece.count {
            let count = min(Self.pieceSize, piece.count - offset)
            try feed(base + offset, count: count, terminate: false)
            offset += count
        }
    }

    private func startContext() throws {
        var handler = makeSAXHandler()
        let ctxt: xmlParserCtxtPtr? = routingErrors {
            head.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    xmlCreatePushParserCtxt(&handler, UnsafeMutableRawPointer(state),
                                            chars.count > 0 ? chars.baseAddress : nil, Int32(chars.count), nil)
                }
            }
        }
        guard let ctxt else {
            throw XMLParseError(kind: .malformed, message: "libxml2 could not create a parser context (out of memory)")
        }
        state.pointee.ctxt = ctxt
        // No network; the input is UTF-8 already (XMLInputDecoder), so the declaration's
        // encoding is ignored. None of NOENT, DTDLOAD, DTDATTR, DTDVALID, HUGE or RECOVER.
        _ = xmlCtxtUseOptions(ctxt, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_IGNORE_ENC.rawValue))
        phase = .parsing
        if state.pointee.failed {
            ctxt.pointee.disableSAX = 1
            ctxt.pointee.instate = XML_PARSER_EOF
            try rethrowFailure()
        }
    }

    private func feed(_ bytes: UnsafeRawPointer?, count: Int, terminate: Bool) throws {
        guard let ctxt = state.pointee.ctxt else { return }
        let rc = routingErrors {
            xmlParseChunk(ctxt, bytes?.assumingMemoryBound(to: CChar.self), Int32(count), terminate ? 1 : 0)
        }
        if !state.pointee.failed && rc != 0 {
            // libxml2 reported failure without an error-level diagnostic (warnings do not set
            // the return code): never continue silently.
            var error = ctxt.pointee.lastError
            if error.code == 0 {
                error.code = rc
                error.level = XML_ERR_FATAL
            }
            state.fail(with: makeParseError(error, state: state.pointee))
        }
        if !state.pointee.failed, let input = ctxt.pointee.input,
           let cur = input.pointee.cur, let end = input.pointee.end,
           end - cur > limits.maxMarkupBytes {
            state.fail(.markupTooLarge, "more than \(limits.maxMarkupBytes) bytes of unfinished markup (a start tag, comment, processing instruction, CDATA section or DTD)")
        }
        try rethrowFailure()
    }

    /// Runs `body` with this reader as the thread's libxml2 structured error handler, then
    /// puts back whatever handler the thread had. libxml2 2.9 raises some errors (encoding
    /// conversion among them) without a parser context; they would otherwise go to stderr and
    /// be lost.
    private func routingErrors<T>(_ body: () -> T) -> T {
        let previousHandler = __xmlStructuredError().pointee
        let previousContext = __xmlStructuredErrorContext().pointee
        xmlSetStructuredErrorFunc(UnsafeMutableRawPointer(state), saxStructuredError)
        insideLibxml2 = true
        defer {
            insideLibxml2 = false
            xmlSetStructuredErrorFunc(previousContext, previousHandler)
        }
        return body()
    }

    private func rethrowFailure() throws {
        if state.pointee.failed {
            phase = .failed
            throw failure ?? XMLParseError(kind: .malformed, message: "parse failed")
        }
    }

    private func freeContext() {
        if let ctxt = state.pointee.ctxt {
            if let doc = ctxt.pointee.myDoc {
                xmlFreeDoc(doc)
                ctxt.pointee.myDoc = nil
            }
            xmlFreeParserCtxt(ctxt)
            state.pointee.ctxt = nil
        }
        for document in [state.pointee.substitutes, state.pointee.predefinedSubstitutes] {
            if let document { xmlFreeDoc(document) }
        }
        state.pointee.substitutes = nil
        state.pointee.predefinedSubstitutes = nil
        // The cached name pointers belonged to that context's dictionary.
        state.clearNameCache()
    }

    private func ioError(_ what: String) -> XMLParseError {
        let reason = String(cString: strerror(errno))
        return XMLParseError(kind: .io, message: "\(what): \(reason)")
    }

    // MARK: - Called from the SAX callbacks (once per record, value, root or distinct name)

    func recordFailure(_ error: any Error) {
        if failure == nil { failure = error }
    }

    func didStartRoot(name: UnsafePointer<xmlChar>, uri: UnsafePointer<xmlChar>?) {
        currentEnvelope.rootElement = XMLName(String(cString: name), namespaceURI: uri.map { String(cString: $0) })
    }

    /// Cache miss in the element-name cache: compare against the schema.
    func classifySlow(name: UnsafePointer<xmlChar>, uri: UnsafePointer<xmlChar>?) -> NameSlot {
        compiled.classify(name, uri)
    }

    func fieldDescription(_ slot: Int) -> String { compiled.descriptions[slot] }

    /// A problem of the open record, or of the envelope outside records.
    func addProblem(_ problem: String) {
        if state.pointee.recordDepth != 0 {
            recordProblems.append(problem)
            state.pointee.recordHasProblems = true
        } else {
            currentEnvelope.problems.append(problem)
        }
    }

    func didStartRecord(attributeCount: Int, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        if usesContext && !contextProblems.isEmpty {
            recordProblems = contextProblems
            state.pointee.recordHasProblems = true
        }
        if usesRecordAttributes {
            let element = compiled.recordElementNames[state.pointee.recordIndex]
            recordAttributeValues = readAttributes(compiled.recordAttributes, of: element, attributeCount, attributes,
                                                   problems: &recordProblems)
            if !recordProblems.isEmpty { state.pointee.recordHasProblems = true }
        }
    }

    func didStartContext(id: Int32, depth: Int, attributeCount: Int, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard let wanted = compiled.contextAttributes[id] else { return }
        contextStack.append(ContextFrame(depth: state.pointee.contextDepth, values: contextValues, problems: contextProblems))
        let element = schema.contextAttributes[wanted[0].index].element.localName
        let values = readAttributes(wanted.map(\.attribute), of: element, attributeCount, attributes, problems: &contextProblems)
        for (k, entry) in wanted.enumerated() { contextValues[entry.index] = values[k] }
        state.pointee.contextDepth = depth
    }

    func didEndContext(depth: Int) {
        guard let frame = contextStack.popLast() else { return }
        contextValues = frame.values
        contextProblems = frame.problems
        state.pointee.contextDepth = frame.depth
    }

    /// A repeated field, or one that reads attributes, starts an occurrence (record fields), or
    /// an envelope field with attributes is met for the first time.
    func beginOccurrence(_ slot: Int, attributeCount: Int, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        let wanted = compiled.fieldAttributes[slot]
        let element = compiled.descriptions[slot]
        if slot >= state.pointee.fieldCount {
            currentEnvelope.attributes[slot - state.pointee.fieldCount] =
                readAttributes(wanted, of: element, attributeCount, attributes, problems: &currentEnvelope.problems)
            return
        }
        let values = wanted.isEmpty ? [] : readAttributes(wanted, of: element, attributeCount, attributes, problems: &recordProblems)
        if !recordProblems.isEmpty { state.pointee.recordHasProblems = true }
        let bytes = values.reduce(occurrenceOverhead) { $0 + ($1?.utf8.count ?? 0) }
        state.pointee.recordBytes += bytes
        if state.pointee.recordBytes > state.pointee.maxRecord && state.pointee.recordOversized == .no {
            state.pointee.recordOversized = .record
        }
        if state.pointee.recordOversized != .no {
            // No more occurrences: the record is read for its id only.
            occurrenceIndex[slot] = -1
            return
        }
        occurrenceIndex[slot] = occurrences.count
        occurrences.append(XMLOccurrence(field: slot, text: nil, attributes: values))
    }

    func didEndOccurrence(slot: Int) {
        let index = occurrenceIndex[slot]
        guard occurrences.indices.contains(index) else { return }
        occurrences[index].text = decodeTrimmed(state.pointee.buffers[slot])
    }

    func didEndEnvelopeField(slot: Int) {
        guard state.pointee.counts[slot] == 1 else { return }
        currentEnvelope.values[slot - state.pointee.fieldCount] = decodeTrimmed(state.pointee.buffers[slot])
    }

    /// A single envelope field occurs a second time: it is ambiguous, so it reads as nil.
    func envelopeFieldRepeated(_ slot: Int) {
        let index = slot - state.pointee.fieldCount
        currentEnvelope.values[index] = nil
        currentEnvelope.attributes[index] = Array(repeating: nil, count: currentEnvelope.attributes[index].count)
        currentEnvelope.problems.append("\(compiled.descriptions[slot]) occurs more than once")
    }

    func didEndRecord() {
        let oversized = state.pointee.recordOversized != .no
        switch state.pointee.recordOversized {
        case .no:
            break
        case .record:
            recordProblems.insert("the record is larger than the limit of \(state.pointee.maxRecord) bytes per record (XMLLimits.maxRecordBytes counts \(state.pointee.recordBytes)): only its short values were read, to name it", at: 0)
            state.pointee.recordHasProblems = true
        case .text:
            recordProblems.insert("a text of the record is larger than the limit of \(state.pointee.maxText) bytes (XMLLimits.maxTextBytes): only its short values were read, to name it", at: 0)
            state.pointee.recordHasProblems = true
        }
        state.pointee.recordOversized = .no
        let count = state.pointee.fieldCount
        let buffers = state.pointee.buffers
        let counts = state.pointee.counts
        let fields = state.pointee.fields
        var duplicated = false
        let values = [String?](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0..<count {
                let seen = counts[i]
                let info = fields[i]
                if info.repeated {
                    out.initializeElement(at: i, to: nil)
                    continue
                }
                if seen > 1 { duplicated = true }
                out.initializeElement(at: i, to: seen == 1 && info.capturesText ? decodeTrimmed(buffers[i]) : nil)
            }
            initialized = count
        }
        if duplicated {
            for i in 0..<count where !fields[i].repeated && counts[i] > 1 {
                recordProblems.append("\(compiled.descriptions[i]) occurs \(counts[i]) times")
                if usesOccurrences { occurrences.removeAll { $0.field == i } }
            }
            state.pointee.recordHasProblems = true
        }
        let hasProblems = state.pointee.recordHasProblems
        var record = XMLRecord(
            values: values,
            attributes: usesRecordAttributes ? recordAttributeValues : [],
            recordElementIndex: state.pointee.recordIndex,
            line: state.pointee.recordLine,
            occurrences: usesOccurrences ? occurrences : [],
            context: usesContext ? contextValues : [],
            problems: hasProblems ? recordProblems : [],
            repairs: state.pointee.recordRepairs)
        record.byteCount = state.pointee.recordBytes
        record.isOversized = oversized
        if usesOccurrences { occurrences.removeAll(keepingCapacity: true) }
        if hasProblems {
            recordProblems.removeAll(keepingCapacity: true)
            state.pointee.recordHasProblems = false
        }
        state.pointee.recordRepairs = 0
        do {
            try onRecord(record, currentEnvelope)
        } catch {
            state.fail(with: error)
        }
    }

    /// Reads the `wanted` attributes of an element from libxml2's SAX2 attribute quintuples;
    /// a QName that cannot be resolved reads as nil and adds a problem.
    private func readAttributes(_ wanted: [CompiledAttribute], of element: String, _ count: Int,
                                _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
                                problems: inout [String]) -> [String?] {
        var values = [String?](repeating: nil, count: wanted.count)
        guard let attributes else { return values }
        for a in 0..<count {
            // libxml2 SAX2 attribute quintuple: localname, prefix, URI, value start, value end.
            guard let local = attributes[a * 5], let start = attributes[a * 5 + 3],
                  let end = attributes[a * 5 + 4] else { continue }
            let uri = attributes[a * 5 + 2]
            guard let index = wanted.firstIndex(where: { $0.name.matches(local, uri) }) else { continue }
            let value = decodeAttribute(start, count: end - start)
            if wanted[index].resolvesQName {
                switch resolveQName(value) {
                case .success(let resolved):
                    values[index] = resolved
                case .failure(let reason):
                    problems.append("\(element)/@\(wanted[index].label) '\(value)' \(reason.message)")
                }
            } else {
                values[index] = value
            }
        }
        return values
    }

    /// Attribute values arrive with `&` written as `&#38;` and internal entity references left
    /// as `&name;` (libxml2 without `XML_PARSE_NOENT`); libxml2 resolves them here, through the
    /// same entity checks as text (substitutes were counted when libxml2 first met them).
    private func decodeAttribute(_ start: UnsafePointer<xmlChar>, count: Int) -> String {
        let raw = UnsafeBufferPointer(start: start, count: count)
        guard raw.contains(UInt8(ascii: "&")), let ctxt = state.pointee.ctxt else {
            return String(decoding: raw, as: UTF8.self)
        }
        state.pointee.decodingAttribute = true
        let decoded = xmlStringLenDecodeEntities(ctxt, start, Int32(count), Int32(XML_SUBSTITUTE_REF), 0, 0, 0)
        state.pointee.decodingAttribute = false
        guard let decoded else { return String(decoding: raw, as: UTF8.self) }
        // libxml2 allocates with xmlMalloc, which is malloc in this build (no xmlMemSetup).
        defer { free(decoded) }
        return String(cString: decoded)
    }

    private struct QNameFailure: Error { let message: String }

    /// `{uri}local` (or `local` in no namespace) for a QName value, through the namespace
    /// declarations libxml2 has in scope (`ctxt->nsTab`, innermost last).
    private func resolveQName(_ value: String) -> Result<String, QNameFailure> {
        let text = trimmedXMLSpace(value)
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }), !text.contains(where: { $0.isWhitespace }) else {
            return .failure(QNameFailure(message: "is not a QName"))
        }
        let prefix = parts.count == 2 ? String(parts[0]) : nil
        let local = String(parts[parts.count - 1])
        if prefix == "xml" { return .success(XMLName(local, namespaceURI: "http://www.w3.org/XML/1998/namespace").description) }
        if let ctxt = state.pointee.ctxt, let table = ctxt.pointee.nsTab {
            var i = Int(ctxt.pointee.nsNr) - 2
            while i >= 0 {
                let declared = table[i].map { String(cString: $0) }
                if declared == prefix {
                    let uri = table[i + 1].map { String(cString: $0) } ?? ""
                    return .success(XMLName(local, namespaceURI: uri.isEmpty ? nil : compiled.resolvedNamespace(uri)).description)
                }
                i -= 2
            }
        }
        if let prefix { return .failure(QNameFailure(message: "uses the undeclared prefix '\(prefix)'")) }
        return .success(local)   // no default namespace in scope
    }
}

@inline(__always)
private func isXMLSpace(_ b: UInt8) -> Bool {
    b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D
}

/// `text` without leading and trailing XML whitespace.
func trimmedXMLSpace(_ text: String) -> String {
    var bytes = Substring(text).utf8[...]
    while let first = bytes.first, isXMLSpace(first) { bytes = bytes.dropFirst() }
    while let last = bytes.last, isXMLSpace(last) { bytes = bytes.dropLast() }
    return String(decoding: bytes, as: UTF8.self)
}

/// The buffer's text with XML whitespace trimmed, or nil when nothing is left.
func decodeTrimmed(_ buffer: FieldBuffer) -> String? {
    let p = buffer.bytes
    var lo = 0
    var hi = buffer.count
    while lo < hi && isXMLSpace(p[lo]) { lo += 1 }
    while hi > lo && isXMLSpace(p[hi - 1]) { hi -= 1 }
    if lo == hi { return nil }
    return String(decoding: UnsafeBufferPointer(start: p + lo, count: hi - lo), as: UTF8.self)
}
