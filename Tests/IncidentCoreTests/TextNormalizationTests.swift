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
}
