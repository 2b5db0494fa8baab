#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds one `JSONValue` tree from parse events: a record or an envelope value.
///
/// Finished values of the open containers wait on one value stack and keys on one key stack
/// (manually managed buffers, reused for every record); closing a container *moves* its values
/// into an array of exactly the right size, so no value is copied or retained twice. Keys are
/// interned (`KeyInterner`): a record's keys are mostly the previous record's, so they cost no
/// allocation and compare by identity when duplicates are looked for.
struct TreeBuilder {
    struct Frame {
        var isObject: Bool
        var valuesStart: Int
        var keysStart: Int
    }

    /// A duplicated key of an object in the value: the key, its occurrences, and where the
    /// object is inside the value (`properties.lanes[1]`, empty for the value itself).
    struct Duplicate {
        var key: String
        var count: Int
        var place: String
    }

    private var values: UnsafeMutablePointer<JSONValue>
    private var valueCount = 0
    private var valueCapacity = 256
    private var keys: UnsafeMutablePointer<String>
    private var keyHashes: UnsafeMutablePointer<UInt64>
    private var keyCount = 0
    private var keyCapacity = 256
    private var frames: [Frame] = []
    private var interner = KeyInterner()
    /// Duplicate keys found in the value being built.
    private(set) var duplicates: [Duplicate] = []

    init() {
        values = .allocate(capacity: valueCapacity)
        keys = .allocate(capacity: keyCapacity)
        keyHashes = .allocate(capacity: keyCapacity)
    }

    /// Frees the buffers; the builder must not be used afterwards.
    mutating func deallocate() {
        clear()
        values.deallocate()
        keys.deallocate()
        keyHashes.deallocate()
        interner.deallocate()
    }

    /// Drops any half-built value (after an error) and the duplicates found.
    mutating func clear() {
        values.deinitialize(count: valueCount)
        keys.deinitialize(count: keyCount)
        valueCount = 0
        keyCount = 0
        frames.removeAll(keepingCapacity: true)
        duplicates.removeAll()
    }

    /// True while no container is open: the next value completes the capture.
    var isAtTop: Bool { frames.isEmpty }

    /// True when the innermost open container is an object (the next value is a member's).
    var isInObject: Bool { frames.last?.isObject ?? false }

    /// Forgets the key of the innermost object's member whose value will not be added.
    mutating func dropLastKey() {
        guard let frame = frames.last, frame.isObject, keyCount > frame.keysStart + (valueCount - frame.valuesStart) else { return }
        keyCount -= 1
        (keys + keyCount).deinitialize(count: 1)
    }

    mutating func startContainer(isObject: Bool) {
        frames.append(Frame(isObject: isObject, valuesStart: valueCount, keysStart: keyCount))
    }

    mutating func key(_ bytes: UnsafeBufferPointer<UInt8>) {
        if keyCount == keyCapacity { growKeys() }
        let hash = keyHash(bytes)
        (keys + keyCount).initialize(to: interner.string(bytes, hash: hash))
        keyHashes[keyCount] = hash
        keyCount += 1
    }

    /// Adds a finished value to the open container; returns it when no container is open
    /// (the capture is complete).
    @inline(__always)
    mutating func add(_ value: consuming JSONValue) -> JSONValue? {
        if frames.isEmpty { return value }
        if valueCount == valueCapacity { growValues() }
        (values + valueCount).initialize(to: value)
        valueCount += 1
        return nil
    }

    /// Closes the innermost container; returns the whole value when that was the outermost.
    mutating func endContainer() -> JSONValue? {
        guard let frame = frames.popLast() else { return nil }
        let n = valueCount - frame.valuesStart
        let value: JSONValue
        if frame.isObject {
            if n > 1 { findDuplicates(frame) }
            // reserveCapacity + append is specialized here; Array(unsafeUninitializedCapacity:)
            // goes through an unspecialized runtime path (a metadata lookup per array).
            var members: [(key: String, value: JSONValue)] = []
            members.reserveCapacity(n)
            for i in 0..<n { members.append(((keys + frame.keysStart + i).move(), (values + frame.valuesStart + i).move())) }
            keyCount = frame.keysStart
            value = .object(members)
        } else {
            var elements: [JSONValue] = []
            elements.reserveCapacity(n)
            for i in 0..<n { elements.append((values + frame.valuesStart + i).move()) }
            value = .array(elements)
        }
        valueCount = frame.valuesStart
        return add(value)
    }

    /// Records each key that occurs more than once in the object `frame` (not yet closed), in
    /// the order of first occurrence. Pairwise on hashes for up to 32 keys, else by sorting
    /// hashes: linear in the keys for any object size.
    private mutating func findDuplicates(_ frame: Frame) {
        let start = frame.keysStart
        let end = keyCount
        var found: [(key: String, count: Int, first: Int)] = []
        if end - start <= 32 {
            for i in start..<end {
                var count = 1
                var earlier = false
                for j in start..<end where j != i && keyHashes[j] == keyHashes[i] && keys[j] == keys[i] {
                    if j < i { earlier = true; break }
                    count += 1
                }
                if !earlier && count > 1 { found.append((keys[i], count, i)) }
            }
        } else {
            let order = (start..<end).sorted { (keyHashes[$0], $0) < (keyHashes[$1], $1) }
            var k = 0
            while k < order.count {
                var m = k + 1
                while m < order.count && keyHashes[order[m]] == keyHashes[order[k]] { m += 1 }
                if m - k > 1 {
                    var groups: [(key: String, count: Int, first: Int)] = []
                    for index in order[k..<m] {
                        if let g = groups.firstIndex(where: { $0.key == keys[index] }) {
                            groups[g].count += 1
                        } else {
                            groups.append((keys[index], 1, index))
                        }
                    }
                    found += groups.filter { $0.count > 1 }
                }
                k = m
            }
            found.sort { $0.first < $1.first }
        }
        guard !found.isEmpty else { return }
        let place = location(of: frame)
        for item in found { duplicates.append(Duplicate(key: item.key, count: item.count, place: place)) }
    }

    /// Where the object of `frame` (already popped) sits in the value being built. Each open
    /// frame's finished children lie on the value stack between its start and the next frame's.
    private func location(of closing: Frame) -> String {
        var out = ""
        for (k, frame) in frames.enumerated() {
            let nextStart = k + 1 < frames.count ? frames[k + 1].valuesStart : closing.valuesStart
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

    private mutating func growValues() {
        let grown = UnsafeMutablePointer<JSONValue>.allocate(capacity: valueCapacity * 2)
        grown.moveInitialize(from: values, count: valueCount)
        values.deallocate()
        values = grown
        valueCapacity *= 2
    }

    private mutating func growKeys() {
        let grownKeys = UnsafeMutablePointer<String>.allocate(capacity: keyCapacity * 2)
        grownKeys.moveInitialize(from: keys, count: keyCount)
        keys.deallocate()
        keys = grownKeys
        let grownHashes = UnsafeMutablePointer<UInt64>.allocate(capacity: keyCapacity * 2)
        grownHashes.update(from: keyHashes, count: keyCount)
        keyHashes.deallocate()
        keyHashes = grownHashes
        keyCapacity *= 2
    }
}

/// A direct-mapped cache from key bytes to the `String` made for them last time. Keys longer
/// than 15 bytes (Swift's small-string limit) would otherwise cost an allocation each time.
struct KeyInterner {
    private struct Slot {
        var hash: UInt64 = 0
        var bytes: [UInt8] = []
        var string = ""
    }
    private static let slotCount = 1024
    private let slots: UnsafeMutablePointer<Slot>
    private static let maxLength = 64

    init() {
        slots = .allocate(capacity: Self.slotCount)
        slots.initialize(repeating: Slot(), count: Self.slotCount)
    }

    func deallocate() {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
    }

    /// The string for `bytes` (UTF-8 decoded, invalid sequences replaced), shared with earlier
    /// keys of the same bytes when cached.
    func string(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> String {
        guard bytes.count <= Self.maxLength, let base = bytes.baseAddress else {
            return String(decoding: bytes, as: UTF8.self)
        }
        let slot = slots + Int(truncatingIfNeeded: hash & UInt64(Self.slotCount - 1))
        if slot.pointee.hash == hash && slot.pointee.bytes.count == bytes.count
            && slot.pointee.bytes.withUnsafeBufferPointer({ $0.baseAddress.map { memcmp($0, base, bytes.count) == 0 } ?? false }) {
            return slot.pointee.string
        }
        let string = String(decoding: bytes, as: UTF8.self)
        slot.pointee = Slot(hash: hash, bytes: Array(bytes), string: string)
        return string
    }
}

/// FNV-1a over 8-byte words, then the tail bytes (64-bit). Not for hash tables exposed to
/// chosen inputs: a collision only costs a cache miss or a string comparison here.
@inline(__always)
func keyHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
    guard let base = bytes.baseAddress else { return h }
    let raw = UnsafeRawPointer(base)
    var i = 0
    while i + 8 <= bytes.count {
        h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x0000_0100_0000_01B3
        i += 8
    }
    while i < bytes.count {
        h = (h ^ UInt64(base[i])) &* 0x0000_0100_0000_01B3
        i += 1
    }
    return h ^ (h >> 29)
}
