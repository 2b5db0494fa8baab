/// 64-bit FNV-1a, a fast non-cryptographic hash (<http://www.isthe.com/chongo/tech/comp/fnv/>).
///
/// Used to detect change (an incident's normalized fields, a migration's SQL), never for
/// security: it does not resist deliberate collisions.
public struct FNV1a64: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func combine(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
    }

    /// Adds an optional text field, keeping `nil` distinct from `""` and field boundaries
    /// unambiguous (a 0x1F unit separator after each field, 0x00 for nil).
    public mutating func combine(field: String?) {
        if let field {
            var copy = field
            copy.withUTF8 { combine($0) }
            combine(CollectionOfOne(0x1F))
        } else {
            combine(CollectionOfOne(0x00))
        }
    }

    /// Adds an optional number by its exact bits (nil kept distinct from every value).
    public mutating func combine(bits: UInt64?) {
        guard let bits else { return combine(CollectionOfOne(0x00)) }
        combine(CollectionOfOne(0x01))
        withUnsafeBytes(of: bits.littleEndian) { combine($0) }
    }

    /// The hash as the signed 64-bit integer SQLite stores.
    public var signed: Int64 { Int64(bitPattern: value) }

    /// The hash as 16 lowercase hex digits.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
