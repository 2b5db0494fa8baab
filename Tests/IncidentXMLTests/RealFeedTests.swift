import Foundation
import IncidentXML
import Testing
import TestSupport

/// Values read from the recorded real responses in shared/feeds.
@Suite struct RealFeedTests {
    @Test func gitsRecordsAndEnvelope() throws {
        let result = try read(loadBytes(TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")), schema: Schemas.gits)
        #expect(result.records.count == 4)
        #expect(result.finalEnvelope.rootElement == XMLName("ServiceResult"))
        #expect(result.finalEnvelope.values == ["0", "정상적으로 처리되었습니다.", "4"])
        #expect(result.envelopes.allSatisfy { $0[0] == "0" }, "headerCd is known before the first record")
        let seqs = result.records.map { $0[Schemas.gitsIndex("regSeq")] }
        #expect(seqs == ["202301059559", "202303216347", "202303216348", "202303217889"])

        let r = try #require(result.records.first { $0[Schemas.gitsIndex("regSeq")] == "202303216347" })
        #expect(r[Schemas.gitsIndex("inciPlace1")] == "강변북로")
        #expect(r[Schemas.gitsIndex("restrictType")] == "4차로")
        #expect(r[Schemas.gitsIndex("coord_x")] == "127.08203126")
        #expect(r[Schemas.gitsIndex("coord_y")] == "37.52739696162846")
        #expect(r[Schemas.gitsIndex("linkId")] == "1040000103")
        #expect(r[Schemas.gitsIndex("confirmDate")] == "2023-03-21 14:13:00")
        #expect(r[Schemas.gitsIndex("inciDesc")] == "[차량고장] 강변북로 (구리방향) 잠실대교 → 잠실철교  4차로 통제,  차량고장")
        #expect(r[Schemas.gitsIndex("inciPlace2")] == "(구리방향) 잠실대교 → 잠실철교")
        // Empty pairs (<routeId></routeId>, <endDate></endDate>) are nil.
        #expect(r[Schemas.gitsIndex("routeId")] == nil)
        #expect(r[Schemas.gitsIndex("spotId")] == nil)
        #expect(r[Schemas.gitsIndex("endDate")] == nil)
        #expect(result.records.allSatisfy { $0.line == 1 && $0.values.count == 14 })
    }

    @Test func itsCCTVWithCRLFTabsAndSelfClosing() throws {
        let result = try read(loadBytes(TestPaths.sharedFeed("its_national/cctvInfo_xml_2items.xml")), schema: Schemas.itsCCTV)
        #expect(result.records.count == 2)
        #expect(result.finalEnvelope.values == ["1", "2"])
        let first = result.records[0]
        #expect(first.values == [nil, nil, "3",
                                 "http://cctvsec.ktict.co.kr:8090/739/wABhErdDzFQMwQPgLhEma8qfm0BSdSHjIQg/o/oXcZ1BsszVIpk/NCY98oN7NR1PpYKHKnSunADdY5XpYVb1GQ==",
                                 nil, "37.0459403991699", "JPEG", "[중부선] 화봉육교1", "127.477104187011"])
        #expect(first.line == 5)
        #expect(result.records[1][7] == "[중부선] 화봉육교")
        #expect(result.records[1].line == 16)
        // No value carries formatting whitespace.
        for value in result.records.flatMap(\.values).compactMap({ $0 }) {
            #expect(value.trimmingCharacters(in: .whitespacesAndNewlines) == value)
        }
    }

    @Test func dataGoKrGatewayErrorEnvelope() throws {
        let url = TestPaths.sharedFeed("datagokr/gateway_error_30_SERVICE_KEY_IS_NOT_REGISTERED_doc_quoted.xml")
        let result = try read(loadBytes(url), schema: Schemas.gateway)
        #expect(result.records.isEmpty)
        #expect(result.finalEnvelope.rootElement == XMLName("OpenAPI_ServiceResponse"))
        #expect(result.finalEnvelope.values == ["SERVICE ERROR", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR", "30"])
    }

    @Test func datex2v22DefaultNamespace() throws {
        let url = TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml")
        let result = try read(loadBytes(url), schema: Schemas.datex2)
        #expect(result.records.count == 3)
        #expect(result.finalEnvelope.rootElement == XMLName("d2LogicalModel", namespaceURI: Schemas.datex2NS))
        // `country` without a namespace is not DATEX II's country.
        #expect(result.finalEnvelope.values == ["2017-08-10T15:56:56.951+03:00", nil])
        let accident = result.records[0]
        #expect(accident.attributes == ["GUID5001357701", "1", "Accident"])
        #expect(accident[0] == "2017-08-10T15:56:56.951+03:00")
        #expect(accident[1] == "2017-08-10T15:49:10.000+03:00")
        let comment = try #require(accident[2])
        #expect(comment.hasPrefix("Tie 3, eli Tampereen Läntinen Kehätie, Pirkkala. Liikennetiedote onnettomuudesta."))
        #expect(comment.hasSuffix("Sähköposti: tampere.liikennekeskus@liikennevirasto.fi"))
        #expect(accident[3] == "accident")
        // The primary (992) and secondary (993) locations: ambiguous for a single field.
        #expect(accident[4] == nil)
        #expect(accident.problems == ["specificLocation occurs 2 times"])
        #expect(accident[5] == nil, "no namespace does not match DATEX II's namespace")
        #expect(result.records[1].attributes == ["GUID5001357702", "1", "AbnormalTraffic"])
        #expect(result.records[1][2] == nil)
        #expect(result.records[1].problems.isEmpty)
        #expect(result.records[2].attributes[2] == "RoadOrCarriagewayOrLaneManagement")
    }

    @Test func datex2v35Prefixes() throws {
        let url = TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml")
        let result = try read(loadBytes(url), schema: Schemas.datex3)
        #expect(result.records.count == 1)
        #expect(result.finalEnvelope.rootElement == XMLName("payload", namespaceURI: "http://datex2.eu/schema/3/d2Payload"))
        #expect(result.finalEnvelope.values == ["2025-11-27T06:24:59.805Z", "FI"])
        let r = result.records[0]
        #expect(r.attributes == ["GUID5046133001", "sit:TransitInformation"])
        #expect(r[0] == "2025-11-27T06:24:59.094Z")
        #expect(r[1] == "2025-11-27T06:24:59.094Z", "line break before the end tag is trimmed")
        #expect(r[2] == "2025-11-27T07:20:00.000Z")
        #expect(r[3] == "2025-11-27T07:50:00.000Z")
        #expect(r[4]?.hasPrefix("Tie 15358, eli Pihlajaniementie, Savonlinna.") == true)
        #expect(r[5] == "36973")
        #expect(r[6] == "high")
        #expect(r[7] == nil, "same local name in another namespace does not match")
        #expect(r.line == 16)
    }
}
