import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentJSON
import IncidentXML
import TestSupport
import Testing

/// `ParsePipeline.readDocument`, the reading path XML and JSON feeds share: a parse error of
/// either format becomes the same `malformedBody` message, with the reader's own line, column
/// and message, for a fault after a good record.
@Suite struct FeedDocumentReadTests {
    /// ITS's `eventInfo` in both syntaxes: one good record, then a fault.
    static let xmlRecord = "<response><header><resultCode>0</resultCode></header><body><items><item><linkId>1</linkId><startDate>20240101000000</startDate></item>"
    static let jsonRecord = #"{"header":{"resultCode":"0"},"body":{"items":[{"linkId":"1","startDate":"20240101000000"}"#

    /// Each fault, and whether the document is cut off (it ends before its root closes) rather
    /// than malformed.
    static let faults = [("</items>", true), ("</items></body></response><extra/>", false),
                         ("<item><linkId>2</linkId></item", true), ("<item><bad attr=x/></item>", false)]
        .map { ("XML", xmlRecord + $0, $1) }
        + [("", true), ("]}", true), (#",{"linkId":2,}]}}"#, false), (#"]}} {"#, false)].map { ("JSON", jsonRecord + $0, $1) }

    /// What the format's own reader says about the document.
    private func readerError(_ format: String, _ file: URL) -> (any DocumentParseError)? {
        do {
            if format == "XML" {
                try XMLRecordReader(schema: ITSReaders.xmlSchema) { _, _ in }.parse(contentsOf: file)
            } else {
                try JSONRecordReader(schema: ITSReaders.jsonSchema) { _, _ in }.parse(contentsOf: file)
            }
        } catch {
            return error as? any DocumentParseError
        }
        return nil
    }

    @Test(arguments: faults)
    func parseErrorKeepsTheReadersPlace(format: String, body: String, truncated: Bool) throws {
        let file = try temporaryFile(body)
        let expected = try #require(readerError(format, file))
        let what = truncated ? "truncated \(format) response (cut off before its end)" : "malformed \(format) response"
        #expect(feedError(ITSProvider.self, file).error == FeedError(.malformedBody, provider: "its",
            message: "\(what) at line \(expected.line), column \(expected.column): \(expected.message); nothing was stored"))
        #expect(expected.line == 1 && expected.column > 0)
        if truncated && format == "XML" {
            #expect(expected.message.hasPrefix("the document ended inside <"), "\(expected.message)")
        }
    }

    /// Valid input over a reader limit is never called malformed: an ITS record nested 300 deep
    /// (JSON) or a text of 17 MiB outside records (XML).
    @Test func limitIsNotMalformed() throws {
        let deep = Self.jsonRecord.dropLast() + #","x":"# + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}]}}"
        let json = try #require(feedError(ITSProvider.self, try temporaryFile(String(deep))).error)
        #expect(json.kind == .malformedBody)
        #expect(json.message.hasPrefix("JSON response over a limit of the reader at line 1, column "), "\(json.message)")
        #expect(json.message.hasSuffix(": objects and arrays nested deeper than 256 (JSONLimits.maxDepth); nothing was stored"))
        let text = "<response><header><resultCode>0</resultCode>" + String(repeating: "x", count: 17 << 20) + "</header></response>"
        let xml = try #require(feedError(ITSProvider.self, try temporaryFile(text)).error)
        #expect(xml.message.hasPrefix("XML response over a limit of the reader at line 1, column "), "\(xml.message)")
        #expect(xml.message.hasSuffix(": a text node is larger than 16777216 bytes; nothing was stored"))
    }
}
