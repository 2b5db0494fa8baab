import Foundation

extension String {
    /// This text in Unicode Normalization Form C (UAX #15), so that the same words compare and
    /// search equal however they were typed: Hangul pasted from a macOS clipboard arrives
    /// decomposed (NFD: `ㄱ`+`ㅕ`+`ㅇ` jamo instead of `경`).
    ///
    /// Text that cannot change (ASCII, precomposed Hangul, CJK ideographs, and any text without
    /// combining marks, conjoining jamo or canonical singletons) is returned as is without
    /// calling the normalizer, which costs ten times the check.
    public var nfc: String {
        mayChangeUnderNFC ? precomposedStringWithCanonicalMapping : self
    }

    /// Whether NFC might change this text: it holds a combining mark, a conjoining Hangul
    /// jamo, a CJK compatibility ideograph or another character with a singleton canonical
    /// decomposition (UnicodeData.txt). Read from the UTF-8 bytes where the text has them in
    /// one piece: only a sequence at or above U+0300 (a lead byte from 0xCC) is decoded, and
    /// ASCII and precomposed Hangul cost a compare (iterating the Unicode scalars cost a fifth
    /// of normalizing a record, issue 23).
    var mayChangeUnderNFC: Bool {
        if let answer = utf8.withContiguousStorageIfAvailable(Self.mayChangeUnderNFC(utf8:)) { return answer }
        return unicodeScalars.contains(where: Self.mayChangeUnderNFC(_:))
    }

    /// ``mayChangeUnderNFC`` over valid UTF-8.
    static func mayChangeUnderNFC(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = bytes.count
        while i < count {
            let lead = bytes[i]
            // ASCII, a continuation byte, or the lead of a 2-byte sequence below U+0300.
            guard lead >= 0xCC else { i += 1; continue }
            let value: UInt32
            if lead < 0xE0 {
                value = UInt32(lead & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)
                i += 2
            } else if lead < 0xF0 {
                value = UInt32(lead & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
                i += 3
                if (0xAC00...0xD7A3).contains(value) { continue }  // precomposed Hangul, most of a Korean text
            } else {
                value = UInt32(lead & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12 | UInt32(bytes[i + 2] & 0x3F) << 6
                    | UInt32(bytes[i + 3] & 0x3F)
                i += 4
            }
            if let scalar = Unicode.Scalar(value), mayChangeUnderNFC(scalar) { return true }
        }
        return false
    }

    /// Whether NFC might change `scalar` (see ``mayChangeUnderNFC``).
    static func mayChangeUnderNFC(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        guard v >= 0x300 else { return false }
        // Precomposed Hangul, CJK unified ideographs, common punctuation and arrows.
        if (0xAC00...0xD7A3).contains(v) || (0x4E00...0x9FFF).contains(v) || (0x2010...0x2027).contains(v)
            || (0x2190...0x21FF).contains(v) { return false }
        if scalar.properties.canonicalCombiningClass.rawValue != 0 { return true }
        if (0x1100...0x11FF).contains(v) || (0xA960...0xA97F).contains(v) || (0xD7B0...0xD7FF).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0x2F800...0x2FA1F).contains(v) { return true }
        switch v {
        case 0x0340, 0x0341, 0x0343, 0x0344, 0x0374, 0x037E, 0x0387, 0x1F71...0x1FFD, 0x2000, 0x2001,
             0x2126, 0x212A, 0x212B, 0x2329, 0x232A:
            return true
        default:
            return false
        }
    }
}

extension Incident {
    /// The incident with every text field of `fields` in NFC (see ``Swift/String/nfc``); ids
    /// are left as the provider sent them.
    public func normalizedToNFC(fields: [IncidentField] = IncidentField.content) -> Incident {
        var copy = self
        for field in fields where field.storage == .text {
            if case .text(let text) = field.value(self), text.mayChangeUnderNFC {
                field.assign(&copy, .text(text.nfc))
            }
        }
        return copy
    }
}
