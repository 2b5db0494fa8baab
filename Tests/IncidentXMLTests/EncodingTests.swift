import Foundation
import IncidentXML
import Testing
import TestSupport

/// Documents declared `encoding="EUC-KR"` or `CP949` give the same UTF-8 values as their UTF-8
/// twins (libxml2 converts through glibc iconv; EUC-KR is read as its superset CP949).
@Suite struct EncodingTests {
    @Test(arguments: ["xml/gits_multi_euckr.xml", "xml/gits_multi_cp949.xml"])
    func legacyKoreanTwinMatchesUTF8(_ path: String) throws {
        let utf8 = try read(loadBytes(TestPaths.fixture("xml/gits_multi.xml")), schema: Schemas.gits)
        let bytes = try loadBytes(TestPaths.fixture(path))
        #expect(String(data: Data(bytes), encoding: .utf8) == nil, "the fixture really is not UTF-8")
        let legacy = try read(bytes, schema: Schemas.gits)
        #expect(legacy.records == utf8.records)
        #expect(legacy.finalEnvelope == utf8.finalEnvelope)
        #expect(legacy.records[1][Schemas.gitsIndex("inciPlace1")] == "강변북로")
    }

    @Test func cp949BytesLabeledEUCKRDecodeCorrectly() throws {
        let bytes = try loadBytes(TestPaths.fixture("xml/cp949_labeled_euckr.xml"))
        #expect(bytes.contains(0x8C), "holds a CP949-only lead byte")
        let legacy = try read(bytes, schema: Schemas.gits)
        let twin = try read(loadBytes(TestPaths.fixture("xml/cp949_labeled_utf8_twin.xml")), schema: Schemas.gits)
        #expect(legacy.records == twin.records)
        #expect(legacy.records.first?[Schemas.gitsIndex("inciDesc")] == "똠방각하 햏 강변북로")
    }

    @Test(arguments: ["EUC-KR", "euc-kr", "CP949", "UHC"])
    func encodingNamesAreCaseInsensitiveAndAliased(_ label: String) throws {
        // "강변북로 똠" in CP949 (똠 = 8C 63 exists only in CP949).
        let korean: [UInt8] = [0xB0, 0xAD, 0xBA, 0xAF, 0xBA, 0xCF, 0xB7, 0xCE, 0x20, 0x8C, 0x63]
        let bytes = Array("<?xml version=\"1.0\" encoding=\"\(label)\"?><d><r><a>".utf8) + korean + Array("</a></r></d>".utf8)
        let schema = XMLRecordSchema(recordElements: [XMLName("r")], fields: [XMLName("a")])
        let result = try read(bytes, schema: schema)
        #expect(result.records.first?[0] == "강변북로 똠")
    }

    /// libxml2 2.9 reports iconv failures without a parser context; they must still surface.
    @Test(arguments: [[0xFF, 0xFF], [0xC9], [0xB0, 0x20]])
    func invalidEUCKRBytesAreAnError(_ bad: [UInt8]) {
        // 0xFF is no lead byte; 0xC9 and 0xB0 are lead bytes followed by an invalid trail byte.
        let bytes = Array("<?xml version=\"1.0\" encoding=\"EUC-KR\"?><d><r><a>x".utf8) + bad + Array("y</a></r></d>".utf8)
        let schema = XMLRecordSchema(recordElements: [XMLName("r")], fields: [XMLName("a")])
        for size in [1, 3, bytes.count] {
            var records = 0
            let error = caught {
                let result = try read(bytes, schema: schema, chunkSize: size)
                records = result.records.count
            } as? XMLParseError
            #expect(error?.kind == .encoding, "chunk size \(size)")
            #expect(records == 0)
        }
    }

    /// The first four bytes select UCS-4 when the context is created; the conversion of what
    /// follows fails there, before any `xmlParseChunk`.
    @Test(arguments: [[0x00, 0x00, 0x00, 0x3C], [0x3C, 0x00, 0x00, 0x00], [0xFF, 0xFE, 0x00, 0xD8]])
    func invalidInputInAutodetectedEncodingIsAnError(_ head: [UInt8]) {
        let bytes = head + Array("?xml version=\"1.0\"?><d><r><a>x</a></r></d>".utf8) + [0, 0, 0]
        for size in [1, 4, 5, bytes.count] {
            let error = caught { _ = try read(bytes, schema: Schemas.gits, chunkSize: size) }
            #expect(error is XMLParseError, "chunk size \(size)")
        }
    }

    @Test func warningsDoNotFailTheParse() throws {
        // Unsupported version and a relative namespace URI are libxml2 warnings.
        let xml = "<?xml version=\"1.1\"?><d xmlns:p=\"relative\"><p:r><a>x</a></p:r></d>"
        let schema = XMLRecordSchema(recordElements: [XMLName("r", namespaceURI: "relative")], fields: [XMLName("a")])
        #expect(try read(xml, schema: schema).records.map(\.values) == [["x"]])
    }
}
