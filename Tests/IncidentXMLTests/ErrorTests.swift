import Foundation
import IncidentXML
import Testing
import TestSupport

/// A provider's typed error, as callers throw from `onRecord`.
enum ProviderError: Error, Equatable {
    case apiError(code: String, message: String)
}

/// An error type that is a class, to check identity is preserved.
final class StorageFailure: Error, @unchecked Sendable {}

@Suite struct ErrorTests {
    static let schema = SafetyTests.schema

    static func error(_ xml: String) -> XMLParseError? {
        caught { _ = try read(xml, schema: schema) } as? XMLParseError
    }

    @Test func mismatchedTagHasLineColumnAndLibxml2Message() throws {
        let error = try #require(Self.error("<d>\n<r>\n<a>x</b></r></d>"))
        #expect(error.kind == .malformed)
        #expect(error.line == 3)
        #expect(error.column > 0)
        #expect(error.message.contains("Opening and ending tag mismatch"))
        #expect(error.code == 76)   // XML_ERR_TAG_NAME_MISMATCH
        #expect(error.description.hasPrefix("XML malformed error at line 3, column"))
    }

    @Test(arguments: [
        "<d><r><a>x</a></r></d><extra/>",
        "<d><r a=1/></d>",
        "<d><r><a>x & y</a></r></d>",
        "<d><r><a>x &nbsp y</a></r></d>",
        "<d><p:r xmlns:q=\"urn:q\"/></d>",
        "<d><r \u{1}a=\"1\"><a>x</a></r></d>",
        "<d><r><a>&#x41</a></r></d>",
        "<d><r><a>x</a></r></d>garbage",
        "<?xml version=\"1.0\"?><?xml version=\"1.0\"?><d/>",
        "<d><r><a>x]]>y</a></r></d>",
    ])
    func malformedDocuments(_ xml: String) throws {
        let error = try #require(Self.error(xml))
        #expect(error.kind == .malformed)
        #expect(!error.message.isEmpty)
        #expect(error.line >= 1)
    }

    @Test(arguments: ["", "   \n", "<?xml version=\"1.0\"?>", "<d>", "<d><r><a>x</a>", "<d><r><a>x</a></r></d", "\u{FEFF}",
                      "<d><r><a><![CDATA[x]]</a></r></d>", "<d><r a=\"1", "<d>x &amp", "<d><r><a>x</a></r><"])
    func truncatedDocuments(_ xml: String) throws {
        let error = try #require(Self.error(xml))
        #expect(error.kind == .truncated)
    }

    /// Every cut after the root's start tag, inside text, a tag, an attribute, a reference or
    /// an end tag: truncated, saying so and naming the innermost open element, never libxml2's
    /// "Extra content at the end of the document" alone.
    @Test func everyCutAfterTheRootStartsSaysWhereItEnded() throws {
        let xml = #"<d><r id="1"><a>x &amp; y</a><b><![CDATA[z]]></b></r><r><a>w</a></r></d>"#
        for length in 3..<xml.utf8.count {
            let cut = String(decoding: xml.utf8.prefix(length), as: UTF8.self)
            let error = try #require(Self.error(cut), "\(cut)")
            #expect(error.kind == .truncated, "\(cut): \(error)")
            #expect(error.message.hasPrefix("the document ended inside <") && error.message.contains("still open"), "\(cut): \(error.message)")
        }
    }

    @Test func invalidUTF8IsAnError() throws {
        let bytes: [UInt8] = Array("<d><r><a>".utf8) + [0xC3, 0x28, 0xFF] + Array("</a></r></d>".utf8)
        let error = try #require(caught { _ = try read(bytes, schema: Self.schema) } as? XMLParseError)
        #expect(error.kind == .encoding || error.kind == .malformed)
    }

    @Test func unknownEncodingIsAnError() throws {
        let error = try #require(Self.error("<?xml version=\"1.0\" encoding=\"X-NO-SUCH-CHARSET\"?><d/>"))
        #expect(error.kind == .encoding)
    }

    @Test func readerRefusesInputAfterAnError() throws {
        let reader = XMLRecordReader(schema: Self.schema) { _, _ in }
        #expect(throws: XMLParseError.self) { try reader.parse(Array("<d></e>".utf8)) }
        let again = caught { try reader.parse(Array("<d/>".utf8)) } as? XMLParseError
        #expect(again?.kind == .inputRefused)
        let finish = caught { try reader.finish() } as? XMLParseError
        #expect(finish?.kind == .inputRefused)
        reader.reset()
        try reader.parse(Array("<d/>".utf8))
        try reader.finish()
    }

    @Test func readerRefusesInputAfterFinish() throws {
        let reader = XMLRecordReader(schema: Self.schema) { _, _ in }
        try reader.parse(Array("<d/>".utf8))
        try reader.finish()
        #expect((caught { try reader.parse(Array("<d/>".utf8)) } as? XMLParseError)?.kind == .inputRefused)
        #expect((caught { try reader.finish() } as? XMLParseError)?.kind == .inputRefused)
    }

    @Test(arguments: [1, 7, 64, 100_000])
    func onRecordErrorComesOutUnchangedAndStopsParsing(chunkSize: Int) throws {
        // gits_error_99 with records added: the provider rejects at the first record.
        var text = String(decoding: try loadBytes(TestPaths.fixture("xml/gits_error_99.xml")), as: UTF8.self)
        text = text.replacingOccurrences(of: "<msgBody/>", with: "<msgBody><itemList><regSeq>1</regSeq></itemList><itemList><regSeq>2</regSeq></itemList></msgBody>")
        let document = Array(text.utf8)
        var calls = 0
        let reader = XMLRecordReader(schema: Schemas.gits) { record, envelope in
            calls += 1
            if let code = envelope[0], code != "0" {
                throw ProviderError.apiError(code: code, message: envelope[1] ?? "")
            }
        }
        let thrown = caught {
            var offset = 0
            while offset < document.count {
                try reader.parse(Array(document[offset..<min(offset + chunkSize, document.count)]))
                offset += chunkSize
            }
            try reader.finish()
        }
        #expect(thrown as? ProviderError == .apiError(code: "99", message: "SERVICE KEY IS NOT REGISTERED ERROR."))
        #expect(calls == 1, "parsing stopped at the first record")
        #expect((caught { try reader.parse([0x20]) } as? XMLParseError)?.kind == .inputRefused)
    }

    @Test func onRecordErrorIdentityIsPreserved() throws {
        let failure = StorageFailure()
        var calls = 0
        let reader = XMLRecordReader(schema: Self.schema) { _, _ in
            calls += 1
            if calls == 2 { throw failure }
        }
        let thrown = caught {
            try reader.parse(Array("<d><r><a>1</a></r><r><a>2</a></r><r><a>3</a></r></d>".utf8))
            try reader.finish()
        }
        #expect((thrown as? StorageFailure) === failure)
        #expect(calls == 2)
    }

    @Test func onRecordErrorDuringFinishComesOutOfFinish() throws {
        var calls = 0
        let reader = XMLRecordReader(schema: Self.schema) { _, _ in
            calls += 1
            throw ProviderError.apiError(code: "x", message: "y")
        }
        // The record ends in the last piece; the error comes out of that parse or of finish.
        let thrown = caught {
            try reader.parse(Array("<d><r><a>1</a></r".utf8))
            #expect(calls == 0)
            try reader.parse(Array(">".utf8))
            try reader.finish()
        }
        #expect(thrown as? ProviderError == .apiError(code: "x", message: "y"))
        #expect(calls == 1)
    }

    @Test func reentrantParseFromOnRecordIsRefused() throws {
        var inner: XMLParseError?
        var reader: XMLRecordReader?
        reader = XMLRecordReader(schema: Self.schema) { _, _ in
            inner = caught { try reader?.parse(Array("<x/>".utf8)) } as? XMLParseError
        }
        try reader?.parse(Array("<d><r><a>1</a></r></d>".utf8))
        try reader?.finish()
        #expect(inner?.kind == .inputRefused)
        reader = nil
    }

    @Test func errorInMiddleOfFeedSurfacesAfterDeliveredRecords() throws {
        var delivered: [String?] = []
        let reader = XMLRecordReader(schema: Self.schema) { record, _ in delivered.append(record[0]) }
        let error = caught {
            try reader.parse(Array("<d><r><a>1</a></r><r><a>2</a></r><r><a>3</a></x>".utf8))
            try reader.finish()
        } as? XMLParseError
        #expect(delivered == ["1", "2"])
        #expect(error?.kind == .malformed)
    }
}
