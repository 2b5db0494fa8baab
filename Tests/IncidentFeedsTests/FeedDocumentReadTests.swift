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

    /// What the format's own reader says about the document.
    private func readerError(xml file: URL) -> XMLParseError? {
        do { try XMLRecordReader(schema: ITSReaders.xmlSchema) { _, _ in }.parse(contentsOf: file) } catch { return error as? XMLParseError }
        return nil
    }

    private func readerError(json file: URL) -> JSONParseError? {
        do { try JSONRecordReader(schema: ITSReaders.jsonSchema) { _, _ in }.parse(contentsOf: file) } catch { return error as? JSONParseError }
        return nil
    }

    @Test(arguments: ["</items>", "</items></body></response><extra/>", "<item><linkId>2</linkId></item", "<item><bad attr=x/></item>"])
    func xmlParseErrorKeepsTheReadersPlace(tail: String) throws {
        let file = try temporaryFile(Self.xmlRecord + tail)
        let expected = try #require(readerError(xml: file))
        let error = feedError(ITSProvider.self, file).error
        #expect(error == FeedError(.malformedBody, provider: "its",
                                   message: "malformed XML response at line \(expected.line), column \(expected.column): \(expected.message); nothing was stored"))
        #expect(expected.line == 1 && expected.column > 0)
    }

    @Test(arguments: ["", "]}", #",{"linkId":2,}]}}"#, #"]}} {"#])
    func jsonParseErrorKeepsTheReadersPlace(tail: String) throws {
        let file = try temporaryFile(Self.jsonRecord + tail)
        let expected = try #require(readerError(json: file))
        let error = feedError(ITSProvider.self, file).error
        #expect(error == FeedError(.malformedBody, provider: "its",
                                   message: "malformed JSON response at line \(expected.line), column \(expected.column): \(expected.message); nothing was stored"))
        #expect(expected.line == 1 && expected.column > 0)
    }
}
