import Foundation
@testable import IncidentCore
import Testing

@Suite("NFC normalization")
struct TextNormalizationTests {
    @Test("text that NFC cannot change is returned unchanged without normalizing", arguments: [
        "abc", "경부고속도로", "收费站", "Tie-in → 1st", "Ångström",
    ])
    func stable(text: String) {
        #expect(!text.mayChangeUnderNFC)
        #expect(text.nfc == text.precomposedStringWithCanonicalMapping)
    }

    @Test("text NFC changes is detected and normalized", arguments: [
        "경부".decomposedStringWithCanonicalMapping, "e\u{301}", "\u{212B}", "\u{F900}", "A\u{30A}",
    ])
    func changes(text: String) {
        #expect(text.mayChangeUnderNFC)
        #expect(text.nfc == text.precomposedStringWithCanonicalMapping)
    }

    @Test("the check read from UTF-8 bytes agrees with the check of each scalar, for every scalar of planes 0-2 and 14")
    func utf8AgreesWithScalars() {
        var disagreeing: [UInt32] = []
        for value in Array(0..<0x30000) + Array(0xE0000..<0xE0200) {
            guard let scalar = Unicode.Scalar(UInt32(value)) else { continue }  // surrogates
            let alone = String(Character(scalar))
            let amid = "경부 a" + alone + "é고"
            let expected = String.mayChangeUnderNFC(scalar)
            if alone.mayChangeUnderNFC != expected || amid.mayChangeUnderNFC != expected { disagreeing.append(UInt32(value)) }
        }
        #expect(disagreeing.isEmpty, "U+\(disagreeing.prefix(5).map { String($0, radix: 16) })")
        // The rule itself, on both sides of the fast path's boundaries.
        #expect(!String.mayChangeUnderNFC("\u{2FF}") && String.mayChangeUnderNFC("\u{300}"))
        #expect(!String.mayChangeUnderNFC("경") && String.mayChangeUnderNFC("\u{1100}") && String.mayChangeUnderNFC("\u{2F800}"))
    }

    @Test("a stray control is found from the UTF-8 bytes, TAB, LF and CR are not stray")
    func strayControls() {
        #expect("a\u{0}b".hasStrayControl && "경\u{1B}".hasStrayControl && "\u{1F}".hasStrayControl)
        #expect(!"a\tb\nc\rd".hasStrayControl && !"경부 \u{7F} \u{85}".hasStrayControl && !"".hasStrayControl)
        // At every position of a text read eight bytes at a time, beside Hangul and ASCII.
        let text = Array("경부고속도로 abcdefgh 서울방향 ijkl")
        for position in 0...text.count {
            for (control, stray) in [("\u{1}", true), ("\u{1F}", true), ("\u{0}", true), ("\t", false), ("\n", false), ("\r", false)] {
                var characters = text
                characters.insert(Character(control), at: position)
                #expect(String(characters).hasStrayControl == stray, "\(position) \(control.unicodeScalars.first!.value)")
            }
        }
        #expect(!String(text).hasStrayControl)
    }
}
