/// Turns yajl's events into records and envelope values, following `JSONRecordSchema`.
///
/// Three modes: *navigate* (containers on the way to a record or envelope path; few per
/// document), *skip* (a subtree no path enters: only its depth is counted, nothing is kept) and
/// *capture* (inside a record or envelope value: a `JSONValue` tree is built on a scratch stack;
/// each finished container is copied out once, at its exact size).
final class RecordExtractor: JSONEventHandler {
    /// Why the extractor stopped the parse.
    enum Failure {
        case limit(JSONParseError.Kind, String)
        case thrown(any Error)
    }

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

    private struct BuildFrame {
        var isObject: Bool
        var valuesStart: Int
        var keysStart: Int
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
    private var envelopeMatches: [Int]
    private(set) var recordCount = 0
    private(set) var recordCounts: [Int]
    private(set) var recordPathsFound: [Int]
    private(set) var failure: Failure?

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
    private var scratch: [JSONValue] = []
    private var keys: [String] = []
    private var build: [BuildFrame] = []
    private var captureBytes = 0
    /// Duplicate keys in the captured value: key, occurrences, where (relative to the value).
    private var captureProblems: [(key: String, count: Int, place: String)] = []

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
        rootCursors = paths.indices.map { Cursor(path: $0, step: 0, mayUnwrap: true) }
    }

    /// The envelope read so far.
    var envelope: JSONEnvelope { JSONEnvelope(values: envelopeValues, problems: envelopeProblems) }

    func reset() {
        envelopeValues = Array(repeating: nil, count: envelopeValues.count)
        envelopeMatches = Array(repeating: 0, count: envelopeMatches.count)
        envelopeProblems = []
        recordCount = 0
        recordCounts = Array(repeating: 0, count: recordCounts.count)
        recordPathsFound = Array(repeating: 0, count: recordPathsFound.count)
        failure = nil
        mode = .navigate
        skipDepth = 0
        nav = []
        rootSeen = false
        keyValueCursors = []
        endCapture()
    }

    // MARK: - Events

    func null() -> Bool {
        switch mode {
        case .capture: return add(.null, size: 4)
        case .skip: return true
        case .navigate: return navigateScalar(.null, kind: .emptyScalar, size: 4)
        }
    }

    func bool(_ value: Bool) -> Bool {
        switch mode {
        case .capture: return add(.bool(value), size: value ? 4 : 5)
        case .skip: return true
        case .navigate: return navigateScalar(.bool(value), kind: .scalar, size: value ? 4 : 5)
        }
    }

    func number(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture: return add(.number(String(decoding: text, as: UTF8.self)), size: text.count)
        case .skip: return true
        case .navigate: return navigateScalar(.number(String(decoding: text, as: UTF8.self)), kind: .scalar, size: text.count)
        }
    }

    func string(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture: return add(.string(String(decoding: bytes, as: UTF8.self)), size: bytes.count + 2)
        case .skip: return true
        case .navigate:
            return navigateScalar(.string(String(decoding: bytes, as: UTF8.self)),
                                  kind: bytes.isEmpty ? .emptyScalar : .scalar, size: bytes.count + 2)
        }
    }

    func startObject() -> Bool { startContainer(isObject: true) }
    func startArray() -> Bool { startContainer(isObject: false) }
    func endObject() -> Bool { endContainer() }
    func endArray() -> Bool { endContainer() }

    func key(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .capture:
            keys.append(String(decoding: bytes, as: UTF8.self))
            return grow(bytes.count + 2)
        case .skip:
            return true
        case .navigate:
            return navigateKey(bytes)
        }
    }

    // MARK: - Containers

    private func startContainer(isObject: Bool) -> Bool {
        switch mode {
        case .capture:
            build.append(BuildFrame(isObject: isObject, valuesStart: scratch.count, keysStart: keys.count))
            return grow(2)
        case .skip:
            skipDepth += 1
            return true
        case .navigate:
            let (cursors, location) = nextValue()
            var r = resolve(cursors, kind: isObject ? .object : .array, allowDefer: true)
            if r.captures {
                startCapture(r, location: location)
                build.append(BuildFrame(isObject: isObject, valuesStart: 0, keysStart: 0))
                return grow(2)
            }
            if !r.navigates {
                mode = .skip
                skipDepth = 1
                return true
            }
            if !isObject { r.keyCursors = [] }
            nav.append(NavFrame(isObject: isObject, location: location, keyCursors: r.keyCursors,
                                elementCursors: r.elementCursors, deferred: r.deferred))
            return true
        }
    }

    private func endContainer() -> Bool {
        switch mode {
        case .capture:
            guard let frame = build.popLast() else { return true }
            let value: JSONValue
            if frame.isObject {
                let n = scratch.count - frame.valuesStart
                let members = [(key: String, value: JSONValue)](unsafeUninitializedCapacity: n) { out, initialized in
                    for i in 0..<n {
                        out.initializeElement(at: i, to: (keys[frame.keysStart + i], scratch[frame.valuesStart + i]))
                    }
                    initialized = n
                }
                if n > 1 { checkDuplicateKeys(frame) }
                keys.removeSubrange(frame.keysStart...)
                scratch.removeSubrange(frame.valuesStart...)
                value = .object(members)
            } else {
                let elements = Array(scratch[frame.valuesStart...])
                scratch.removeSubrange(frame.valuesStart...)
                value = .array(elements)
            }
            return add(value, size: 0)
        case .skip:
            skipDepth -= 1
            if skipDepth == 0 { mode = .navigate }
            return true
        case .navigate:
            guard let frame = nav.popLast() else { return true }
            for (key, count) in frame.matchedKeys where count > 1 {
                envelopeProblems.append("key \"\(String(decoding: key, as: UTF8.self))\" occurs \(count) times at \(frame.location)")
            }
            return true
        }
    }

    // MARK: - Navigation

    /// The cursors and location of the value that starts now.
    private func nextValue() -> ([Cursor], String) {
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

    private func navigateScalar(_ value: JSONValue, kind: ValueKind, size: Int) -> Bool {
        let (cursors, location) = nextValue()
        if cursors.isEmpty { return true }
        let r = resolve(cursors, kind: kind, allowDefer: false)
        guard r.captures else { return true }
        startCapture(r, location: location)
        return add(value, size: size)
    }

    private func navigateKey(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
                build.append(BuildFrame(isObject: true, valuesStart: 0, keysStart: 0))
                keys.append(String(decoding: bytes, as: UTF8.self))
                return grow(2 + bytes.count + 2)
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
    private func resolve(_ cursors: [Cursor], kind: ValueKind, allowDefer: Bool) -> Resolution {
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

    private func startCapture(_ r: Resolution, location: String) {
        mode = .capture
        captureRecordPath = r.recordPath
        captureEnvelopes = r.envelopes
        captureLocation = location
        captureBytes = 0
        captureProblems = []
    }

    private func endCapture() {
        captureRecordPath = -1
        captureEnvelopes = []
        scratch.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        build.removeAll(keepingCapacity: true)
        captureProblems = []
    }

    @inline(__always)
    private func grow(_ size: Int) -> Bool {
        captureBytes += size
        if captureBytes > maxRecordBytes {
            let what = captureRecordPath >= 0 ? "a record" : "the envelope value \(captureLocation)"
            failure = .limit(.recordTooLarge, "\(what) is larger than \(maxRecordBytes) bytes (JSONLimits.maxRecordBytes)")
            return false
        }
        return true
    }

    /// Adds a finished value to the open container, or completes the capture.
    @inline(__always)
    private func add(_ value: JSONValue, size: Int) -> Bool {
        if size > 0 && !grow(size) { return false }
        if !build.isEmpty {
            scratch.append(value)
            return true
        }
        return complete(value)
    }

    private func complete(_ value: JSONValue) -> Bool {
        let recordPath = captureRecordPath
        let envelopes = captureEnvelopes
        let problems = captureProblems
        mode = .navigate
        endCapture()
        for e in envelopes {
            envelopeMatches[e] += 1
            if envelopeMatches[e] == 1 {
                envelopeValues[e] = value
                envelopeProblems += problems.map {
                    "key \"\($0.key)\" occurs \($0.count) times in \(joinLocation(pathNames[recordPathCount + e], $0.place))"
                }
            } else {
                if envelopeMatches[e] == 2 {
                    envelopeProblems.append("envelope path \(pathNames[recordPathCount + e]) matched more than once; its value is left out")
                }
                envelopeValues[e] = nil
            }
        }
        guard recordPath >= 0 else { return true }
        recordCount += 1
        recordCounts[recordPath] += 1
        do {
            let lines = problems.map { "key \"\($0.key)\" occurs \($0.count) times" + ($0.place.isEmpty ? "" : " in \($0.place)") }
            try onRecord(JSONRecord(value: value, position: recordCount, pathIndex: recordPath, problems: lines), envelope)
        } catch {
            failure = .thrown(error)
            return false
        }
        return true
    }

    /// Records a problem for each key that occurs more than once in the object being closed.
    private func checkDuplicateKeys(_ frame: BuildFrame) {
        let n = keys.count - frame.keysStart
        var duplicates: [(String, Int)] = []
        if n <= 16 {
            for i in frame.keysStart..<keys.count {
                var seenBefore = false
                for j in frame.keysStart..<i where keys[j] == keys[i] { seenBefore = true; break }
                if seenBefore { continue }
                var count = 1
                for j in (i + 1)..<keys.count where keys[j] == keys[i] { count += 1 }
                if count > 1 { duplicates.append((keys[i], count)) }
            }
        } else {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for i in frame.keysStart..<keys.count {
                counts[keys[i], default: 0] += 1
                if counts[keys[i]] == 2 { order.append(keys[i]) }
            }
            duplicates = order.map { ($0, counts[$0] ?? 0) }
        }
        guard !duplicates.isEmpty else { return }
        let place = location(of: frame)
        for (key, count) in duplicates { captureProblems.append((key, count, place)) }
    }

    /// Where the container of `closing` (just popped from `build`) sits inside the captured
    /// value: `properties.lanes[1]`, or empty for the captured value itself. Each open frame's
    /// finished children lie in `scratch` between its start and the next open frame's start.
    private func location(of closing: BuildFrame) -> String {
        var out = ""
        for (k, frame) in build.enumerated() {
            let nextStart = k + 1 < build.count ? build[k + 1].valuesStart : closing.valuesStart
            let index = nextStart - frame.valuesStart
            if frame.isObject {
                let key = keys[frame.keysStart + index]
                out += out.isEmpty ? key : "." + key
            } else {
                out += "[\(index)]"
            }
        }
        return out
    }
}

/// `a.b`, `a[1]`; `$` (the root) and empty parts drop out.
private func joinLocation(_ a: String, _ b: String) -> String {
    if a.isEmpty || a == "$" { return b.isEmpty ? "$" : b }
    if b.isEmpty { return a }
    return b.hasPrefix("[") ? a + b : a + "." + b
}
