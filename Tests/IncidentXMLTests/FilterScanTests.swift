@testable import IncidentXML
import TestSupport
import Testing

/// The character filter's two fast scans (vectors in optimized builds, words in debug builds)
/// find exactly the bytes a plain loop finds.
@Suite struct FilterScanTests {
    static func plainScan(_ bytes: [UInt8], from: Int) -> Int {
        bytes[from...].firstIndex { $0 < 0x20 || $0 == 0x26 || $0 == 0x21 || $0 == 0x3F || $0 == 0xEF } ?? bytes.count
    }

    @Test func bothScansFindWhatAPlainLoopFinds() {
        var rng = SplitMix64(seed: 0x5CA1)
        // Mostly bytes that are never stopped at (ASCII letters, '<', '>', Hangul bytes), with
        // every stopping byte planted at random places, in buffers of every length up to 80.
        let quiet: [UInt8] = Array("<itemList>abc 0.9/:-=\"'".utf8) + [0xEA, 0xB0, 0x80, 0xED, 0x9E, 0xA3, 0xEE, 0xBF, 0xBE, 0x7F, 0x80, 0xFF]
        let stops: [UInt8] = Array(0x00...0x1F) + [0x26, 0x21, 0x3F, 0xEF]
        var checked = 0
        for _ in 0..<3000 {
            let count = Int(rng.next() % 81)
            var bytes = (0..<count).map { _ in quiet[Int(rng.next() % UInt64(quiet.count))] }
            for _ in 0..<Int(rng.next() % 3) where count > 0 {
                bytes[Int(rng.next() % UInt64(count))] = stops[Int(rng.next() % UInt64(stops.count))]
            }
            let from = count == 0 ? 0 : Int(rng.next() % UInt64(count + 1))
            let expected = Self.plainScan(bytes, from: from)
            bytes.withUnsafeBufferPointer { buffer in
                let p = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                #expect(XMLCharacterFilter.scanTextByVectors(p, from: from, to: count) == expected, "\(bytes) from \(from)")
                #expect(XMLCharacterFilter.scanTextByWords(p, from: from, to: count) == expected, "\(bytes) from \(from)")
            }
            checked += 1
        }
        #expect(checked == 3000)
    }
}
