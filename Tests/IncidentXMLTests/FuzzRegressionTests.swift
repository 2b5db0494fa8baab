import Foundation
import IncidentXML
import Testing
import TestSupport

/// Replays of inputs found by Scripts/fuzz-xml, decoded exactly as
/// Tests/Fuzz/IncidentXMLFuzz/FuzzEntry.swift does, and a deterministic mutation fuzzer that
/// runs with every `swift test`.
@Suite struct FuzzRegressionTests {
    /// Runs one fuzz input exactly as the libFuzzer entry does; returns the error.
    @discardableResult
    static func replay(_ input: [UInt8]) -> (any Error)? {
        input.withUnsafeBytes { bytes in
            FuzzInput.run(bytes) { record, schema in
                #expect(FuzzInput.isWellShaped(record, schema))
            }
        }
    }

    static let foundInputs: [String] = {
        let folder = TestPaths.fixture("xml/fuzz")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted()
    }()

    @Test(arguments: foundInputs)
    func foundInputStaysFixed(_ name: String) throws {
        let input = try loadBytes(TestPaths.fixture("xml/fuzz/\(name)"))
        let error = Self.replay(input)
        #expect(error == nil || error is XMLParseError)
    }

    @Test func cdataOverTheTextLimitFailsCleanly() throws {
        // The first fuzz find: a CDATA section past maxTextBytes made the CDATA callback read
        // libxml2's input buffer after the reader had halted libxml2 (which freed it).
        // Its CDATA sits in a record, which a text over the limit now sets aside instead of
        // halting the parse; the input still ends malformed further on.
        let input = try loadBytes(TestPaths.fixture("xml/fuzz/cdata-text-limit-use-after-free.bin"))
        let error = Self.replay(input) as? XMLParseError
        #expect(error?.kind == .malformed)
        // The halting path itself: a CDATA section over the limit outside records, in small
        // blocks (libxml2's push parser passes CDATA in 300-byte pieces).
        let schema = XMLRecordSchema(recordElements: [XMLName("r")], fields: [XMLName("a")], envelopeFields: [XMLName("h")])
        let reader = XMLRecordReader(schema: schema, limits: XMLLimits(maxTextBytes: 64)) { _, _ in }
        let halted = caught {
            try reader.parse(Array(("<d><h><![CDATA[" + String(repeating: "x", count: 5000) + "]]></h></d>").utf8))
            try reader.finish()
        } as? XMLParseError
        #expect(halted?.kind == .textTooLarge)
    }

    /// Byte flips, insertions of XML-significant snippets, deletions, duplications and
    /// truncations of every fixture, with a fixed seed: each run either succeeds or throws
    /// `XMLParseError`, never crashes or hangs.
    @Test func seededMutations() throws {
        let folder = TestPaths.fixture("xml")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".xml") }.sorted()
            .map { try loadBytes(folder.appendingPathComponent($0)) }
            + [DatexSample.fiV2, DatexSample.ndwV2LifecycleEnd].map { try $0.bytes() }
            + [Spelling.utf16(bigEndian: false, "<d><r><a>강변&nbsp;</a></r></d>")]
        let snippets: [[UInt8]] = ["<", ">", "&", "&amp;", "&#x0;", "&#xD800;", "]]>", "<![CDATA[", "<!--", "-->", "<?", "?>",
                                   "</", "/>", "\"", "'", "=", "xmlns:p=\"urn:x\"", "p:", "<!DOCTYPE d [<!ENTITY e \"&e;\">]>",
                                   "&e;", "\r", "\r\n", "\u{FEFF}", "\u{0}", "\u{1}", "&#1;", "&#x1F;", "&nbsp;", "&foo;",
                                   "&_:r;", "\u{FFFE}", "xmlns=\"urn:v\"", "<m:x xmlns:m=\"urn:m\">", "</m:x>",
                                   "xsi:type=\"p:T\"", "<?xml version=\"1.0\" encoding=\"EUC-KR\"?>"].map { Array($0.utf8) }
            + [[0xFF, 0xFE], [0xFE, 0xFF], [0xEF, 0xBB, 0xBF], [0xED, 0xA0, 0x80], [0xC9, 0x20], [0x3C, 0x00]]
        var rng = SplitMix64(seed: 0x1D_C0DE)
        var runs = 0
        for iteration in 0..<1500 {
            var doc = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0...(rng.next() % 4) {
                guard !doc.isEmpty else { break }
                let at = Int(rng.next() % UInt64(doc.count))
                switch rng.next() % 6 {
                case 0: doc[at] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                case 1: doc[at] = UInt8(truncatingIfNeeded: rng.next())
                case 2: doc.insert(contentsOf: snippets[Int(rng.next() % UInt64(snippets.count))], at: at)
                case 3: doc.removeSubrange(at..<min(doc.count, at + Int(rng.next() % 16) + 1))
                case 4: doc.insert(contentsOf: doc[at..<min(doc.count, at + Int(rng.next() % 64))], at: at)
                default: doc.removeSubrange(at..<doc.count)
                }
            }
            let control = UInt8(truncatingIfNeeded: rng.next())
            if let error = Self.replay([control] + doc), !(error is XMLParseError) {
                Issue.record("iteration \(iteration): unexpected \(error)")
            }
            runs += 1
        }
        #expect(runs == 1500)
    }
}
