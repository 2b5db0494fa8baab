import Foundation
import IncidentXML
import Testing

/// One legal spelling of a small document and exactly what the reader must produce from it.
struct Spelling: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let schema: XMLRecordSchema
    let records: [[String?]]
    let envelope: [String?]
    /// Each record's problems, then the envelope's (empty when sound).
    let problems: [[String]]
    let envelopeProblems: [String]
    var testDescription: String { name }

    /// Records `r` with fields `a`, `b`; envelope field `h`; no namespace.
    static let plain = XMLRecordSchema(
        recordElements: [XMLName("r")], fields: [XMLName("a"), XMLName("b")], envelopeFields: [XMLName("h")])
    /// The same names, but only in namespace `urn:x`.
    static let namespaced = XMLRecordSchema(
        recordElements: [XMLName("r", namespaceURI: "urn:x")],
        fields: [XMLName("a", namespaceURI: "urn:x"), XMLName("b", namespaceURI: "urn:x")],
        envelopeFields: [XMLName("h", namespaceURI: "urn:x")])

    init(_ name: String, _ xml: String, schema: XMLRecordSchema = plain, _ records: [[String?]], envelope: [String?] = [nil],
         problems: [[String]]? = nil, envelopeProblems: [String] = []) {
        self.init(name, bytes: Array(xml.utf8), schema: schema, records, envelope: envelope, problems: problems,
                  envelopeProblems: envelopeProblems)
    }

    init(_ name: String, bytes: [UInt8], schema: XMLRecordSchema = plain, _ records: [[String?]], envelope: [String?] = [nil],
         problems: [[String]]? = nil, envelopeProblems: [String] = []) {
        self.name = name
        self.bytes = bytes
        self.schema = schema
        self.records = records
        self.envelope = envelope
        self.problems = problems ?? records.map { _ in [] }
        self.envelopeProblems = envelopeProblems
    }

    static let manyRefs = String(repeating: "x&amp;", count: 2000)
    static let manyRefsValue = String(repeating: "x&", count: 2000)
    static let longKorean = String(repeating: "강변북로 정체 ", count: 3000)

    static let all: [Spelling] = [
        Spelling("plain", "<d><r><a>x</a><b>y</b></r></d>", [["x", "y"]]),
        Spelling("xml declaration and standalone", "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><d><r><a>x</a></r></d>", [["x", nil]]),
        Spelling("predefined entities", "<d><r><a>&lt;&gt;&amp;&apos;&quot;</a></r></d>", [["<>&'\"", nil]]),
        Spelling("amp splits characters calls", "<d><r><a>A &amp; B &amp;&amp; C</a></r></d>", [["A & B && C", nil]]),
        Spelling("thousands of characters calls", "<d><r><a>\(manyRefs)</a></r></d>", [[manyRefsValue, nil]]),
        Spelling("long Korean text", "<d><r><a>\(longKorean)</a></r></d>", [[longKorean.trimmingCharacters(in: .whitespaces), nil]]),
        Spelling("hex character reference", "<d><r><a>&#xAC00;</a><b>&#xac00;&#x1F697;</b></r></d>", [["가", "가🚗"]]),
        Spelling("decimal character reference", "<d><r><a>&#44032;&#45208;</a></r></d>", [["가나", nil]]),
        Spelling("character references around text", "<d><r><a>&#x5B;사고&#x5D; A&#38;B</a></r></d>", [["[사고] A&B", nil]]),
        Spelling("whitespace character references are trimmed", "<d><r><a>&#x20;x&#x9;</a></r></d>", [["x", nil]]),
        Spelling("non-breaking space is not XML whitespace", "<d><r><a>&#xA0;x</a></r></d>", [["\u{A0}x", nil]]),
        Spelling("internal entity", "<!DOCTYPE d [<!ENTITY road \"강변북로\">]><d><r><a>&road; 정체</a></r></d>", [["강변북로 정체", nil]]),
        Spelling("internal entity referenced twice", "<!DOCTYPE d [<!ENTITY e \"v\">]><d><r><a>&e;&e;</a></r><r><a>&e;</a></r></d>", [["vv", nil], ["v", nil]]),
        Spelling("nested internal entities", "<!DOCTYPE d [<!ENTITY in \"Z\"><!ENTITY out \"x&in;y\">]><d><r><a>&out;|&out;</a></r></d>", [["xZy|xZy", nil]]),
        Spelling("internal entity with markup", "<!DOCTYPE d [<!ENTITY e \"<b>in</b>\">]><d><r><a>1&e;2</a></r></d>", [["1in2", "in"]]),
        Spelling("internal entity with character reference", "<!DOCTYPE d [<!ENTITY e \"&#38;#44032;\">]><d><r><a>&e;</a></r></d>", [["가", nil]]),
        Spelling("DOCTYPE without entities", "<!DOCTYPE d><d><r><a>x</a></r></d>", [["x", nil]]),
        Spelling("CDATA alone", "<d><r><a><![CDATA[x < y & z]]></a></r></d>", [["x < y & z", nil]]),
        Spelling("CDATA mixed with text", "<d><r><a>pre <![CDATA[<mid>]]> post&amp;<![CDATA[]]></a></r></d>", [["pre <mid> post&", nil]]),
        Spelling("CDATA with line breaks", "<d><r><a><![CDATA[\n  line1\r\n  line2\n]]></a></r></d>", [["line1\n  line2", nil]]),
        Spelling("CDATA lone CR and CR at block end", "<d><r><a><![CDATA[a\rb\r]]>\r\nc<![CDATA[\r]]><![CDATA[\nd]]></a></r></d>", [["a\nb\n\nc\n\nd", nil]]),
        Spelling("CDATA CR LF across a 300-byte delivery", "<d><r><a><![CDATA[" + String(repeating: "x", count: 299) + "\r\n" + String(repeating: "y", count: 400) + "\r\nz]]></a></r></d>",
                 [[String(repeating: "x", count: 299) + "\n" + String(repeating: "y", count: 400) + "\nz", nil]]),
        Spelling("whitespace-only CDATA is nil", "<d><r><a><![CDATA[  ]]></a></r></d>", [[nil, nil]]),
        Spelling("comment inside field", "<d><r><a>x<!-- note -->y</a></r></d>", [["xy", nil]]),
        Spelling("processing instruction inside field", "<d><r><a>x<?pi data?>y</a></r></d>", [["xy", nil]]),
        Spelling("comments and PIs between fields", "<d><!--c--><?pi?><r><!-- c --><a>x</a><?pi x?><b>y</b><!--c--></r></d>", [["x", "y"]]),
        Spelling("CRLF and tab formatting", "<d>\r\n\t<r>\r\n\t\t<a>x</a>\r\n\t\t<b>\r\n\t\t\ty\r\n\t\t</b>\r\n\t</r>\r\n</d>\r\n", [["x", "y"]]),
        Spelling("inner CRLF becomes LF", "<d><r><a>x\r\ny</a></r></d>", [["x\ny", nil]]),
        Spelling("inner whitespace kept", "<d><r><a> \t x  y \t </a></r></d>", [["x  y", nil]]),
        Spelling("whitespace-only is nil", "<d><r><a> \r\n\t </a></r></d>", [[nil, nil]]),
        Spelling("self-closing is nil", "<d><r><a/><b /></r></d>", [[nil, nil]]),
        Spelling("empty pair is nil", "<d><r><a></a><b></b></r></d>", [[nil, nil]]),
        Spelling("absent is nil", "<d><r></r><r/></d>", [[nil, nil], [nil, nil]]),
        Spelling("attributes are ignored", "<d k=\"1\"><r id=\"7\" k='v&amp;'><a lang=\"ko\" x='&lt;'>x</a><b c=\"\"/></r></d>", [["x", nil]]),
        Spelling("field at any depth", "<d><r><p><q><a>deep</a></q></p></r></d>", [["deep", nil]]),
        Spelling("field text includes descendants", "<d><r><a>x<b>y</b>z</a></r></d>", [["xyz", "y"]]),
        Spelling("a single field twice is nil and a problem", "<d><r><a>1</a><a>2</a><b>k</b></r><r><a>3</a></r></d>",
                 [[nil, "k"], ["3", nil]], problems: [["a occurs 2 times"], []]),
        Spelling("an empty occurrence counts", "<d><r><a/><a>2</a></r></d>", [[nil, nil]], problems: [["a occurs 2 times"]]),
        Spelling("three times", "<d><r><b>1</b><a/><b/><b>3</b></r></d>", [[nil, nil]], problems: [["b occurs 3 times"]]),
        Spelling("same field nested in itself", "<d><r><a>x<a>y</a>z</a></r></d>", [[nil, nil]], problems: [["a occurs 2 times"]]),
        Spelling("fields outside records are not record values", "<d><a>out</a><r><a>in</a></r><b>out</b></d>", [["in", nil]]),
        Spelling("records do not nest", "<d><r><a>1</a><r><b>3</b></r></r></d>", [["1", "3"]]),
        Spelling("values reset between records", "<d><r><a>1</a><b>2</b></r><r><a>3</a></r><r><b>4</b></r></d>", [["1", "2"], ["3", nil], [nil, "4"]]),
        Spelling("envelope before records", "<d><h> ok </h><r><a>1</a></r></d>", [["1", nil]], envelope: ["ok"]),
        Spelling("envelope field inside a record is not envelope", "<d><r><h>x</h><a>1</a></r></d>", [["1", nil]], envelope: [nil]),
        Spelling("envelope field twice is nil and a problem", "<d><h>1</h><r><a>x</a></r><h>2</h></d>", [["x", nil]], envelope: [nil],
                 envelopeProblems: ["h occurs more than once"]),
        Spelling("envelope excludes record text", "<d><h>a<r><a>1</a></r>b</h></d>", [["1", nil]], envelope: ["ab"]),
        Spelling("UTF-8 BOM", bytes: [0xEF, 0xBB, 0xBF] + Array("<?xml version=\"1.0\"?><d><r><a>가</a></r></d>".utf8), [["가", nil]]),
        Spelling("UTF-8 BOM without declaration", bytes: [0xEF, 0xBB, 0xBF] + Array("<d><r><a>가</a></r></d>".utf8), [["가", nil]]),
        Spelling("UTF-16LE with BOM", bytes: utf16(bigEndian: false, "<?xml version=\"1.0\" encoding=\"UTF-16\"?><d><r><a>강변북로</a></r></d>"), [["강변북로", nil]]),
        Spelling("UTF-16BE with BOM", bytes: utf16(bigEndian: true, "<?xml version=\"1.0\" encoding=\"UTF-16\"?><d><r><a>강변북로</a></r></d>"), [["강변북로", nil]]),
        Spelling("ISO-8859-1", bytes: Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><d><r><a>L".utf8) + [0xE4] + Array("ntinen</a></r></d>".utf8), [["Läntinen", nil]]),
        Spelling("prefixed namespace", "<p:d xmlns:p=\"urn:x\"><p:h>e</p:h><p:r><p:a>x</p:a></p:r></p:d>", schema: namespaced, [["x", nil]], envelope: ["e"]),
        Spelling("default namespace", "<d xmlns=\"urn:x\"><h>e</h><r><a>x</a><b>y</b></r></d>", schema: namespaced, [["x", "y"]], envelope: ["e"]),
        Spelling("mixed prefixes for one URI", "<q:d xmlns:q=\"urn:x\" xmlns:z=\"urn:x\"><z:r><q:a>x</q:a><b xmlns=\"urn:x\">y</b></z:r></q:d>", schema: namespaced, [["x", "y"]]),
        Spelling("other namespace does not match", "<d xmlns=\"urn:y\"><r><a>x</a></r><x:r xmlns:x=\"urn:x\"><a>no</a><x:a>yes</x:a></x:r></d>", schema: namespaced, [["yes", nil]]),
        Spelling("no namespace does not match a URI", "<d><r><a>x</a></r></d>", schema: namespaced, []),
        Spelling("no namespace matches only no namespace",
                 "<p:d xmlns:p=\"urn:x\"><r><p:a>x</p:a><a xmlns=\"urn:q\">y</a><b>z</b></r><p:r><a>no</a></p:r></p:d>", [[nil, "z"]]),
        Spelling("namespace undeclared midway", "<d xmlns=\"urn:x\"><r xmlns=\"\"><a>x</a></r><r><a>y</a></r></d>", schema: namespaced, [["y", nil]]),
    ]

    static func utf16(bigEndian: Bool, _ text: String) -> [UInt8] {
        var bytes: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
        for unit in text.utf16 {
            let hi = UInt8(unit >> 8), lo = UInt8(unit & 0xFF)
            bytes += bigEndian ? [hi, lo] : [lo, hi]
        }
        return bytes
    }
}

@Suite struct SpellingTests {
    @Test(arguments: Spelling.all)
    func exactValues(_ spelling: Spelling) throws {
        let result = try read(spelling.bytes, schema: spelling.schema)
        #expect(result.records.map(\.values) == spelling.records)
        #expect(result.finalEnvelope.values == spelling.envelope)
        #expect(result.records.map(\.problems) == spelling.problems)
        #expect(result.finalEnvelope.problems == spelling.envelopeProblems)
        #expect(result.repairs == 0 && result.records.allSatisfy { $0.repairs == 0 })
    }

    /// Chunk boundaries anywhere (inside names, references, CDATA markers, multi-byte
    /// characters, the BOM and the encoding declaration) change nothing.
    @Test(arguments: Spelling.all)
    func chunkIndependent(_ spelling: Spelling) throws {
        let whole = try read(spelling.bytes, schema: spelling.schema)
        for size in 1...9 {
            let chunked = try read(spelling.bytes, schema: spelling.schema, chunkSize: size)
            #expect(chunked == whole, "chunk size \(size)")
        }
        for split in stride(from: 0, through: spelling.bytes.count, by: max(1, spelling.bytes.count / 400)) {
            let result = try read(spelling.bytes, schema: spelling.schema, pieces: [0..<split, split..<spelling.bytes.count])
            #expect(result == whole, "split at \(split)")
            if result != whole { break }
        }
    }

    @Test func recordLineAndElementIndex() throws {
        let schema = XMLRecordSchema(recordElements: [XMLName("item"), XMLName("data")], fields: [XMLName("a")])
        let result = try read("<d>\n<item><a>1</a></item>\n\n<data>\n<a>2</a></data>\n</d>", schema: schema)
        #expect(result.records.map(\.line) == [2, 4])
        #expect(result.records.map(\.recordElementIndex) == [0, 1])
    }

    @Test func recordAttributes() throws {
        let schema = XMLRecordSchema(
            recordElements: [XMLName("r")], fields: [XMLName("a")],
            recordAttributes: [XMLName("id"), XMLName("type", namespaceURI: "urn:t"), XMLName("missing"), XMLName("note")])
        let xml = """
            <!DOCTYPE d [<!ENTITY co "Fin&#38;#38;Co">]>
            <d xmlns:t="urn:t"><r id=" 7 " t:type="A&amp;B&#x41;" note="&co; &lt;x&gt;"><a id="no">x</a></r><r type="untyped"/></d>
            """
        let result = try read(xml, schema: schema)
        #expect(result.records.count == 2)
        #expect(result.records[0].attributes == [" 7 ", "A&BA", nil, "Fin&Co <x>"])
        #expect(result.records[1].attributes == [nil, nil, nil, nil])
    }

    @Test func readerIsReusableAfterReset() throws {
        var records: [XMLRecord] = []
        let reader = XMLRecordReader(schema: Spelling.plain) { record, _ in records.append(record) }
        try reader.parse(Array("<d><h>1</h><r><a>x</a></r></d>".utf8))
        try reader.finish()
        #expect(reader.envelope.values == ["1"])
        reader.reset()
        #expect(reader.envelope.values == [nil])
        #expect(reader.envelope.rootElement == nil)
        try reader.parse(Data("<q:e xmlns:q=\"urn:q\"><r><b>y</b></r></q:e>".utf8))
        try reader.finish()
        #expect(records.map(\.values) == [["x", nil], [nil, "y"]])
        #expect(reader.envelope == XMLEnvelope(rootElement: XMLName("e", namespaceURI: "urn:q"), values: [nil]))
    }

    @Test func envelopeKnownWhileParsing() throws {
        var seen: [XMLEnvelope] = []
        let reader = XMLRecordReader(schema: Spelling.plain) { _, envelope in seen.append(envelope) }
        try reader.parse(Array("<root><h>head</h>".utf8))
        #expect(reader.envelope.rootElement == XMLName("root"))
        #expect(reader.envelope.values == ["head"])
        try reader.parse(Array("<r><a>1</a></r></root>".utf8))
        try reader.finish()
        #expect(seen == [XMLEnvelope(rootElement: XMLName("root"), values: ["head"])])
    }
}
