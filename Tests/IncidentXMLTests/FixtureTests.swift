import Foundation
import IncidentXML
import Testing
import TestSupport

/// Our own fixtures in Tests/Fixtures/xml (written by make_fixtures.py in the formats of the
/// real responses).
@Suite struct FixtureTests {
    @Test func gitsMultiValues() throws {
        let result = try read(loadBytes(TestPaths.fixture("xml/gits_multi.xml")), schema: Schemas.gits)
        #expect(result.records.count == 3)
        #expect(result.finalEnvelope.values == ["0", "정상적으로 처리되었습니다.", "3"])
        let i = Schemas.gitsIndex
        let r0 = result.records[0]
        #expect(r0[i("inciDesc")] == "[사고] 경부고속도로 (부산방향) 신갈JC → 수원IC  1차로 통제, 사고처리 & 후속 정체")
        #expect(r0[i("endDate")] == nil)
        #expect(r0[i("coord_y")] == "37.28590312345678")
        let r1 = result.records[1]
        #expect(r1[i("endDate")] == "2023-03-22 17:30:00")
        #expect(r1[i("restrictType")] == "갓길")
        let r2 = result.records[2]
        #expect(r2[i("routeId")] == nil)
        #expect(r2[i("estEndDate")] == nil)
        #expect(r2[i("endDate")] == nil)
        #expect(r2[i("spotId")] == nil)
        #expect(r2[i("inciDesc")] == "[도로폐쇄] 중부고속도로 (대전방향) 일죽IC → 대소JC  전차로 통제, A&B 구간")
    }

    @Test func prettyPrintedTwinGivesSameRecords() throws {
        let compact = try read(loadBytes(TestPaths.fixture("xml/gits_multi.xml")), schema: Schemas.gits)
        let pretty = try read(loadBytes(TestPaths.fixture("xml/gits_multi_crlf.xml")), schema: Schemas.gits)
        #expect(pretty.records.map(\.values) == compact.records.map(\.values))
        #expect(pretty.finalEnvelope == compact.finalEnvelope)
    }

    @Test func gitsErrorEnvelope() throws {
        let result = try read(loadBytes(TestPaths.fixture("xml/gits_error_99.xml")), schema: Schemas.gits)
        #expect(result.records.isEmpty)
        #expect(result.finalEnvelope.values == ["99", "SERVICE KEY IS NOT REGISTERED ERROR.", "0"])
    }

    @Test func gitsTruncatedDeliversFirstRecordThenFails() throws {
        var delivered: [XMLRecord] = []
        let reader = XMLRecordReader(schema: Schemas.gits) { record, _ in delivered.append(record) }
        try reader.parse(loadBytes(TestPaths.fixture("xml/gits_truncated.xml")))
        let error = try #require(caught { try reader.finish() } as? XMLParseError)
        #expect(error.kind == .truncated)
        #expect(error.line == 1)
        #expect(!error.message.isEmpty)
        #expect(delivered.count == 1)
        #expect(delivered.first?[Schemas.gitsIndex("regSeq")] == "202303220001")
    }

    @Test(arguments: ["xml/its_eventinfo_items.xml", "xml/its_eventinfo_data.xml"])
    func itsEventInfoBothEnvelopes(_ path: String) throws {
        let result = try read(loadBytes(TestPaths.fixture(path)), schema: Schemas.itsEvent)
        let i = Schemas.eventIndex
        #expect(result.records.count == 3)
        let r0 = result.records[0]
        #expect(r0.values == ["고속도로", "교통사고", "추돌사고", "20221220093317", nil, "127.4226", "36.4137", "1870199600",
                              "경부선", "1", "기점", nil, "1차로 차단", "(1차로)추돌사고처리중 <주의> & 서행"])
        #expect(result.records[1][i("endDate")] == "20221220170000")
        #expect(result.records[1][i("message")] == "(2차로)노면보수작업중")
        #expect(result.records[2][i("roadDrcType")] == "시점방향")
        #expect(result.records[2][i("lanesBlocked")] == nil)
        if path.hasSuffix("items.xml") {
            #expect(result.records.allSatisfy { $0.recordElementIndex == 0 })
            #expect(result.finalEnvelope.values == ["0", "success", "3", nil])
            #expect(result.envelopes[0].values == ["0", "success", "3", nil])
        } else {
            #expect(result.records.allSatisfy { $0.recordElementIndex == 1 })
            #expect(result.finalEnvelope.values == [nil, nil, nil, "3"])
        }
    }

    @Test func itsEventInfoErrorEnvelope() throws {
        let result = try read(loadBytes(TestPaths.fixture("xml/its_eventinfo_error.xml")), schema: Schemas.itsEvent)
        #expect(result.records.isEmpty)
        #expect(result.finalEnvelope.values == ["4005", "Unregistered key", nil, nil])
    }

    @Test func parseContentsOfFileMatchesInMemory() throws {
        let url = TestPaths.fixture("xml/gits_multi_crlf.xml")
        let expected = try read(loadBytes(url), schema: Schemas.gits)
        for chunkSize in [1, 7, 4096, 256 * 1024] {
            var records: [XMLRecord] = []
            let reader = XMLRecordReader(schema: Schemas.gits) { record, _ in records.append(record) }
            try reader.parse(contentsOf: url, chunkSize: chunkSize)
            #expect(records == expected.records)
            #expect(reader.envelope == expected.finalEnvelope)
        }
    }

    @Test func missingFileIsIOError() {
        let reader = XMLRecordReader(schema: Schemas.gits) { _, _ in }
        let error = caught { try reader.parse(contentsOf: URL(fileURLWithPath: "/nonexistent/feed.xml")) } as? XMLParseError
        #expect(error?.kind == .io)
        #expect(error?.message.contains("/nonexistent/feed.xml") == true)
    }
}

/// Every document, fed in every chunk size from 1 to 64 bytes and split at every single point
/// (past 8,000 bytes at 500 evenly spaced points: the 55 KB NDW snapshot would otherwise take
/// 55,000 readings), gives exactly the records and envelope of feeding it whole.
@Suite struct ChunkingTests {
    @Test(arguments: FeedDocument.all)
    func everyChunkSize(_ document: FeedDocument) throws {
        let bytes = try loadBytes(document.url)
        let whole = try read(bytes, schema: document.schema)
        #expect(whole.records.count == document.expectedRecords)
        for size in 1...64 {
            let chunked = try read(bytes, schema: document.schema, chunkSize: size)
            #expect(chunked == whole, "chunk size \(size)")
            if chunked != whole { break }
        }
    }

    @Test(arguments: FeedDocument.all)
    func everySplitPoint(_ document: FeedDocument) throws {
        let bytes = try loadBytes(document.url)
        let whole = try read(bytes, schema: document.schema)
        let step = bytes.count <= 8000 ? 1 : bytes.count / 500
        for split in stride(from: 0, through: bytes.count, by: step) {
            let result = try read(bytes, schema: document.schema, pieces: [0..<split, split..<bytes.count])
            #expect(result == whole, "split at \(split)")
            if result != whole { break }
        }
    }

    @Test func truncatedFixtureFailsAtEveryChunkSize() throws {
        let bytes = try loadBytes(TestPaths.fixture("xml/gits_truncated.xml"))
        for size in 1...64 {
            let error = caught { _ = try read(bytes, schema: Schemas.gits, chunkSize: size) } as? XMLParseError
            #expect(error?.kind == .truncated, "chunk size \(size)")
        }
    }
}
