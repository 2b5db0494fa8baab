import Foundation
import IncidentXML
import Testing
import TestSupport

/// Names match on namespace URI and local name exactly; elements of namespaces the schema
/// never names are ignored inside records (and inside fields being read), with their text.
@Suite struct NamespaceTests {
    static let realSeqs = ["202301059559", "202303216347", "202303216348", "202303217889"]

    /// The real GITS response with `element` inserted into every `itemList`, at its start or end.
    static func gits(inserting element: String, atEnd: Bool = false) throws -> [UInt8] {
        let text = String(decoding: try loadBytes(TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")), as: UTF8.self)
        let inserted = atEnd ? text.replacingOccurrences(of: "</itemList>", with: element + "</itemList>")
                             : text.replacingOccurrences(of: "<itemList>", with: "<itemList>" + element)
        return Array(inserted.utf8)
    }

    static let vendorElements = [
        // The reported document: a vendor's regSeq in its own namespace.
        "<meta:regSeq xmlns:meta=\"urn:vendor:audit\">999</meta:regSeq>",
        // The same name in the vendor's namespace through a default namespace declaration.
        "<regSeq xmlns=\"urn:vendor:audit\">999</regSeq>",
        // Unqualified names inside a foreign element are the vendor's, not GITS's.
        "<meta:audit xmlns:meta=\"urn:vendor:audit\"><regSeq>999</regSeq><inciDesc>vendor</inciDesc></meta:audit>",
        // Deeper, and with text around.
        "x<meta:a xmlns:meta=\"urn:vendor:audit\"><meta:b><regSeq>999</regSeq></meta:b>tail</meta:a>",
    ]

    @Test(arguments: vendorElements, [false, true])
    func vendorElementsInsideRecordsAreIgnored(_ element: String, atEnd: Bool) throws {
        let plain = try read(loadBytes(TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")), schema: Schemas.gits)
        let result = try readInEveryChunking(Self.gits(inserting: element, atEnd: atEnd), schema: Schemas.gits, maxSplits: 500)
        #expect(result.records.map { $0[Schemas.gitsIndex("regSeq")] } == Self.realSeqs)
        #expect(result.records.map(\.values) == plain.records.map(\.values))
        #expect(result.records.allSatisfy { $0.problems.isEmpty })
        #expect(result.finalEnvelope == plain.finalEnvelope)
    }

    @Test func prefixDeclaredOnTheRootIsIgnoredTheSame() throws {
        var text = String(decoding: try Self.gits(inserting: "<meta:regSeq>999</meta:regSeq>"), as: UTF8.self)
        text = text.replacingOccurrences(of: "<ServiceResult>", with: "<ServiceResult xmlns:meta=\"urn:vendor:audit\">")
        let result = try read(Array(text.utf8), schema: Schemas.gits)
        #expect(result.records.map { $0[Schemas.gitsIndex("regSeq")] } == Self.realSeqs)
    }

    /// A foreign element inside a field being read adds none of its text.
    @Test func foreignTextNeverFeedsAField() throws {
        let xml = """
            <d xmlns:m="urn:m"><r><a>사고<m:note>junk<b>deeper</b></m:note> 정체</a><b>y<m:x/>z</b></r>\
            <h>head<m:x>junk</m:x>er</h></d>
            """
        let result = try readInEveryChunking(Array(xml.utf8), schema: Spelling.plain)
        #expect(result.records.map(\.values) == [["사고 정체", "yz"]])
        #expect(result.finalEnvelope.values == ["header"])
    }

    /// Outside records and fields, foreign elements wrap the document without being named.
    @Test func foreignWrappersOutsideRecordsAreTransparent() throws {
        let url = TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")
        let plain = try read(loadBytes(url), schema: Schemas.gits)
        var text = String(decoding: try loadBytes(url), as: UTF8.self)
        text = text.replacingOccurrences(of: "<ServiceResult>", with: "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body><ServiceResult>")
            .replacingOccurrences(of: "</ServiceResult>", with: "</ServiceResult></soap:Body></soap:Envelope>")
        let wrapped = try readInEveryChunking(Array(text.utf8), schema: Schemas.gits, maxSplits: 500)
        #expect(wrapped.records == plain.records)
        #expect(wrapped.finalEnvelope.values == plain.finalEnvelope.values)
        #expect(wrapped.finalEnvelope.rootElement == XMLName("Envelope", namespaceURI: "http://schemas.xmlsoap.org/soap/envelope/"))
    }

    @Test func envelopeFieldInAnotherNamespaceIsIgnored() throws {
        let bytes = try Self.gits(inserting: "<m:headerCd xmlns:m=\"urn:m\">99</m:headerCd>")
        var text = String(decoding: bytes, as: UTF8.self)
        text = text.replacingOccurrences(of: "<msgHeader>", with: "<msgHeader><headerCd xmlns=\"urn:m\">98</headerCd>")
        let result = try read(Array(text.utf8), schema: Schemas.gits)
        #expect(result.finalEnvelope.values == ["0", "정상적으로 처리되었습니다.", "4"])
        #expect(result.finalEnvelope.problems.isEmpty)
    }

    /// A schema that names the vendor's namespace reads both names, each in its own namespace.
    @Test func namingTheOtherNamespaceReadsItSeparately() throws {
        let audit = "urn:vendor:audit"
        let schema = XMLRecordSchema(recordElements: [XMLName("itemList")],
                                     fields: [XMLName("regSeq"), XMLName("regSeq", namespaceURI: audit)])
        let result = try read(Self.gits(inserting: "<meta:regSeq xmlns:meta=\"\(audit)\">999</meta:regSeq>"), schema: schema)
        #expect(result.records.map(\.values) == Self.realSeqs.map { [$0, "999"] })
    }
}

/// A single field that occurs twice is a problem of that record only; repeated fields keep every
/// occurrence; envelope fields are single.
@Suite struct ProblemTests {
    static let seq = Schemas.gitsIndex("regSeq")

    /// The real GITS response with the second record's `regSeq` element replaced by `replacement`.
    static func gitsWithSecondRegSeq(_ replacement: String) throws -> [UInt8] {
        let text = String(decoding: try loadBytes(TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")), as: UTF8.self)
        let changed = text.replacingOccurrences(of: "<regSeq>202303216347</regSeq>", with: replacement)
        #expect(changed != text)
        return Array(changed.utf8)
    }

    @Test(arguments: [
        ("<regSeq>1</regSeq><regSeq>2</regSeq>", "regSeq occurs 2 times"),
        ("<regSeq>202303216347</regSeq><regSeq>202303216347</regSeq>", "regSeq occurs 2 times"),
        ("<regSeq>202303216347</regSeq><regSeq/>", "regSeq occurs 2 times"),
        ("<regSeq/><regSeq>202303216347</regSeq><regSeq></regSeq>", "regSeq occurs 3 times"),
        ("<regSeq>1<regSeq>2</regSeq></regSeq>", "regSeq occurs 2 times"),
        ("<regSeq>1</regSeq><x><regSeq>2</regSeq></x>", "regSeq occurs 2 times"),
    ])
    func duplicateSingleFieldIsAProblemOfThatRecordOnly(_ replacement: String, _ problem: String) throws {
        let result = try readInEveryChunking(Self.gitsWithSecondRegSeq(replacement), schema: Schemas.gits, maxSplits: 500)
        #expect(result.records.count == 4)
        #expect(result.records.map { $0[Self.seq] } == ["202301059559", nil, "202303216348", "202303217889"])
        #expect(result.records.map(\.problems) == [[], [problem], [], []])
        // The rest of the record is read as usual.
        #expect(result.records[1][Schemas.gitsIndex("inciPlace1")] == "강변북로")
        #expect(result.finalEnvelope.values == ["0", "정상적으로 처리되었습니다.", "4"])
    }

    @Test func severalDuplicatedFieldsAreListedInFieldOrder() throws {
        let xml = "<d><r><b>1</b><a>2</a><b>3</b><a>4</a><a/></r><r><a>ok</a></r></d>"
        let result = try read(xml, schema: Spelling.plain)
        #expect(result.records.map(\.values) == [[nil, nil], ["ok", nil]])
        #expect(result.records.map(\.problems) == [["a occurs 3 times", "b occurs 2 times"], []])
    }

    static let repeatedSchema = XMLRecordSchema(
        recordElements: [XMLName("r")],
        fields: [XMLField(XMLName("v"), cardinality: .repeated, attributes: [XMLAttribute(XMLName("lang"))]),
                 XMLField(XMLName("k"), attributes: [XMLAttribute(XMLName("n"))]),
                 XMLField(XMLName("s"))])

    @Test func repeatedFieldKeepsEveryOccurrenceInOrder() throws {
        let xml = "<d><r><v lang=\"fi\">yksi</v><s>single</s><v/><w><v lang=\"en\"> two </v></w><k n=\"7\">kv</k></r><r/></d>"
        let result = try readInEveryChunking(Array(xml.utf8), schema: Self.repeatedSchema)
        #expect(result.records.count == 2)
        let r = result.records[0]
        #expect(r.values == [nil, "kv", "single"])
        #expect(r.occurrences == [XMLOccurrence(field: 0, text: "yksi", attributes: ["fi"]),
                                  XMLOccurrence(field: 0, text: nil, attributes: [nil]),
                                  XMLOccurrence(field: 0, text: "two", attributes: ["en"]),
                                  XMLOccurrence(field: 1, text: "kv", attributes: ["7"])])
        #expect(r.occurrences(of: 0).map(\.text) == ["yksi", nil, "two"])
        #expect(r.problems.isEmpty)
        #expect(result.records[1].occurrences.isEmpty && result.records[1].values == [nil, nil, nil])
    }

    @Test func repeatedFieldNestedInItselfIsAProblem() throws {
        let xml = "<d><r><v lang=\"a\">x<v lang=\"b\">y</v>z</v></r></d>"
        let result = try read(xml, schema: Self.repeatedSchema)
        #expect(result.records[0].occurrences == [XMLOccurrence(field: 0, text: "xyz", attributes: ["a"])])
        #expect(result.records[0].problems == ["v is nested in itself"])
    }

    @Test func singleFieldWithAttributesTwiceKeepsNeitherOccurrence() throws {
        let xml = "<d><r><k n=\"1\">a</k><k n=\"2\">b</k><v>x</v></r></d>"
        let result = try read(xml, schema: Self.repeatedSchema)
        #expect(result.records[0].values == [nil, nil, nil])
        #expect(result.records[0].occurrences == [XMLOccurrence(field: 0, text: "x", attributes: [nil])])
        #expect(result.records[0].problems == ["k occurs 2 times"])
    }

    @Test func duplicateEnvelopeFieldsAreEnvelopeProblems() throws {
        let text = String(decoding: try loadBytes(TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")), as: UTF8.self)
            .replacingOccurrences(of: "<msgBody>", with: "<msgHeader><headerCd>99</headerCd></msgHeader><msgBody>")
        let result = try readInEveryChunking(Array(text.utf8), schema: Schemas.gits, maxSplits: 500)
        #expect(result.finalEnvelope.values == [nil, "정상적으로 처리되었습니다.", "4"])
        #expect(result.finalEnvelope.problems == ["headerCd occurs more than once"])
        #expect(result.records.count == 4)
        #expect(result.records.allSatisfy { $0.problems.isEmpty })
    }

    /// Problems of a context attribute reach every record inside that context.
    @Test func contextProblemsReachTheRecordsInside() throws {
        let schema = XMLRecordSchema(
            recordElements: [XMLName("r")], fields: [XMLField(XMLName("a"))],
            contextAttributes: [XMLContextAttribute(element: XMLName("g"), attribute: XMLAttribute(XMLName("kind"), resolvesQName: true)),
                                XMLContextAttribute(element: XMLName("g"), attribute: XMLAttribute(XMLName("id")))])
        let xml = """
            <d xmlns:p="urn:p"><g id="1" kind="p:K"><r><a>1</a></r><g id="2" kind="zz:K"><r><a>2</a></r></g><r><a>3</a></r></g><r><a>4</a></r></d>
            """
        let result = try readInEveryChunking(Array(xml.utf8), schema: schema)
        #expect(result.records.map(\.context) == [["{urn:p}K", "1"], [nil, "2"], ["{urn:p}K", "1"], [nil, nil]])
        #expect(result.records.map(\.problems) == [[], ["g/@kind 'zz:K' uses the undeclared prefix 'zz'"], [], []])
    }

    /// Kept occurrences count against the record limit, so memory stays bounded per record:
    /// past it no occurrence is kept and the record is delivered with a problem.
    @Test func occurrencesAreBoundedByTheRecordLimit() throws {
        let limits = XMLLimits(maxRecordBytes: 64 * 1024)
        var records: [XMLRecord] = []
        let reader = XMLRecordReader(schema: Self.repeatedSchema, limits: limits) { record, _ in records.append(record) }
        try reader.parse(Array("<d><r>".utf8))
        for _ in 0..<1000 { try reader.parse(Array(String(repeating: "<v/>", count: 100).utf8)) }
        try reader.parse(Array("<s>id</s></r></d>".utf8))
        try reader.finish()
        try #require(records.count == 1)
        #expect(records[0].occurrences.count == 64 * 1024 / 32)
        #expect(records[0].values[2] == "id")
        #expect(records[0].problems == ["the record is larger than the limit of 65536 bytes per record (XMLLimits.maxRecordBytes counts 3200002): only its short values were read, to name it"])
    }
}
