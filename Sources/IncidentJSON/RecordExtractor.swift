internal import CYAJL

/// Turns yajl's events into records and envelope values, following `JSONRecordSchema`.
///
/// Three modes: *navigate* (containers on the way to a record or envelope path; few per
/// document), *skip* (a subtree no path enters: only its depth is counted, nothing is kept) and
/// *capture* (inside a record or envelope value: a `TreeBuilder` builds the `JSONValue`).
///
/// The state lives behind a pointer, which is also yajl's context pointer: each event goes from
/// yajl straight to the state, with no reference counting and none of the dynamic exclusivity
/// checks that stored properties of a class would cost.
final class RecordExtractor {
    /// Why the extractor stopped the parse.
    enum Failure {
        case limit(JSONParseError.Kind, String)
        case thrown(any Error)
    }

    private let state: UnsafeMutablePointer<ExtractorState>

    init(schema: JSONRecordSchema, limits: JSONLimits, onRecord: @escaping (JSONRecord, JSONEnvelope) throws -> Void) {
        state = .allocate(capacity: 1)
        state.initialize(to: ExtractorState(schema: schema, limits: limits, onRecord: onRecord))
    }

    deinit {
        state.pointee.builder.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    var envelope: JSONEnvelope { state.pointee.envelope }
    var recordCount: Int { state.pointee.recordCount }
    var recordCounts: [Int] { state.pointee.recordCounts }
    var recordPathsFound: [Int] { state.pointee.recordPathsFound }
    var recordListsAsArrays: [Int] { state.pointee.recordListsAsArrays }
    var failure: Failure? { state.pointee.failure }

    func reset() { state.pointee.reset() }

    /// The context pointer for `callbacks`.
    var context: UnsafeMutableRawPointer { UnsafeMutableRawPointer(state) }

    /// yajl's callback table for this extractor's `context`: non-capturing closures. Numbers
    /// come through `yajl_number` as text (so `yajl_integer`/`yajl_double` are never used).
    static var callbacks: yajl_callbacks {
        var c = yajl_callbacks()
        c.yajl_null = { ctx in event(ctx) { $0.null() } }
        c.yajl_boolean = { ctx, value in event(ctx) { $0.bool(value != 0) } }
        c.yajl_integer = nil
        c.yajl_double = nil
        c.yajl_number = { ctx, text, length in
            let bytes = UnsafeRawPointer(text)?.assumingMemoryBound(to: UInt8.self)
            return event(ctx) { $0.number(buffer(bytes, length)) }
        }
        c.yajl_string = { ctx, text, length in event(ctx) { $0.string(buffer(text, length)) } }
        c.yajl_start_map = { ctx in event(ctx) { $0.startContainer(isObject: true) } }
        c.yajl_map_key = { ctx, text, length in event(ctx) { $0.key(buffer(text, length)) } }
        c.yajl_end_map = { ctx in event(ctx) { $0.endContainer() } }
        c.yajl_start_array = { ctx in event(ctx) { $0.startContainer(isObject: false) } }
        c.yajl_end_array = { ctx in event(ctx) { $0.endContainer() } }
        return c
    }
}

/// Runs one event on the state behind yajl's context pointer, then delivers a record it
/// completed; 1 to go on, 0 to stop the parse.
@inline(__always)
private func event(_ ctx: UnsafeMutableRawPointer?, _ body: (inout ExtractorState) -> Bool) -> Int32 {
    guard let state = ctx?.assumingMemoryBound(to: ExtractorState.self) else { return 0 }
    guard body(&state.pointee) else { return 0 }
    if state.pointee.pendingRecord == nil { return 1 }
    return ExtractorState.deliverPendingRecord(state) ? 1 : 0
}

@inline(__always)
private func buffer(_ p: UnsafePointer<UInt8>?, _ n: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: n > 0 ? p : nil, count: p == nil ? 0 : n)
}

/// What `JSONLimits.maxRecordBytes` counts: an estimate of a captured value's memory, in bytes,
/// on top of the UTF-8 bytes of its strings, keys and numbers. A `JSONValue` is 24 bytes in an
/// array (17 + padding), a member 40 with its key; an array's storage has a 32-byte header.
private enum Cost {
    static let value = 24
    static let key = 16
    static let container = 72
}

/// `RecordExtractor`'s state and logic.
struct ExtractorState {
    typealias Failure = RecordExtractor.Failure

    private enum Step: Equatable {
        case key([UInt8])
        case any
    }

    /// A path (index into `steps`) matched up to `step`; `mayUnwrap`: the data.go.kr wrapper
    /// may still be unwrapped at this `*` step.
    private struct Cursor {
        var path: Int
        var step: Int
        var mayUnwrap: Bool
    }

    private enum ValueKind: Equatable {
        case object, array, scalar, emptyScalar
    }

    /// What the cursors at one value make of it.
    private struct Resolution {
        var recordPath = -1
        var envelopes: [Int] = []
        var keyCursors: [Cursor] = []
        var elementCursors: [Cursor] = []
        var deferred: [Cursor] = []

        var captures: Bool { recordPath >= 0 || !envelopes.isEmpty }
        var navigates: Bool { !keyCursors.isEmpty || !elementCursors.isEmpty || !deferred.isEmpty }
    }

    /// A container on the way to a path.
    private struct NavFrame {
        var isObject: Bool
        /// Where it is, for problems: `$`, `body`, `features[3]`.
        var location: String
        var keyCursors: [Cursor]
        /// Cursors each element of this array starts with.
        var elementCursors: [Cursor]
        /// `*` cursors at this object: decided at its first key (wrapper or single element).
        var deferred: [Cursor]
        var keyCount = 0
        var elementCount = 0
        var lastKey = ""
        /// Keys that matched a path, with how often they occurred.
        var matchedKeys: [(key: [UInt8], count: Int)] = []
    }

    private let steps: [[Step]]
    private let pathNames: [String]
    private let recordPathCount: Int
    private let wrapperKey: [UInt8]?
    private let maxRecordBytes: Int
    private let onRecord: (JSONRecord, JSONEnvelope) throws -> Void

    // Results.
    private(set) var envelopeValues: [JSONValue?]
    private(set) var envelopeProblems: [String] = []
    private var problemsLeftOut = 0
    private var envelopeMatches: [Int]
    private(set) var recordCount = 0
    private(set) var recordCounts: [Int]
    private(set) var recordPathsFound: [Int]
    private(set) var recordListsAsArrays: [Int]
    private(set) var failure: Failure?
    /// A record completed by the current event, not yet handed to `onRecord`.
    private(set) var pendingRecord: JSONRecord?
    var builder = TreeBuilder()

    // Navigation.
    private enum Mode { case navigate, skip, capture }
    private var mode = Mode.navigate
    private var skipDepth = 0
    private var nav: [NavFrame] = []
    private var rootCursors: [Cursor]
    private var rootSeen = false
    /// Cursors for the value after the current key of the innermost object.
    private var keyValueCursors: [Cursor] = []

    // Capture.
    private var captureRecordPath = -1
    private var captureEnvelopes: [Int] = []
    private var captureLocation = ""
    private var captureBytes = 0
    /// The record being captured passed `maxRecordBytes`: from then on only scalars and objects
    /// that are members of objects are kept (its id, whatever order the members come in), up to
    /// `oversizeAllowance` more bytes; arrays and anything inside them are skipped.
    private var oversized = false
    /// Depth of the subtree being skipped inside an oversized record; 0 when none.
    private var oversizeSkipDepth = 0
    /// Bytes kept since the record passed the limit.
    private var oversizeKept = 0
    /// What the members kept after the limit may take.
    static let oversizeAllowance = 64 << 10

    init(schema: JSONRecordSchema, limits: JSONLimits, onRecord: @escaping (JSONRecord, JSONEnvelope) throws -> Void) {
        let paths = schema.recordPaths + schema.envelopePaths
        steps = paths.map { path in
            path.steps.map { step in
                switch step {
                case .key(let key): return .key(Array(key.utf8))
                case .anyElement: return .any
                }
            }
        }
        pathNames = paths.map(\.description)
        recordPathCount = schema.recordPaths.count
        wrapperKey = schema.wrapperKey.map { Array($0.utf8) }
        maxRecordBytes = limits.maxRecordBytes
        self.onRecord = onRecord
        envelopeValues = Array(repeating: nil, count: schema.envelopePaths.count)
        envelopeMatches = Array(repeating: 0, count: schema.envelopePaths.count)
        recordCounts = Array(repeating: 0, count: schema.recordPaths.count)
        recordPathsFound = Array(repeating: 0, count: schema.recordPaths.count)
        recordListsAsArrays = Array(repeating: 0, count: schema.recordPaths.count)
        rootCursors = paths.indices.map { Cursor(path: $0, step: 0, mayUnwrap: true) }
    }

    /// The envelope read so far.
    var envelope: JSONEnvelope { JSONEnvelope(values: envelopeValues, problems: envelopeProblems) }

    mutating func reset() {
        envelopeValues = Array(repeating: nil, count: envelopeValues.count)
        envelopeMatches = Array(repeating: 0, count: envelopeMatches.count)
        envelopeProblems = []
        problemsLeftOut = 0
        recordCount = 0
        recordCounts = Array(repeating: 0, count: recordCounts.count)
        recordPathsFound = Array(repeating: 0, count: recordPathsFound.count)
        recordListsAsArrays = Array(repeating: 0, count: recordListsAsArrays.count)
        failure = nil
        pendingRecord = nil
        mode = .navigate
        skipDepth = 0
        nav = []
        rootSeen = false
        keyValueCursors = []
        endCapture()
    }

    // MARK: - Events

    mutating func null() -> Bool {
        switch mode {
        case .capture: return oversized ? addOversized(size: Cost.value) { .null } : add(.null, size: Cost.value)
        case .skip: return true
        case .navigate: return navigateScalar(.null, kind: .emptyScalar, size: Cost.value)
        }
    }

    mutating func bool(_ value: Bool) -> Bool {
        switch mode {
        case .capture: return oversized ? addOversized(size: Cost.value) { .bool(value) } : add(.bool(value), size: Cost.value)
        case .skip: return true
        case .navigate: return navigateScalar(.bool(value), kind: .scalar, size: Cost.value)
        }
    }

    mutating func number(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture:
            if oversized { return addOversized(size: Cost.value + text.count) { .number(String(decoding: text, as: UTF8.self)) } }
            return add(.number(String(decoding: text, as: UTF8.self)), size: Cost.value + text.count)
        case .skip: return true
        case .navigate: return navigateScalar(.number(String(decoding: text, as: UTF8.self)), kind: .scalar, size: Cost.value + text.count)
        }
    }

    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture:
            if oversized { return addOversized(size: Cost.value + bytes.count) { .string(String(decoding: bytes, as: UTF8.self)) } }
            return add(.string(String(decoding: bytes, as: UTF8.self)), size: Cost.value + bytes.count)
        case .skip: return true
        case .navigate:
            return navigateScalar(.string(String(decoding: bytes, as: UTF8.self)),
                                  kind: bytes.isEmpty ? .emptyScalar : .scalar, size: Cost.value + bytes.count)
        }
    }

    mutating func key(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture:
            if oversized {
                captureBytes += Cost.key + bytes.count
                if oversizeSkipDepth > 0 { return true }
                // Kept for now; dropped again if its value is skipped.
                oversizeKept += Cost.key + bytes.count
            }
            builder.key(bytes)
            return grow(Cost.key + bytes.count)
        case .skip:
            return true
        case .navigate:
            return navigateKey(bytes)
        }
    }

    // MARK: - Containers

    mutating func startContainer(isObject: Bool) -> Bool {
        switch mode {
        case .capture:
            if oversized {
                captureBytes += Cost.container
                if oversizeSkipDepth > 0 || !isObject || !builder.isInObject || oversizeKept > Self.oversizeAllowance {
                    if oversizeSkipDepth == 0 && builder.isInObject { builder.dropLastKey() }
                    oversizeSkipDepth += 1
                    return true
                }
                oversizeKept += Cost.container
            }
            builder.startContainer(isObject: isObject)
            return grow(Cost.container)
        case .skip:
            skipDepth += 1
            return true
        case .navigate:
            let (cursors, location) = nextValue()
            let r = resolve(cursors, kind: isObject ? .object : .array, allowDefer: true)
            if r.captures {
                startCapture(r, location: location)
                builder.startContainer(isObject: isObject)
                return grow(Cost.container)
            }
            if !r.navigates {
                mode = .skip
                skipDepth = 1
                return true
            }
            nav.append(NavFrame(isObject: isObject, location: location, keyCursors: r.keyCursors,
                                elementCursors: r.elementCursors, deferred: r.deferred))
            return true
        }
    }

    mutating func endContainer() -> Bool {
        switch mode {
        case .capture:
            if oversizeSkipDepth > 0 {
                oversizeSkipDepth -= 1
                return true
            }
            guard let value = builder.endContainer() else { return true }
            return complete(value)
        case .skip:
            skipDepth -= 1
            if skipDepth == 0 { mode = .navigate }
            return true
        case .navigate:
            guard let frame = nav.popLast() else { return true }
            for (key, count) in frame.matchedKeys where count > 1 {
                addProblem("key \"\(String(decoding: key, as: UTF8.self))\" occurs \(count) times at \(frame.location)")
            }
            return true
        }
    }

    // MARK: - Navigation

    /// The cursors and location of the value that starts now.
    private mutating func nextValue() -> ([Cursor], String) {
        guard let last = nav.indices.last else {
            if rootSeen { return ([], "$") }
            rootSeen = true
            return (rootCursors, "$")
        }
        if nav[last].isObject {
            let location = joinLocation(nav[last].location, nav[last].lastKey)
            let cursors = keyValueCursors
            keyValueCursors = []
            return (cursors, location)
        }
        let index = nav[last].elementCount
        nav[last].elementCount += 1
        let location = joinLocation(nav[last].location, "[\(index)]")
        return (nav[last].elementCursors, location)
    }

    private mutating func navigateScalar(_ value: JSONValue, kind: ValueKind, size: Int) -> Bool {
        let (cursors, location) = nextValue()
        if cursors.isEmpty { return true }
        let r = resolve(cursors, kind: kind, allowDefer: false)
        guard r.captures else { return true }
        startCapture(r, location: location)
        return add(value, size: size)
    }

    private mutating func navigateKey(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let last = nav.indices.last else { return true }
        if !nav[last].deferred.isEmpty && nav[last].keyCount == 0 {
            let deferred = nav[last].deferred
            nav[last].deferred = []
            if let wrapperKey, deferred[0].mayUnwrap, bytes.elementsEqual(wrapperKey) {
                // data.go.kr {"item": …}: the `*` step applies to this member's value instead.
                nav[last].keyCount = 1
                nav[last].lastKey = String(decoding: bytes, as: UTF8.self)
                keyValueCursors = deferred.map { Cursor(path: $0.path, step: $0.step, mayUnwrap: false) }
                return true
            }
            // The object is the single element at its `*` step.
            let promoted = deferred.map { Cursor(path: $0.path, step: $0.step + 1, mayUnwrap: true) }
            let r = resolve(promoted, kind: .object, allowDefer: false)
            if r.captures {
                let frame = nav.removeLast()
                startCapture(r, location: frame.location)
                builder.startContainer(isObject: true)
                builder.key(bytes)
                return grow(Cost.container + Cost.key + bytes.count)
            }
            nav[last].keyCursors = r.keyCursors
        }
        nav[last].keyCount += 1
        nav[last].lastKey = String(decoding: bytes, as: UTF8.self)
        var next: [Cursor] = []
        for c in nav[last].keyCursors {
            if case .key(let k) = steps[c.path][c.step], bytes.elementsEqual(k) {
                next.append(Cursor(path: c.path, step: c.step + 1, mayUnwrap: true))
            }
        }
        if !next.isEmpty {
            if let i = nav[last].matchedKeys.firstIndex(where: { bytes.elementsEqual($0.key) }) {
                nav[last].matchedKeys[i].count += 1
            } else {
                nav[last].matchedKeys.append((Array(bytes), 1))
            }
        }
        keyValueCursors = next
        return true
    }

    /// What the cursors at a value of `kind` make of it. See `JSONPath` for the `*` rules; an
    /// object at a `*` step is deferred to its first key when `allowDefer`, else it is the single
    /// element at once.
    private mutating func resolve(_ cursors: [Cursor], kind: ValueKind, allowDefer: Bool) -> Resolution {
        var r = Resolution()
        let keyStepHere = cursors.contains { c in
            if c.step < steps[c.path].count, case .key = steps[c.path][c.step] { return true }
            return false
        }
        var work = cursors
        while let c = work.popLast() {
            let path = steps[c.path]
            if c.step == path.count {
                if c.path < recordPathCount {
                    if r.recordPath < 0 || c.path < r.recordPath { r.recordPath = c.path }
                    if path.last != .any { recordPathsFound[c.path] += 1 }
                } else {
                    r.envelopes.append(c.path - recordPathCount)
                }
                continue
            }
            switch path[c.step] {
            case .key:
                if kind == .object { r.keyCursors.append(c) }
            case .any:
                if kind == .object && keyStepHere { continue }  // another path goes in by key
                if c.step == path.count - 1 && c.mayUnwrap && c.path < recordPathCount {
                    recordPathsFound[c.path] += 1
                    if kind == .array { recordListsAsArrays[c.path] += 1 }
                }
                switch kind {
                case .array:
                    r.elementCursors.append(Cursor(path: c.path, step: c.step + 1, mayUnwrap: true))
                case .object:
                    if allowDefer {
                        r.deferred.append(c)
                    } else {
                        work.append(Cursor(path: c.path, step: c.step + 1, mayUnwrap: true))
                    }
                case .scalar:
                    work.append(Cursor(path: c.path, step: c.step + 1, mayUnwrap: true))
                case .emptyScalar:
                    break
                }
            }
        }
        return r
    }

    // MARK: - Capture

    private mutating func startCapture(_ r: Resolution, location: String) {
        mode = .capture
        captureRecordPath = r.recordPath
        captureEnvelopes = r.envelopes
        captureLocation = location
        captureBytes = 0
    }

    private mutating func endCapture() {
        oversized = false
        oversizeSkipDepth = 0
        oversizeKept = 0
        captureRecordPath = -1
        captureEnvelopes = []
        builder.clear()
    }

    @inline(__always)
    private mutating func grow(_ size: Int) -> Bool {
        if oversized { return true }  // counted by the caller
        captureBytes += size
        if captureBytes > maxRecordBytes {
            if captureRecordPath >= 0 && captureEnvelopes.isEmpty {
                // A record too large is set aside by the caller, not the end of the document.
                oversized = true
                return true
            }
            failure = .limit(.recordTooLarge, "the envelope value \(captureLocation) is larger than \(maxRecordBytes) bytes (JSONLimits.maxRecordBytes)")
            return false
        }
        return true
    }

    /// A scalar of an oversized record: kept as a member of an object while the allowance
    /// lasts, else skipped (with its key).
    private mutating func addOversized(size: Int, _ value: () -> JSONValue) -> Bool {
        captureBytes += size
        if oversizeSkipDepth > 0 { return true }
        guard builder.isInObject, oversizeKept + size <= Self.oversizeAllowance else {
            if builder.isInObject { builder.dropLastKey() }
            return true
        }
        oversizeKept += size
        guard let whole = builder.add(value()) else { return true }
        return complete(whole)
    }

    /// Adds a finished value to the open container, or completes the capture.
    @inline(__always)
    private mutating func add(_ value: consuming JSONValue, size: Int) -> Bool {
        if !grow(size) { return false }
        guard let whole = builder.add(value) else { return true }
        return complete(whole)
    }

    private mutating func complete(_ value: JSONValue) -> Bool {
        let recordPath = captureRecordPath
        let envelopes = captureEnvelopes
        let problems = builder.duplicates
        let oversizedBytes = oversized ? captureBytes : nil
        let byteCount = captureBytes
        mode = .navigate
        endCapture()
        for e in envelopes {
            envelopeMatches[e] += 1
            if envelopeMatches[e] == 1 {
                envelopeValues[e] = value
                for problem in problems {
                    addProblem("key \"\(problem.key)\" occurs \(problem.count) times in \(joinLocation(pathNames[recordPathCount + e], problem.place))")
                }
            } else {
                if envelopeMatches[e] == 2 {
                    addProblem("envelope path \(pathNames[recordPathCount + e]) matched more than once; its value is left out")
                }
                envelopeValues[e] = nil
            }
        }
        guard recordPath >= 0 else { return true }
        recordCount += 1
        recordCounts[recordPath] += 1
        var lines = problems.map { "key \"\($0.key)\" occurs \($0.count) times" + ($0.place.isEmpty ? "" : " in \($0.place)") }
        if let oversizedBytes {
            lines.insert("the record is larger than the limit of \(maxRecordBytes) bytes per record (JSONLimits.maxRecordBytes counts \(oversizedBytes)): only its members outside lists were read, to name it", at: 0)
        }
        pendingRecord = JSONRecord(value: value, position: recordCount, pathIndex: recordPath, problems: lines,
                                   isOversized: oversizedBytes != nil)
        pendingRecord?.byteCount = byteCount
        return true
    }

    /// Keeps at most `maxProblems` envelope problems, then one line counting the rest: a hostile
    /// document cannot grow the list without bound (per-record problems are bounded by the
    /// record's size).
    private mutating func addProblem(_ problem: String) {
        if envelopeProblems.count < Self.maxProblems {
            envelopeProblems.append(problem)
            return
        }
        problemsLeftOut += 1
        let line = "\(problemsLeftOut) more problem\(problemsLeftOut == 1 ? "" : "s") left out"
        if problemsLeftOut == 1 {
            envelopeProblems.append(line)
        } else {
            envelopeProblems[envelopeProblems.count - 1] = line
        }
    }

    static let maxProblems = 100

    /// Hands the record that the last event completed to `onRecord`, outside any mutating access
    /// to the state (so `onRecord` may read the reader, e.g. its envelope). False when `onRecord`
    /// threw; the error is kept as the failure.
    static func deliverPendingRecord(_ state: UnsafeMutablePointer<ExtractorState>) -> Bool {
        guard let record = state.pointee.pendingRecord else { return true }
        state.pointee.pendingRecord = nil
        let onRecord = state.pointee.onRecord
        let envelope = state.pointee.envelope
        do {
            try onRecord(record, envelope)
            return true
        } catch {
            state.pointee.failure = .thrown(error)
            return false
        }
    }
}

/// `a.b`, `a[1]`; `$` (the root) and empty parts drop out.
private func joinLocation(_ a: String, _ b: String) -> String {
    if a.isEmpty || a == "$" { return b.isEmpty ? "$" : b }
    if b.isEmpty { return a }
    return b.hasPrefix("[") ? a + b : a + "." + b
}
