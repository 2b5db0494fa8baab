import IncidentJSON
import Testing
import TestSupport

/// Schemas as the provider readers will configure them.
enum Schemas {
    /// ITS eventInfo/trafficInfo: the full envelope, or (as in the captured eventInfo sample) the
    /// `body.items` array alone.
    static let its = JSONRecordSchema(
        recordPaths: [["body", "items", "*"], ["*"]],
        envelopePaths: [["header", "resultCode"], ["header", "resultMsg"], ["body", "totalCount"]])
    static let itsCCTV = JSONRecordSchema(
        recordPaths: [["response", "data", "*"]],
        envelopePaths: [["response", "coordtype"], ["response", "datacount"]])
    /// A data.go.kr API, with the gateway's error envelope.
    static let dataGoKr = JSONRecordSchema(
        recordPaths: [["response", "body", "items", "*"]],
        envelopePaths: [["OpenAPI_ServiceResponse", "cmmMsgHeader", "errMsg"],
                        ["OpenAPI_ServiceResponse", "cmmMsgHeader", "returnAuthMsg"],
                        ["OpenAPI_ServiceResponse", "cmmMsgHeader", "returnReasonCode"],
                        ["response", "header", "resultCode"]])
    static let open511 = JSONRecordSchema(
        recordPaths: [["events", "*"]],
        envelopePaths: [["pagination", "offset"], ["pagination", "next_url"], ["meta", "version"]])
    static let wzdx = JSONRecordSchema(
        recordPaths: [["features", "*"]],
        envelopePaths: [["feed_info"], ["road_event_feed_info"], ["type"]])
}

/// Every JSON sample in shared/feeds, read whole and checked against values read by eye (and
/// with Python's json module) from the files.
@Suite struct RealFeedTests {
    @Test func itsEventInfoItemsOnlyArray() throws {
        let result = try read(loadFeed("its_national/eventInfo_json_items_only_20221220.json"), schema: Schemas.its)
        #expect(result.records.count == 11)
        #expect(result.records.allSatisfy { $0.pathIndex == 1 && $0.problems.isEmpty })
        #expect(result.records.map(\.position) == Array(1...11))
        #expect(result.summary.recordPathsFound == [0, 1])
        #expect(result.summary.envelope.values == [nil, nil, nil])
        let first = result.records[0].value
        #expect(first["type"] == .string("고속도로"))
        #expect(first["startDate"] == .string("20221220093317"))
        #expect(first["coordX"] == .string("127.4226"))
        #expect(first["message"] == .string("(갓길)방초매트설치작업중"))
        #expect(first["endDate"] == .string(""))
        #expect(first.object?.count == 14)
        #expect(result.records.map { $0.value["eventType"]?.string ?? "-" }
                == ["작업", "기타돌발", "작업", "작업", "공사", "공사", "공사", "기타돌발", "교통사고", "교통사고", "공사"])
        let last = result.records[10].value
        #expect(last["roadName"] == .string("국도1호선"))
        #expect(last["lanesBlocked"] == .string("1 차로"))
        #expect(last["roadDrcType"] == .string("종점방향"))
        #expect(result.summary.repairs == JSONRepairs())
    }

    @Test func itsTrafficInfoFullEnvelope() throws {
        let result = try read(loadFeed("its_national/trafficInfo_json_full_envelope_44items_20260918.json"), schema: Schemas.its)
        #expect(result.records.count == 44)
        #expect(result.records.allSatisfy { $0.pathIndex == 0 })
        #expect(result.summary.recordCounts == [44, 0])
        #expect(result.summary.recordPathsFound == [1, 0])
        // resultCode is the number 0 here, kept as number text; totalCount the number 44.
        #expect(result.summary.envelope.values == [.number("0"), .string("SUCCESS"), .number("44")])
        // The header comes first, so every record already sees it.
        #expect(result.envelopes.allSatisfy { $0.values == [.number("0"), .string("SUCCESS"), .number("44")] })
        #expect(result.records[0].value.description
                == #"{"roadName":"경포로","roadDrcType":"","linkNo":"","linkId":"2520089600","startNodeId":"2520094100","endNodeId":"2520094500","speed":"40","travelTime":"10.4","createdDate":"20260918210500"}"#)
        #expect(result.records[43].value["roadName"] == .string("창해로"))
        #expect(result.records[43].value["travelTime"] == .string("75.59"))
        #expect(result.summary.byteCount == 8670)
    }

    @Test func itsCCTVArrayOfTwo() throws {
        let result = try read(loadFeed("its_national/cctvInfo_json_array_2items.json"), schema: Schemas.itsCCTV)
        #expect(result.records.count == 2)
        #expect(result.summary.envelope.values == [.number("1"), .number("2")])
        // datacount follows data: the records saw coordtype only.
        #expect(result.envelopes.allSatisfy { $0.values == [.number("1"), nil] })
        #expect(result.records[0].value["coordx"] == .number("127.008514404296"))
        #expect(result.records[1].value["coordx"] == .number("127.0034566"))
        #expect(result.records[1].value["cctvtype"] == .number("3"))
        #expect(result.records[1].value["cctvname"] == .string("[영동선] 파장육교"))
    }

    @Test func itsCCTVSingleObjectIsOneRecord() throws {
        let result = try read(loadFeed("its_national/cctvInfo_json_single_object.json"), schema: Schemas.itsCCTV)
        #expect(result.records.count == 1)
        #expect(result.summary.recordPathsFound == [1])
        #expect(result.summary.envelope.values == [.number("1"), .number("1")])
        let record = result.records[0].value
        #expect(record["coordx"] == .number("126.990116493293"))
        #expect(record["coordy"] == .number("37.4051186075688"))
        #expect(record["cctvname"] == .string("[안양성남선] 북의왕IC(안양)"))
        #expect(record["roadsectionid"] == .string(""))
    }

    @Test func dataGoKrGatewayErrorInJSON() throws {
        let result = try read(loadFeed("datagokr/gateway_error_30_json_http403_2026-08.json"), schema: Schemas.dataGoKr)
        #expect(result.records.isEmpty)
        #expect(result.summary.recordPathsFound == [0], "no body.items at all: an error, not an empty page")
        #expect(result.summary.envelope.values == [.string("SERVICE_KEY_IS_NOT_REGISTERED_ERROR"),
                                                   .string("등록되지 않은 서비스키"), .string("30"), nil])
    }

    @Test func open511SFPagePaginationAfterEvents() throws {
        let result = try read(loadFeed("open511/sf511_traffic_events_page.json"), schema: Schemas.open511)
        #expect(result.records.count == 1)
        let event = result.records[0].value
        #expect(event["id"] == .string("511.org/1045578"))
        #expect(event["severity"] == .string("Moderate"))
        #expect(event["+source_type"] == .string("CHP"))
        #expect(event["geography"]?["coordinates"] == .array([.number("-121.950177"), .number("38.375466")]))
        #expect(event["areas"]?[0]?["id"] == .number("5396987"))
        // pagination follows events: unknown while the event was delivered, known at the end.
        #expect(result.envelopes[0].values == [nil, nil, nil])
        #expect(result.summary.envelope.values == [
            .number("0"), .string("/traffic/events?api_key=REDACTED_KEY&request_limit=10&limit=20&offset=20"), .string("v1")])
    }

    @Test func open511DriveBCPageOfFive() throws {
        let result = try read(loadFeed("open511/drivebc_events_page_5events_2023-06.json"), schema: Schemas.open511)
        #expect(result.records.map { $0.value["id"]?.string ?? "-" }
                == ["drivebc.ca/DBC-28386", "drivebc.ca/DBC-46014", "drivebc.ca/DBC-53145", "drivebc.ca/DBC-52791", "drivebc.ca/DBC-52446"])
        #expect(result.records.map { $0.value["severity"]?.string ?? "-" } == ["MAJOR", "MINOR", "MINOR", "MINOR", "MAJOR"])
        #expect(result.records.map { $0.value["geography"]?["type"]?.string ?? "-" }
                == ["Point", "LineString", "LineString", "LineString", "LineString"])
        // DriveBC sends the offset as the string "0", and no next_url on its last page.
        #expect(result.summary.envelope.values == [.string("0"), nil, .string("v1")])
        #expect(result.summary.envelope[0]?.scalarText == "0")
    }

    @Test func open511DriveBCWrappedEventAtAPathWithoutStar() throws {
        let schema = JSONRecordSchema(recordPaths: [["event"]])
        let result = try read(loadFeed("open511/drivebc_event_DBC-28953_wrapped.json"), schema: schema)
        #expect(result.records.count == 1)
        #expect(result.summary.recordPathsFound == [1])
        #expect(result.records[0].value["id"] == .string("drivebc.ca/DBC-28953"))
        #expect(result.records[0].value["event_type"] == .string("CONSTRUCTION"))
    }

    @Test func wzdxCDOT2023() throws {
        let result = try read(loadFeed("wzdx/wzdx_v4_2_cdot_production_20230522_linestring.json"), schema: Schemas.wzdx)
        #expect(result.records.count == 87)
        let feedInfo = try #require(result.summary.envelope[0])
        #expect(feedInfo["publisher"] == .string("CDOT"))
        #expect(feedInfo["version"] == .string("4.2"))
        #expect(feedInfo["update_date"] == .string("2023-05-22T23:40:06Z"))
        #expect(feedInfo["data_sources"]?[0]?["update_frequency"] == .number("300"))
        #expect(result.summary.envelope[1] == nil)
        #expect(result.summary.envelope[2] == .string("FeatureCollection"))
        // feed_info precedes the features: every record sees it.
        #expect(result.envelopes.allSatisfy { $0[0] == feedInfo })
        let first = result.records[0].value
        #expect(first["id"] == .string("098bd70a-4e9e-5a78-8bb5-c62cbabd485a"))
        #expect(first["properties"]?["core_details"]?["road_names"] == .array([.string("I-70")]))
        #expect(first["properties"]?["beginning_milepost"] == .number("87.0"), "number text kept exactly")
        #expect(first["properties"]?["lanes"]?[1]?["status"] == .string("closed"))
        #expect(first["geometry"]?["coordinates"]?[0] == .array([.number("-107.83899603099997"), .number("39.52052304500006")]))
        #expect(result.records[86].value["id"] == .string("3bed9028-9fcc-5da0-bead-80f85dad311e"))
        #expect(result.records.allSatisfy { $0.value["geometry"]?["type"] == .string("LineString") && $0.problems.isEmpty })
    }

    @Test func wzdxCDOT2025LineStringsAndMultiPoints() throws {
        let result = try read(loadFeed("wzdx/wzdx_v4_2_cdot_production_20250813_linestring_multipoint.json"), schema: Schemas.wzdx)
        #expect(result.records.count == 279)
        #expect(result.summary.envelope[0]?["publisher"] == .string("CDOT"))
        let types = result.records.map { $0.value["geometry"]?["type"]?.string ?? "-" }
        #expect(types.filter { $0 == "LineString" }.count == 196)
        #expect(types.filter { $0 == "MultiPoint" }.count == 83)
        let impacts = result.records.map { $0.value["properties"]?["vehicle_impact"]?.string ?? "-" }
        #expect(impacts.filter { $0 == "alternating-one-way" }.count == 152)
        #expect(impacts.filter { $0 == "all-lanes-closed" }.count == 3)
        let first = result.records[0].value
        #expect(first["id"] == .string("d1743e64-f414-5630-b013-ba4c9782a8e4"))
        // The feed escapes the bullet as \u2022.
        #expect(first["properties"]?["core_details"]?["description"] == .string(
            "Between Red Lion Road and US 6 (7 to 24 miles east of Sterling) from Mile Point 149 to Mile Point 132. Road construction. Alternating traffic. Starting Monday at 7:00AM MDT until August 15, 2025 at about 5:00PM MDT. Full schedule below: • August 11, 7:00AM - August 15, 5:00PM"))
        #expect(first["geometry"] == .object([
            ("type", .string("MultiPoint")),
            ("coordinates", .array([.array([.number("-102.802362"), .number("40.824391")]),
                                    .array([.number("-103.078137"), .number("40.695555")])])),
        ]))
    }

    @Test(arguments: [
        ("wzdx/wzdx_v4_scenario2_laneshift_linestring.json", "85912735-7a36-45f5-b644-41b0203ae400", 16),
        ("wzdx/wzdx_v4_scenario6_multi_lane_closure.json", "8fed746d-8f4f-4e0c-8d9b-fa4db7c3c2d8", 5),
    ])
    func wzdxSpecExamples(file: String, id: String, points: Int) throws {
        let result = try read(loadFeed(file), schema: Schemas.wzdx)
        #expect(result.records.count == 1)
        #expect(result.summary.envelope[0]?["publisher"] == .string("TestDOT"))
        #expect(result.records[0].value["id"] == .string(id))
        #expect(result.records[0].value["geometry"]?["coordinates"]?.array?.count == points)
    }

    @Test func wzdxV2Caltrans() throws {
        let result = try read(loadFeed("wzdx/wzdx_v2_caltrans_example.json"), schema: Schemas.wzdx)
        #expect(result.records.count == 1)
        #expect(result.summary.envelope[0] == nil)
        #expect(result.summary.envelope[1] == .object([("feed_info_id", .string("1")),
                                                       ("feed_update_date", .string("2016-04-19T14:41:04Z")),
                                                       ("version", .string("2.0"))]))
        let properties = try #require(result.records[0].value["properties"])
        #expect(properties["road_event_id"] == .string("C299CA-0004-2016-04-12-00:01:00"))
        #expect(properties["road_name"] == .string("CA-299"))
        #expect(properties["types_of_work"]?[1]?["type_name"] == .string("overhead-work"))
        #expect(result.records[0].value["geometry"]?["coordinates"]?.array?.count == 485)
        #expect(result.records[0].value["geometry"]?["coordinates"]?[0]
                == .array([.number("-122.73389875888823"), .number("40.63513265927444")]))
    }

    @Test func fintrafficSimpleGeoJSON() throws {
        let result = try read(loadFeed("datex2_fi_digitraffic/trafficmessage_simple_geojson_featurecollection.json"),
                              schema: Schemas.wzdx)
        #expect(result.records.count == 2)
        #expect(result.summary.envelope.values == [nil, nil, .string("FeatureCollection")])
        #expect(result.records.map { $0.value["properties"]?["situationId"]?.string ?? "-" } == ["GUID50001238", "GUID12345678"])
        #expect(result.records[0].value["geometry"] == .object([("type", .string("Point")),
                                                               ("coordinates", .array([.number("23.77474"), .number("61.50221")]))]))
        #expect(result.records[0].value["properties"]?["releaseTime"] == .string("2019-12-13T14:43:18.388+02:00"))
        #expect(result.records[1].value["properties"]?["announcements"]?[0]?["title"]
                == .string("Tie 130, Lempäälä. Liikennetiedote. "))
    }

    /// Every sample gives the same result read whole, from a file, and in odd chunk sizes.
    @Test(arguments: [
        "its_national/eventInfo_json_items_only_20221220.json",
        "its_national/trafficInfo_json_full_envelope_44items_20260918.json",
        "its_national/cctvInfo_json_array_2items.json",
        "its_national/cctvInfo_json_single_object.json",
        "datagokr/gateway_error_30_json_http403_2026-08.json",
        "open511/sf511_traffic_events_page.json",
        "open511/drivebc_events_page_5events_2023-06.json",
        "open511/drivebc_event_DBC-28953_wrapped.json",
        "wzdx/wzdx_v2_caltrans_example.json",
        "wzdx/wzdx_v4_2_cdot_production_20230522_linestring.json",
        "wzdx/wzdx_v4_2_cdot_production_20250813_linestring_multipoint.json",
        "wzdx/wzdx_v4_scenario2_laneshift_linestring.json",
        "wzdx/wzdx_v4_scenario6_multi_lane_closure.json",
        "datex2_fi_digitraffic/trafficmessage_simple_geojson_featurecollection.json",
    ])
    func sameResultInChunksAndFromFile(file: String) throws {
        let schema = JSONRecordSchema(recordPaths: [["body", "items", "*"], ["features", "*"], ["events", "*"], ["response", "data", "*"], ["event"], ["*"]],
                                      envelopePaths: [["header"], ["feed_info"], ["pagination"], ["OpenAPI_ServiceResponse"]])
        let bytes = try loadFeed(file)
        let whole = try read(bytes, schema: schema)
        #expect(whole.records.count > 0 || whole.summary.envelope[3] != nil)
        for size in [1, 7, 64, 4093] {
            #expect(try read(bytes, schema: schema, chunkSize: size) == whole, "chunk size \(size)")
        }
        var fromFile: [JSONRecord] = []
        let reader = JSONRecordReader(schema: schema) { record, _ in fromFile.append(record) }
        let summary = try reader.parse(contentsOf: TestPaths.sharedFeed(file), chunkSize: 1000)
        #expect(fromFile == whole.records)
        #expect(summary == whole.summary)
        #expect(summary.byteCount == bytes.count)
    }
}
