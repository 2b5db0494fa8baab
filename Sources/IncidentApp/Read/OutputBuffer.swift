import Foundation
import IncidentCore
import IncidentJSON

/// Where the streaming encoders' bytes go (through an ``OutputBuffer``): stdout
/// (``StandardOutputSink``), a file (``OutputFile``), memory (``GrowingBuffer``), an HTTP
/// response body. Front ends choose the sink; the encoders do not know it.
protocol ByteSink {
    /// Takes the next chunk of the output: UTF-8 text that ends at a character boundary, about
    /// ``OutputBuffer/chunkBytes`` long (the last one shorter); or any bytes of a binary format
    /// (`xlsx`, which only a sink that writes bytes, not text, can take).
    /// - Throws: when the bytes cannot be written (a full disk, a closed connection); the
    ///   encoder stops there.
    func write(_ chunk: [UInt8]) throws
}

/// The context's stdout.
struct StandardOutputSink: ByteSink {
    let context: Context
    func write(_ chunk: [UInt8]) {
        if let bytes = context.outputBytes { bytes(chunk) } else { context.output(String(decoding: chunk, as: UTF8.self)) }
    }
}

/// A sink that keeps every byte in memory (tests, and answers small enough to hold).
final class GrowingBuffer: ByteSink {
    private(set) var bytes: [UInt8] = []
    init() {}
    func write(_ chunk: [UInt8]) { bytes.append(contentsOf: chunk) }
    /// The bytes as UTF-8 text.
    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// A sink that hands each chunk to a function, as text.
struct TextSink: ByteSink {
    let body: (String) throws -> Void
    func write(_ chunk: [UInt8]) throws { try body(String(decoding: chunk, as: UTF8.self)) }
}

/// Collects output bytes and hands them to its sink in chunks of about 64 KiB, so a command
/// that writes a million rows makes a few thousand writes and holds one chunk, never all rows.
/// A value type: each writer owns its buffer (no reference counting or exclusivity checks per
/// byte written).
struct OutputBuffer {
    static let chunkBytes = 64 * 1024

    private var bytes: [UInt8] = []
    private let sink: any ByteSink

    /// - Parameter sink: receives each chunk.
    init(_ sink: any ByteSink) {
        self.sink = sink
        bytes.reserveCapacity(Self.chunkBytes + 4096)
    }

    /// A sink given as a function of each chunk (UTF-8 text that ends at a character boundary).
    init(_ body: @escaping (String) throws -> Void) {
        self.init(TextSink(body: body))
    }

    /// The context's stdout.
    init(_ context: Context) {
        self.init(StandardOutputSink(context: context))
    }

    /// Appends `text`; hands over a chunk once one is full.
    /// - Throws: what the sink throws (a file that cannot be written).
    mutating func write(_ text: String) throws {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
        if bytes.count >= Self.chunkBytes { try flush() }
    }

    /// Appends the bytes of a binary format (`xlsx`); hands over a chunk once one is full.
    mutating func write(bytes more: some Collection<UInt8>) throws {
        bytes.append(contentsOf: more)
        if bytes.count >= Self.chunkBytes { try flush() }
    }

    /// Appends one ASCII character.
    mutating func write(ascii: Unicode.Scalar) {
        bytes.append(UInt8(ascii: ascii))
    }

    /// Appends `text` as a JSON string (RFC 8259): quoted, with `"`, `\` and control characters
    /// escaped. Most feed text needs no escape and is copied as it is.
    mutating func writeJSONString(_ text: String) throws {
        var text = text
        try text.withUTF8 { try writeJSONString(utf8: $0) }
    }

    /// Appends UTF-8 text (a stored column read in place) as a JSON string, as ``writeJSONString(_:)``.
    mutating func writeJSONString(utf8: UnsafeBufferPointer<UInt8>) throws {
        guard !JSONString.needsEscape(utf8: utf8) else {
            return try write(JSONString.quoted(String(decoding: utf8, as: UTF8.self)))
        }
        bytes.append(0x22)
        bytes.append(contentsOf: utf8)
        bytes.append(0x22)
        if bytes.count >= Self.chunkBytes { try flush() }
    }

    /// Appends `text` as one CSV field (RFC 4180): as it is, or quoted with its quotes doubled
    /// when it holds a comma, a quote, CR or LF.
    mutating func writeCSVField(_ text: String) throws {
        var text = text
        try text.withUTF8 { try writeCSVField(utf8: $0) }
    }

    /// Appends UTF-8 text as one CSV field, as ``writeCSVField(_:)``, after `prefix` (inside the
    /// quotes when the field is quoted).
    mutating func writeCSVField(utf8: UnsafeBufferPointer<UInt8>, prefix: UInt8? = nil) throws {
        let quoted = Self.needsCSVQuotes(utf8)
        if quoted { bytes.append(0x22) }
        if let prefix { bytes.append(prefix) }
        if quoted {
            for byte in utf8 {
                if byte == 0x22 { bytes.append(0x22) }
                bytes.append(byte)
            }
            bytes.append(0x22)
        } else {
            bytes.append(contentsOf: utf8)
        }
        if bytes.count >= Self.chunkBytes { try flush() }
    }

    /// Whether `utf8` holds a comma, a quote, CR or LF: eight bytes at a time (a word `w` has a
    /// zero byte exactly when `(w - 0x01…) & ~w & 0x80…` is non-zero, the "haszero" test of
    /// Bit Twiddling Hacks; `w ^ 0x2C2C…` has one where `w` has a comma), since every stored
    /// text of an export is scanned.
    static func needsCSVQuotes(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = UnsafeRawPointer(utf8.baseAddress) else { return false }
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 }
        let (comma, quote, cr, lf) = (UInt64(0x2C2C_2C2C_2C2C_2C2C), UInt64(0x2222_2222_2222_2222), UInt64(0x0D0D_0D0D_0D0D_0D0D),
                                      UInt64(0x0A0A_0A0A_0A0A_0A0A))
        var offset = 0
        while offset + 8 <= utf8.count {
            let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if hasZeroByte(word ^ comma) || hasZeroByte(word ^ quote) || hasZeroByte(word ^ cr) || hasZeroByte(word ^ lf) { return true }
            offset += 8
        }
        return utf8[offset...].contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    mutating func writeDecimal(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// Appends `value` as its `description` (shortest round-trip form, `37.5`, `1e-05`).
    mutating func writeDecimal(_ value: Double) {
        var text = value.description  // at most 24 bytes: a small string, not allocated
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends `instant` as its 20 bytes of RFC 3339 UTC text, `2024-01-01T08:10:00Z`; or,
    /// as `wallClock`, its first 19 with a space for the `T`, `2024-01-01 08:10:00` (a local
    /// time when `instant` was shifted by the zone's offset: ``DisplayZone/local(_:)``).
    mutating func writeRFC3339(_ instant: UTCInstant, wallClock: Bool = false) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 20))
        bytes.withUnsafeMutableBufferPointer { all in
            instant.writeRFC3339(into: UnsafeMutableBufferPointer(rebasing: all[start..<start + 20]))
        }
        if wallClock {
            bytes[start + 10] = UInt8(ascii: " ")
            bytes.removeLast()
        }
    }

    /// Appends `instant` as ``writeRFC3339(_:wallClock:)`` does, copying `stored` instead when
    /// given (its stored text, when that is exactly what it would write).
    mutating func writeRFC3339(_ instant: UTCInstant, stored: UnsafeBufferPointer<UInt8>?) {
        if let stored { bytes.append(contentsOf: stored) } else { writeRFC3339(instant) }
    }

    /// Hands over what is buffered.
    mutating func flush() throws {
        guard !bytes.isEmpty else { return }
        try sink.write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}
