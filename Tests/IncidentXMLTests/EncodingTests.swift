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

/// Which encoding a document is read in: its byte order mark, then its XML declaration, then the
/// HTTP charset, then UTF-8 (XML 1.0 Appendix F, RFC 7303 §3.2).
@Suite struct EncodingPrecedenceTests {
    static let schema = XMLRecordSchema(recordElements: [XMLName("r")], fields: [XMLName("a")])
    static let korean = "강변북로 똠"
    /// `korean` in CP949 (똠 = 8C 63 exists only in CP949).
    static let cp949: [UInt8] = [0xB0, 0xAD, 0xBA, 0xAF, 0xBA, 0xCF, 0xB7, 0xCE, 0x20, 0x8C, 0x63]
    static let body = "<d><r><a>\(korean)</a></r></d>"

    static func declaration(_ encoding: String, quote: String = "\"") -> String {
        "<?xml version=\(quote)1.0\(quote) encoding=\(quote)\(encoding)\(quote)?>"
    }
    static func koreanBytes(_ prefix: String = "") -> [UInt8] {
        Array((prefix + "<d><r><a>").utf8) + cp949 + Array("</a></r></d>".utf8)
    }
    static func utf32(bigEndian: Bool, _ text: String, mark: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = mark ? (bigEndian ? [0, 0, 0xFE, 0xFF] : [0xFF, 0xFE, 0, 0]) : []
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let be = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            bytes += bigEndian ? be : be.reversed()
        }
        return bytes
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        var charset: String?
        let encoding: String
        var value: String = EncodingPrecedenceTests.korean
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "UTF-8, nothing said", bytes: Array(body.utf8), encoding: "UTF-8"),
        Case(name: "UTF-8 BOM", bytes: [0xEF, 0xBB, 0xBF] + Array(body.utf8), encoding: "UTF-8"),
        Case(name: "UTF-8 BOM beats the declaration", bytes: [0xEF, 0xBB, 0xBF] + Array((declaration("EUC-KR") + body).utf8), encoding: "UTF-8"),
        Case(name: "UTF-8 BOM beats the charset", bytes: [0xEF, 0xBB, 0xBF] + Array(body.utf8), charset: "EUC-KR", encoding: "UTF-8"),
        Case(name: "UTF-16LE BOM", bytes: Spelling.utf16(bigEndian: false, body), encoding: "UTF-16LE"),
        Case(name: "UTF-16BE BOM", bytes: Spelling.utf16(bigEndian: true, body), encoding: "UTF-16BE"),
        Case(name: "UTF-16LE BOM and declaration", bytes: Spelling.utf16(bigEndian: false, declaration("UTF-16") + body), encoding: "UTF-16LE"),
        Case(name: "UTF-16BE BOM beats a wrong declaration", bytes: Spelling.utf16(bigEndian: true, declaration("UTF-8") + body), encoding: "UTF-16BE"),
        Case(name: "UTF-16LE BOM beats the charset", bytes: Spelling.utf16(bigEndian: false, body), charset: "EUC-KR", encoding: "UTF-16LE"),
        Case(name: "UTF-16LE without BOM, declared", bytes: Array(Spelling.utf16(bigEndian: false, declaration("UTF-16") + body).dropFirst(2)), encoding: "UTF-16LE"),
        Case(name: "UTF-16BE without BOM, declared", bytes: Array(Spelling.utf16(bigEndian: true, declaration("UTF-16") + body).dropFirst(2)), encoding: "UTF-16BE"),
        Case(name: "UTF-16LE by charset alone", bytes: Array(Spelling.utf16(bigEndian: false, body).dropFirst(2)), charset: "UTF-16LE", encoding: "UTF-16LE"),
        Case(name: "UTF-32LE BOM", bytes: utf32(bigEndian: false, body), encoding: "UTF-32LE"),
        Case(name: "UTF-32BE BOM", bytes: utf32(bigEndian: true, body), encoding: "UTF-32BE"),
        Case(name: "UTF-32BE without BOM, declared", bytes: utf32(bigEndian: true, declaration("UTF-32") + body, mark: false), encoding: "UTF-32BE"),
        Case(name: "EUC-KR declared", bytes: koreanBytes(declaration("EUC-KR")), encoding: "CP949"),
        Case(name: "CP949 declared in single quotes", bytes: koreanBytes(declaration("CP949", quote: "'")), encoding: "CP949"),
        Case(name: "EUC-KR undeclared, HTTP charset", bytes: koreanBytes(), charset: "EUC-KR", encoding: "CP949"),
        Case(name: "EUC-KR undeclared, HTTP charset lower case, quoted", bytes: koreanBytes(), charset: "\"euc-kr\"", encoding: "CP949"),
        Case(name: "EUC-KR undeclared, HTTP charset ks_c_5601-1987", bytes: koreanBytes(), charset: "ks_c_5601-1987", encoding: "CP949"),
        Case(name: "declaration without encoding, HTTP charset", bytes: koreanBytes("<?xml version=\"1.0\" standalone=\"yes\"?>\n"), charset: "EUC-KR", encoding: "CP949"),
        Case(name: "UTF-8 declared beats the charset", bytes: Array((declaration("UTF-8") + body).utf8), charset: "EUC-KR", encoding: "UTF-8"),
        Case(name: "EUC-KR declared beats the charset", bytes: koreanBytes(declaration("EUC-KR")), charset: "UTF-8", encoding: "CP949"),
        Case(name: "EUC-KR declared beats an unknown charset", bytes: koreanBytes(declaration("EUC-KR")), charset: "X-NO-SUCH-CHARSET", encoding: "CP949"),
        Case(name: "ISO-8859-1 by charset", bytes: Array("<d><r><a>L".utf8) + [0xE4] + Array("ntinen</a></r></d>".utf8),
             charset: "ISO-8859-1", encoding: "ISO-8859-1", value: "Läntinen"),
    ]

    @Test(arguments: cases)
    func encodingChosen(_ c: Case) throws {
        let result = try readInEveryChunking(c.bytes, schema: Self.schema, charset: c.charset)
        #expect(result.records.map(\.values) == [[c.value]])
        #expect(result.encoding == c.encoding)
        #expect(result.repairs == 0)
    }

    @Test(arguments: [
        // (bytes, charset, words the message must contain)
        (koreanBytes(), nil as String?, "not proper UTF-8"),
        (koreanBytes(), "X-NO-SUCH-CHARSET", "unknown character encoding \"X-NO-SUCH-CHARSET\" (from the HTTP charset)"),
        (koreanBytes(), "UTF-8//IGNORE", "\"UTF-8//IGNORE\" from the HTTP charset is not a valid encoding name"),
        (koreanBytes(), "CP949//TRANSLIT", "not a valid encoding name"),
        (koreanBytes(declaration("X-NO-SUCH")), "EUC-KR", "unknown character encoding \"X-NO-SUCH\" (from the XML declaration)"),
        (Array((declaration("UTF-16") + body).utf8), nil, "declares encoding \"UTF-16\" but its bytes are 8-bit"),
        (Array(Spelling.utf16(bigEndian: false, body).dropLast()), nil, "ends inside a multi-byte UTF-16LE character"),
        (Array("<d><r><a>x".utf8) + [0xFF, 0xFF] + Array("</a></r></d>".utf8), "EUC-KR", "are not valid CP949 text"),
    ])
    func unreadableEncodingIsAClearError(_ bytes: [UInt8], _ charset: String?, _ words: String) throws {
        for size in [1, 3, bytes.count] {
            let error = try #require(caught { _ = try read(bytes, schema: Self.schema, charset: charset, chunkSize: size) } as? XMLParseError)
            #expect(error.kind == .encoding, "chunk size \(size)")
            #expect(error.message.contains(words), "\(error.message)")
            #expect(error.line >= 1)
        }
    }

    @Test func invalidBytesAreReportedWhereTheyAre() throws {
        let bytes = Array("<d>\n<r><a>x</a></r>\n<r><a>ab".utf8) + [0xC9, 0x20] + Array("</a></r></d>".utf8)
        var delivered: [[String?]] = []
        let reader = XMLRecordReader(schema: Self.schema) { record, _ in delivered.append(record.values) }
        reader.charset = "EUC-KR"
        let error = caught {
            try reader.parse(bytes)
            try reader.finish()
        } as? XMLParseError
        #expect(error?.kind == .encoding)
        #expect(error?.line == 3)
        #expect(error?.column == 9)
        #expect(delivered == [["x"]])
    }

    @Test func charsetFromContentType() {
        #expect(XMLRecordReader.charset(inContentType: "text/xml;charset=EUC-KR") == "EUC-KR")
        #expect(XMLRecordReader.charset(inContentType: "text/xml; Charset=\"euc-kr\"; q=1") == "euc-kr")
        #expect(XMLRecordReader.charset(inContentType: "application/xml;foo=bar; charset = UTF-16 ") == "UTF-16")
        #expect(XMLRecordReader.charset(inContentType: "text/xml") == nil)
        #expect(XMLRecordReader.charset(inContentType: "text/xml; charset=") == nil)
        #expect(XMLRecordReader.charset(inContentType: nil) == nil)
    }

    /// `parse(contentsOf:charset:)` reads a file served with a charset; `reset()` keeps it for
    /// the next document, and the next file call sets it again.
    @Test func fileWithCharsetAndReuse() throws {
        let folder = try TestPaths.temporaryDirectory("xml-charset")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("euckr.xml")
        try Data(Self.koreanBytes()).write(to: file)
        var values: [String?] = []
        let reader = XMLRecordReader(schema: Self.schema) { record, _ in values.append(record[0]) }
        try reader.parse(contentsOf: file, charset: "EUC-KR", chunkSize: 5)
        #expect(reader.encoding == "CP949")
        reader.reset()
        #expect(reader.charset == "EUC-KR" && reader.encoding == nil)
        try reader.parse(Self.koreanBytes())
        try reader.finish()
        reader.reset()
        #expect((caught { try reader.parse(contentsOf: file) } as? XMLParseError)?.kind == .encoding)
        #expect(values == [Self.korean, Self.korean])
    }

    /// The GITS fixture in EUC-KR, its declaration removed, served with `charset=EUC-KR`: the
    /// same records as the UTF-8 twin.
    @Test func undeclaredEUCKRFixtureWithCharset() throws {
        let utf8 = try read(loadBytes(TestPaths.fixture("xml/gits_multi.xml")), schema: Schemas.gits)
        var bytes = try loadBytes(TestPaths.fixture("xml/gits_multi_euckr.xml"))
        let end = try #require(bytes.firstIndex(of: UInt8(ascii: ">")))
        #expect(String(decoding: bytes[...end], as: UTF8.self).contains("encoding=\"EUC-KR\""))
        bytes.removeSubrange(...end)
        #expect(readError(bytes, schema: Schemas.gits)?.kind == .encoding)
        let result = try readInEveryChunking(bytes, schema: Schemas.gits, charset: "EUC-KR", maxSplits: 500)
        #expect(result.records == utf8.records)
        #expect(result.finalEnvelope == utf8.finalEnvelope)
    }
}
