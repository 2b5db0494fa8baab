import Foundation
import IncidentXML
import Testing

/// Hostile documents: each must end with a documented `XMLParseError`, in bounded time and
/// without buffering the attack.
@Suite struct SafetyTests {
    static let schema = XMLRecordSchema(
        recordElements: [XMLName("r")], fields: [XMLName("a"), XMLName("b")], envelopeFields: [XMLName("h")],
        recordAttributes: [XMLName("id")])

    /// Reads a whole document, collecting every value delivered before the error.
    static func attempt(_ xml: String, limits: XMLLimits = .default) -> (error: XMLParseError?, values: [String], other: (any Error)?) {
        var values: [String] = []
        let reader = XMLRecordReader(schema: schema, limits: limits) { record, envelope in
            values += record.values.compactMap { $0 } + record.attributes.compactMap { $0 } + envelope.values.compactMap { $0 }
        }
        let error = caught {
            try reader.parse(Array(xml.utf8))
            try reader.finish()
        }
        values += reader.envelope.values.compactMap { $0 }
        return (error as? XMLParseError, values, error.flatMap { $0 is XMLParseError ? nil : $0 })
    }

    /// Streams `prefix`, then `piece` up to `times` times, then `suffix`; returns the error and
    /// how many bytes had been handed over when it came.
    static func stream(prefix: String, piece: String, times: Int, suffix: String,
                       limits: XMLLimits = .default) -> (error: XMLParseError?, bytesFed: Int) {
        let reader = XMLRecordReader(schema: schema, limits: limits) { _, _ in }
        var fed = 0
        let pieceBytes = Array(piece.utf8)
        let error = caught {
            let head = Array(prefix.utf8)
            try reader.parse(head)
            fed += head.count
            for _ in 0..<times {
                try reader.parse(pieceBytes)
                fed += pieceBytes.count
            }
            try reader.parse(Array(suffix.utf8))
            try reader.finish()
        }
        return (error as? XMLParseError, fed)
    }

    static let passwdMarkers = ["root:", "/bin/", "nologin"]

    @Test(arguments: [
        "file:///etc/passwd",
        "/etc/passwd",
        "http://127.0.0.1:1/x",
        "https://127.0.0.1:1/x",
        "ftp://127.0.0.1:1/x",
    ])
    func externalEntityInTextIsRefused(_ systemID: String) {
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY x SYSTEM \"\(systemID)\">]><d><h>&x;</h><r><a>&x;</a></r></d>"
        let (error, values, other) = Self.attempt(xml)
        #expect(other == nil)
        #expect(error?.kind == .externalEntity)
        #expect(error?.message.contains("'x'") == true)
        #expect(error?.line == 1)
        for marker in Self.passwdMarkers { #expect(!values.joined().contains(marker)) }
    }

    @Test func externalEntityInRecordFieldAfterRecords() {
        let xml = """
            <!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
            <d><r><a>ok</a></r><r><a>&x;</a></r></d>
            """
        let (error, values, _) = Self.attempt(xml)
        #expect(error?.kind == .externalEntity)
        #expect(error?.line == 2)
        #expect(values == ["ok"])
    }

    @Test func externalEntityInAttributeIsRefused() {
        let xml = "<!DOCTYPE d [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><d><r id=\"&x;\"><a>v</a></r></d>"
        let (error, values, _) = Self.attempt(xml)
        #expect(error != nil)
        #expect(error?.kind == .externalEntity || error?.kind == .malformed)
        for marker in Self.passwdMarkers { #expect(!values.joined().contains(marker)) }
    }

    @Test func externalParameterEntityIsNeverLoaded() {
        let xml = """
            <!DOCTYPE d [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>
            <d><r><a>v</a></r></d>
            """
        let (_, values, other) = Self.attempt(xml)
        #expect(other == nil)
        for marker in Self.passwdMarkers { #expect(!values.joined().contains(marker)) }
    }

    @Test func externalDTDIsNeverLoaded() throws {
        let xml = "<!DOCTYPE d SYSTEM \"file:///etc/passwd\"><d><r><a>v</a></r></d>"
        let (error, values, _) = Self.attempt(xml)
        #expect(error == nil)
        #expect(values == ["v"])
    }

    @Test func undeclaredEntityWithExternalSubsetIsReplacedNotDroppedText() throws {
        // With an external subset libxml2 alone would only warn and skip the text; the entity
        // might be declared in that subset, which is never read: it reads as U+FFFD, counted.
        let xml = "<!DOCTYPE d SYSTEM \"local.dtd\"><d><r><a>a&undefined;b</a></r></d>"
        let result = try read(xml, schema: Self.schema)
        #expect(result.records.map(\.values) == [["a\u{FFFD}b", nil]])
        #expect(result.records.map(\.repairs) == [1])
        #expect(result.repairs == 1)
    }

    @Test func billionLaughs() {
        var dtd = "<!ENTITY lol \"lol\">"
        var previous = "lol"
        for level in 1...9 {
            let name = "lol\(level)"
            dtd += "<!ENTITY \(name) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
            previous = name
        }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE d [\(dtd)]><d><r><a>&lol9;</a></r></d>"
        let clock = ContinuousClock()
        let start = clock.now
        let (error, values, _) = Self.attempt(xml)
        #expect(error?.kind == .entityExpansion)
        #expect(values.isEmpty)
        #expect(clock.now - start < .seconds(10), "fails fast")
    }

    @Test(arguments: [true, false])
    func quadraticBlowup(insideField: Bool) {
        // One 50 KB entity referenced 20,000 times: 1 GB of text if expanded.
        let big = String(repeating: "x", count: 50_000)
        let refs = String(repeating: "&big;", count: 20_000)
        let body = insideField ? "<r><a>\(refs)</a></r>" : "<p>\(refs)</p>"
        let xml = "<!DOCTYPE d [<!ENTITY big \"\(big)\">]><d>\(body)</d>"
        let clock = ContinuousClock()
        let start = clock.now
        let (error, _, _) = Self.attempt(xml)
        #expect(error?.kind == .entityExpansion)
        #expect(clock.now - start < .seconds(10), "fails fast")
    }

    @Test func entityBudgetIsConfigurable() {
        let xml = "<!DOCTYPE d [<!ENTITY e \"0123456789\">]><d><r><a>&e;&e;&e;</a></r></d>"
        #expect(Self.attempt(xml, limits: XMLLimits(maxEntityExpansionBytes: 1000)).error == nil)
        #expect(Self.attempt(xml, limits: XMLLimits(maxEntityExpansionBytes: 32)).error?.kind == .entityExpansion)
    }

    /// 50 MB of text, streamed in 64 KiB pieces, never buffered: outside records the error
    /// comes once the text passes `maxTextBytes`, long before 50 MB were handed over; inside a
    /// record, the record is read on (nothing more kept) and delivered with a problem.
    @Test(arguments: ["<d><r><a>", "<d><r>", "<d>"])
    func fiftyMegabyteTextNode(prefix: String) {
        let limits = XMLLimits(maxTextBytes: 1 << 20)
        let piece = String(repeating: "가나다라", count: 64 * 1024 / 12)
        let inRecord = prefix.hasSuffix("<r>") || prefix.hasSuffix("<a>")
        let times = (inRecord ? 3 : 50) * 1024 * 1024 / piece.utf8.count
        let suffix = prefix == "<d><r><a>" ? "</a></r></d>" : prefix == "<d><r>" ? "</r></d>" : "</d>"
        var problems: [[String]] = []
        let reader = XMLRecordReader(schema: Self.schema, limits: limits) { record, _ in problems.append(record.problems) }
        var fed = 0
        let error = caught {
            try reader.parse(Array(prefix.utf8))
            let bytes = Array(piece.utf8)
            for _ in 0..<times {
                try reader.parse(bytes)
                fed += bytes.count
            }
            try reader.parse(Array(suffix.utf8))
            try reader.finish()
        } as? XMLParseError
        if inRecord {
            #expect(error == nil)
            #expect(problems == [["a text of the record is larger than the limit of 1048576 bytes (XMLLimits.maxTextBytes): only its short values were read, to name it"]])
        } else {
            #expect(error?.kind == .textTooLarge)
            #expect(fed <= limits.maxTextBytes + 2 * piece.utf8.count)
            #expect(error?.message.contains("1048576") == true)
        }
    }

    @Test func fiftyMegabyteCDATASection() {
        let piece = String(repeating: "x", count: 64 * 1024)
        let (error, fed) = Self.stream(prefix: "<d><r><a><![CDATA[", piece: piece, times: 800, suffix: "]]></a></r></d>")
        #expect(error?.kind == .markupTooLarge || error?.kind == .textTooLarge)
        #expect(fed <= XMLLimits.default.maxMarkupBytes + 2 * piece.utf8.count)
    }

    @Test(arguments: [
        ("<d><!--", "-->"),
        ("<d><?pi ", "?>"),
        ("<d><r id=\"", "\"/>"),
        ("<d><r a", "=\"1\"/>"),
    ])
    func fiftyMegabyteMarkup(prefix: String, suffix: String) {
        let piece = String(repeating: "y", count: 64 * 1024)
        let (error, fed) = Self.stream(prefix: prefix, piece: piece, times: 800, suffix: suffix + "</d>")
        #expect(error?.kind == .markupTooLarge || error?.kind == .malformed)
        #expect(fed <= XMLLimits.default.maxMarkupBytes + 2 * piece.utf8.count)
    }

    @Test func deepNesting() {
        let (error, fed) = Self.stream(prefix: "<d>", piece: String(repeating: "<e>", count: 1000), times: 100, suffix: "")
        #expect(error?.kind == .tooDeep)
        #expect(error?.message.contains("256") == true)
        #expect(fed <= 3 + 3000)
    }

    @Test func deepNestingLimitIsExact() throws {
        let limits = XMLLimits(maxDepth: 4)
        #expect(Self.attempt("<d><r><p><a>x</a></p></r></d>", limits: limits).error == nil)
        #expect(Self.attempt("<d><r><p><q><a>x</a></q></p></r></d>", limits: limits).error?.kind == .tooDeep)
    }

    @Test func recordSizeLimit() throws {
        // Many 100 KB text nodes, each under the text limit, add up past the record limit: the
        // record is valid input that is too large, read on for its short values and delivered
        // with a problem; the next record is read as usual.
        let piece = "<b>" + String(repeating: "z", count: 100_000) + "</b>"
        var records: [XMLRecord] = []
        let reader = XMLRecordReader(schema: Self.schema) { record, _ in records.append(record) }
        try reader.parse(Array(#"<d><r id="big">"#.utf8))
        let pieceBytes = Array(piece.utf8)
        for _ in 0..<400 { try reader.parse(pieceBytes) }
        try reader.parse(Array("<a>short</a></r><r id=\"next\"><a>x</a></r></d>".utf8))
        try reader.finish()
        try #require(records.count == 2)
        #expect(records[0].attributes == ["big"])
        #expect(records[0].values == ["short", nil], "the long value is not kept; b occurs 400 times, so it reads as nil")
        #expect(records[0].problems.first == "the record is larger than the limit of 33554432 bytes per record (XMLLimits.maxRecordBytes counts 40000005): only its short values were read, to name it")
        #expect(records[1].values == ["x", nil])
        #expect(records[1].problems.isEmpty)
    }

    @Test func textOverItsLimitInsideARecordSetsTheRecordAside() throws {
        let limits = XMLLimits(maxTextBytes: 10)
        let result = try read(#"<d><r id="1"><b>12345678901</b><a>id-1</a></r><r id="2"><a>ok</a></r></d>"#, schema: Self.schema, limits: limits)
        #expect(result.records.map(\.values) == [["id-1", nil], ["ok", nil]])
        #expect(result.records.map(\.problems) == [
            ["a text of the record is larger than the limit of 10 bytes (XMLLimits.maxTextBytes): only its short values were read, to name it"], []])
    }

    @Test func textLimitAppliesToCapturedValueWithChildren() {
        let limits = XMLLimits(maxTextBytes: 10)
        #expect(Self.attempt("<d><r><a>12345<p/>12345</a></r></d>", limits: limits).error == nil)
        #expect(Self.attempt("<d><r><a>12345<p/>123456</a></r></d>", limits: limits).error == nil, "inside a record: set aside, not an error")
        #expect(Self.attempt("<d><h>12345<p/>123456</h></d>", limits: limits).error?.kind == .textTooLarge)
    }

    @Test func manyDistinctElementNamesKeepMatching() throws {
        // More distinct names than the name cache holds: it is cleared and refilled.
        var xml = "<d><r>"
        for i in 0..<10_000 { xml += "<n\(i)/>" }
        xml += "<a>found</a></r><r><a>again</a><b>b</b></r></d>"
        let result = try read(xml, schema: Self.schema)
        #expect(result.records.map(\.values) == [["found", nil], ["again", "b"]])
    }
}
