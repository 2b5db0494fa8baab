import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentJSON
import TestSupport
import Testing

/// One huge record: valid input is never called malformed. A record within the per-record
/// limit is stored however long its geometry (a work zone's LineString of 100,000 positions);
/// one over it is set aside with its id and the reason, and the rest of the response is stored
/// and may still clear (the id is known).
@Suite("Large records")
struct LargeRecordTests {
    /// `[[-104.000001,39.500001],…]`: `count` positions of 22 bytes, about 143 bytes each as
    /// `JSONLimits.maxRecordBytes` counts.
    static func line(_ count: Int) -> String {
        var text = "["
        text.reserveCapacity(count * 26)
        for i in 0..<count {
            if i > 0 { text += "," }
            text += "[-104.\(String(100_000 + i % 900_000).suffix(6)),39.\(String(100_000 + i % 900_000).suffix(6))]"
        }
        return text + "]"
    }

    @Test("WZDx: a LineString of 100,000 positions is stored; a feature over the limit (id after its geometry) is set aside with its id; the answer stays complete")
    func wzdxHugeFeature() throws {
        func feature(_ id: String, positions: Int) -> String {
            #"{"type":"Feature","geometry":{"type":"LineString","coordinates":"# + Self.line(positions)
                + #"},"properties":{"core_details":{"event_type":"work-zone","data_source_id":"1","road_names":["I-70"],"direction":"eastbound","description":"Long corridor"},"start_date":"2024-05-01T00:00:00Z","end_date":"2024-09-01T00:00:00Z","vehicle_impact":"some-lanes-closed"},"id":""# + id + #""}"#
        }
        let body = #"{"feed_info":{"update_date":"2024-05-02T00:00:00Z","version":"4.2"},"type":"FeatureCollection","features":["#
            + [feature("short", positions: 2), feature("corridor-100k", positions: 100_000), feature("corridor-300k", positions: 300_000),
               feature("after", positions: 3)].joined(separator: ",") + "]}"
        let result = try read(WZDxProvider.self, try temporaryFile(body))
        #expect(result.verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2024-05-02T00:00:00Z")))
        #expect(result.incidents.map(\.externalID) == ["short", "corridor-100k", "after"])
        let corridor = try #require(result.incidents.first { $0.externalID == "corridor-100k" })
        #expect(corridor.geometry?.positions.count == 100_000)
        #expect(corridor.geometry?.positions.last == position(-104.199999, 39.199999))
        #expect(corridor.road == "I-70")
        #expect(result.rejected.count == 1)
        let rejected = try #require(result.rejected.first)
        #expect(rejected.externalID == "corridor-300k")
        #expect(rejected.position == "features[2]")
        #expect(rejected.reason.hasPrefix("the record is larger than the limit of 33554432 bytes per record (JSONLimits.maxRecordBytes counts "), "\(rejected.reason)")
        #expect(!rejected.reason.contains("malformed"))
    }

    @Test("Open511 JSON: an event over the limit is set aside with its id; the event after it is stored")
    func open511HugeEvent() throws {
        let geography = #"{"type":"LineString","coordinates":"# + Self.line(300_000) + "}"
        let body = #"{"events":[{"id":"drivebc.ca/DBC-1","status":"ACTIVE","event_type":"CONSTRUCTION","headline":"CONSTRUCTION","severity":"MINOR","geography":"# + geography
            + #","created":"2023-06-01T10:00:00-07:00"},{"id":"drivebc.ca/DBC-2","status":"ACTIVE","event_type":"INCIDENT","headline":"INCIDENT","severity":"MAJOR","geography":{"type":"Point","coordinates":[-123.1,49.2]},"created":"2023-06-01T10:00:00-07:00"}],"pagination":{"offset":0},"meta":{"version":"v1"}}"#
        let result = try read(Open511Provider.self, try temporaryFile(body))
        #expect(result.incidents.map(\.externalID) == ["drivebc.ca/DBC-2"])
        #expect(result.rejected.map(\.externalID) == ["drivebc.ca/DBC-1"])
        #expect(result.rejected.first?.reason.hasPrefix("the record is larger than the limit of 33554432 bytes per record") == true)
    }

    @Test("DATEX II: a gmlLineString posList of 100,000 positions is stored")
    func datex2LongPosList() throws {
        let text = try String(contentsOf: TestPaths.fixture("datex2/v3_linear_multilingual.xml"), encoding: .utf8)
        let start = try #require(text.range(of: "<loc:posList>"))
        let end = try #require(text.range(of: "</loc:posList>"))
        var positions = ""
        positions.reserveCapacity(100_000 * 24)
        for i in 0..<100_000 { positions += "61.\(String(100_000 + i).suffix(5)) 23.\(String(100_000 + i).suffix(5)) 120.5 " }
        let long = text.replacingCharacters(in: start.upperBound..<end.lowerBound, with: positions)
        let result = try read(DATEX2Provider.self, try temporaryFile(long))
        let works = try #require(result.incidents.first { $0.externalID == "W1/W1_01" })
        #expect(works.geometry?.positions.count == 100_000)
        #expect(works.geometry?.positions.last == Coordinate(latitude: 61.99999, longitude: 23.99999))
        #expect(result.rejected.isEmpty)
    }

    @Test("GITS: a record with a text over the limit (17 MiB) is set aside with its regSeq; the others are stored and the answer stays complete")
    func gitsHugeRecord() throws {
        let text = try String(contentsOf: TestPaths.fixture("gits/incidents_3.xml"), encoding: .utf8)
        let first = try #require(text.range(of: "<inciDesc>"))
        let huge = text.replacingCharacters(in: first.upperBound..<first.upperBound, with: String(repeating: "정체 ", count: (17 << 20) / 7))
        let result = try read(GITSProvider.self, try temporaryFile(huge))
        #expect(result.verdict == .complete)
        #expect(result.incidents.map(\.externalID) == ["202312310777", "202401010002"])
        #expect(result.rejected.map(\.externalID) == ["202401010001"])
        #expect(result.rejected.first?.reason.contains("a text of the record is larger than the limit of 16777216 bytes (XMLLimits.maxTextBytes)") == true,
                "\(result.rejected.first?.reason ?? "")")
    }

    @Test("ITS XML: a record with a 17 MiB text before its id's parts is set aside under the id they make; the answer stays complete")
    func itsHugeRecord() throws {
        let text = try String(contentsOf: TestPaths.fixture("its/eventInfo_envelope_2items.xml"), encoding: .utf8)
        let expected = try read(ITSProvider.self, TestPaths.fixture("its/eventInfo_envelope_2items.xml"))
        let huge = text.replacingOccurrences(of: "<type>고속도로</type>", with: "<type>" + String(repeating: "도로 ", count: (17 << 20) / 7) + "</type>")
        let result = try read(ITSProvider.self, try temporaryFile(huge))
        #expect(result.verdict == .complete)
        #expect(result.incidents == Array(expected.incidents.dropFirst()))
        #expect(result.rejected.map(\.externalID) == [expected.incidents.first?.externalID])
        #expect(result.rejected.first?.externalID == "1100123400:20240101001500:추돌사고")
        #expect(result.rejected.first?.reason.hasPrefix("the record a text of the record is larger than the limit of 16777216 bytes") == true,
                "\(result.rejected.first?.reason ?? "")")
    }

    /// Records cross between the reading and the storing thread in batches closed by weight too,
    /// so that large records cannot queue by the hundred: with the consumer stalled, the producer
    /// is held after a few batches of `maxBatchWeight`, not after 256 records.
    @Test("the parse pipeline queues records by weight: a stalled consumer holds the producer after a few heavy records")
    func pipelineBoundedByWeight() throws {
        final class Counter: @unchecked Sendable {  // written by the producer, read after a wait
            private let lock = NSLock()
            private var value = 0
            func increment() { lock.lock(); value += 1; lock.unlock() }
            var current: Int { lock.lock(); defer { lock.unlock() }; return value }
        }
        let produced = Counter()
        var seenWhenStalled = -1
        var consumed = 0
        try ParsePipeline.run(
            batchSize: 256, maxBatches: 2, maxBatchWeight: 10, weight: { _ in 5 },
            produce: { emit in
                for i in 0..<100 {
                    produced.increment()
                    try emit(i)
                }
            },
            consume: { _ in
                if consumed == 0 {
                    Thread.sleep(forTimeInterval: 0.3)
                    seenWhenStalled = produced.current
                }
                consumed += 1
            })
        #expect(consumed == 100)
        // One batch of 2 taken by the consumer, 2 batches of 2 queued, and a full one whose push
        // waits: at most 8, whatever the machine's speed (by count alone, the first batch of
        // 256 would hand over nothing before all 100 were read).
        #expect((2...8).contains(seenWhenStalled), "\(seenWhenStalled)")
    }
}
