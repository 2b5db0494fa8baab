/// Whitespace-separated decimal numbers (a GML `posList`), split on the UTF-8 bytes: each
/// token becomes a small `String` (stored inline up to 15 bytes, so without an allocation for
/// a coordinate) and is read by `Double(String)`, in the C locale whatever `setlocale` did.
enum DecimalList {
    /// The numbers in `text`, separated by spaces, tabs, CRs or LFs; nil when a token is not a
    /// number.
    static func numbers(in text: String) -> [Double]? {
        var text = text
        return text.withUTF8 { bytes -> [Double]? in
            var out: [Double] = []
            out.reserveCapacity(bytes.count / 8)
            var i = 0
            while i < bytes.count {
                while i < bytes.count, isSpace(bytes[i]) { i += 1 }
                let start = i
                while i < bytes.count, !isSpace(bytes[i]) { i += 1 }
                if i == start { break }
                guard let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)) else {
                    return nil
                }
                out.append(value)
            }
            return out
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
