import Foundation
import IncidentXML
import Testing
import TestSupport

/// The zero-copy `onUnsafeRecord` path gives the same values as `onRecord`.
@Suite struct UnsafeRecordTests {
    static func readUnsafe(_ bytes: [UInt8], schema: XMLRecordSchema, chunkSize: Int) throws -> [XMLRecord] {
        var records: [XMLRecord] = []
        let reader = XMLRecordReader.unsafeReader(schema: schema) { record, _ in
            var fromBytes: [String?] = []
            for i in 0..<record.count {
                fromBytes.append(record.bytes(i).map { String(decoding: $0, as: UTF8.self) })
            }
            #expect(fromBytes == record.values())
            #expect(record.bytes(-1) == nil && record.bytes(record.count) == nil && record.string(record.count) == nil)
            records.append(XMLRecord(values: record.values(), attributes: record.attributes,
                                     recordElementIndex: record.recordElementIndex, line: record.line))
        }
        var offset = 0
        while offset < bytes.count {
            try reader.parse(Array(bytes[offset..<min(offset + chunkSize, bytes.count)]))
            offset += chunkSize
        }
        try reader.finish()
        return records
    }

    @Test(arguments: FeedDocument.all)
    func sameRecordsAsOnRecord(_ document: FeedDocument) throws {
        let bytes = try loadBytes(document.url)
        let expected = try read(bytes, schema: document.schema).records
        for size in [1, 13, bytes.count] {
            #expect(try Self.readUnsafe(bytes, schema: document.schema, chunkSize: size) == expected)
        }
    }

    @Test func emptyAndWhitespaceValuesAreNil() throws {
        let schema = XMLRecordSchema(recordElements: [XMLName("r")], fields: [XMLName("a"), XMLName("b"), XMLName("c")])
        var seen: [[Int?]] = []
        let reader = XMLRecordReader.unsafeReader(schema: schema) { record, _ in
            seen.append((0..<record.count).map { record.bytes($0)?.count })
        }
        try reader.parse(Array("<d><r><a/><b> \r\n </b><c> 가 </c></r></d>".utf8))
        try reader.finish()
        #expect(seen == [[nil, nil, 3]])
    }

    @Test func errorsComeOutUnchanged() throws {
        let reader = XMLRecordReader.unsafeReader(schema: SafetyTests.schema) { _, envelope in
            throw ProviderError.apiError(code: envelope[0] ?? "", message: "stop")
        }
        let thrown = caught {
            try reader.parse(Array("<d><h>7</h><r><a>1</a></r><r><a>2</a></r></d>".utf8))
            try reader.finish()
        }
        #expect(thrown as? ProviderError == .apiError(code: "7", message: "stop"))
    }
}
