import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentNetworking
import IncidentXML
import TestSupport
import Testing

/// The incident an ITS record maps to; fails the test when it was set aside.
func mapped(_ dto: EventInfoDTO) throws -> Incident {
    guard case .incident(let incident) = ITSMapper.record(from: dto, source: "its") else {
        throw UnexpectedRejections(rejected: [])
    }
    return incident
}

@Suite("National ITS eventInfo")
struct ITSTests {
    static let real = TestPaths.sharedFeed("its_national/eventInfo_json_items_only_20221220.json")

    @Test("the recorded real items: 11 incidents; the first is roadwork on 경부선")
    func realItems() throws {
        let all = try incidents(ITSProvider.self, Self.real, source: "its")
        #expect(all.count == 11)
        let first = try #require(all.first)
        #expect(first.category == .roadwork)
        #expect(first.road == "경부선")
        #expect(first.coordinate?.longitude == 127.4226)
        #expect(first.coordinate?.latitude == 36.4137)
        #expect(first.startedAt?.rfc3339 == "2022-12-20T00:33:17Z")
        #expect(first.externalID == "1870199600:20221220093317:작업")
        #expect(first.direction == "기점")
        #expect(first.description == "(갓길)방초매트설치작업중")
        #expect(first.providerCategory == "작업")
        #expect(all[1].category == .breakdown)
        #expect(all[1].providerCategory == "기타돌발/고장")
        #expect(all[8].category == .accident)
        #expect(all[2].restriction == "2차로 차단")
    }

    @Test("no two different events in the real sample share an external id")
    func idsAreDistinct() throws {
        let ids = try incidents(ITSProvider.self, Self.real).map(\.externalID)
        #expect(Set(ids).count == ids.count)
    }

    @Test("the same event seen in two polls, with a new message, lanes and end, keeps its id")
    func idIsStable() throws {
        let first = EventInfoDTO(type: "고속도로", eventType: "작업", eventDetailType: "작업", startDate: "20221220093317",
                                 coordX: "127.4226", coordY: "36.4137", linkId: "1870199600", roadName: "경부선",
                                 lanesBlocked: "", message: "(갓길)방초매트설치작업중")
        var later = first
        later.message = "(갓길)방초매트설치작업 완료"
        later.lanesBlocked = "갓길 차단"
        later.endDate = "20221220120000"
        later.coordX = "127.42261"
        #expect(try mapped(first).externalID == mapped(later).externalID)
        var other = first
        other.startDate = "20221220093318"
        #expect(try mapped(first).externalID != mapped(other).externalID)
        // The same start in a variant layout (a Java timestamp's `.0`, dashes) keeps the id.
        var variant = first
        variant.startDate = "2022-12-20 09:33:17.0"
        #expect(try mapped(variant).externalID == mapped(first).externalID)
    }

    @Test("items as an array, one object, an item wrapper, an empty string, or absent", arguments: [
        ("eventInfo_envelope_2items.json", 2), ("eventInfo_single_object.json", 1), ("eventInfo_item_wrapper.json", 1),
        ("eventInfo_empty_string.json", 0), ("eventInfo_no_items.json", 0),
    ])
    func shapes(file: String, count: Int) throws {
        #expect(try incidents(ITSProvider.self, TestPaths.fixture("its/\(file)")).count == count)
    }

    @Test("numbers and strings read alike; empty strings are absent; Korea time to UTC")
    func values() throws {
        let all = try incidents(ITSProvider.self, TestPaths.fixture("its/eventInfo_envelope_2items.json"))
        #expect(all[0] == Incident(
            source: "test", externalID: "1100123400:20240101001500:추돌사고", category: .accident,
            providerCategory: "교통사고/추돌사고", description: "(1차로)승용차 3중 추돌사고 처리중", road: "경부선",
            roadRef: "고속국도1호선", direction: "종점", restriction: "1차로 차단", coordinate: Coordinate(latitude: 37.2105, longitude: 127.0651),
            linkID: "1100123400", startedAt: instant("2023-12-31T15:15:00Z")))
        #expect(all[1] == Incident(
            source: "test", externalID: "128.152,37.662:20231231233000:결빙", category: .weather,
            providerCategory: "기상/결빙", description: "노면 결빙 주의", road: "6", roadRef: "국도6호선", direction: "시점방향",
            restriction: "전면", coordinate: Coordinate(latitude: 37.662, longitude: 128.152),
            startedAt: instant("2023-12-31T14:30:00Z"), endedAt: instant("2023-12-31T18:00:00Z")))
    }

    @Test("resultCode 0, \"0\" and \"00\" are success", arguments: ["0", "\"0\"", "\"00\"", "00"])
    func successCodes(code: String) throws {
        let body = "{\"header\":{\"resultCode\":\(code),\"resultMsg\":\"ok\"},\"body\":{\"items\":[{\"startDate\":\"20240101000000\",\"linkId\":\"1\"}]}}"
        if code == "00" {
            // A bare 00 is not valid JSON: a malformed body, never success.
            #expect(feedError(ITSProvider.self, try temporaryFile(body)).error?.kind == .malformedBody)
        } else {
            #expect(try incidents(ITSProvider.self, try temporaryFile(body)).count == 1)
        }
    }

    @Test("other result codes are typed errors with the code; 4005 is an invalid key", arguments: [
        ("eventInfo_error_99.json", FeedError.Kind.apiError, "99"), ("eventInfo_error_401_4005.json", .invalidKey, "4005"),
    ])
    func errorCodes(file: String, kind: FeedError.Kind, code: String) {
        let (error, delivered) = feedError(ITSProvider.self, TestPaths.fixture("its/\(file)"))
        #expect(error?.kind == kind)
        #expect(error?.code == code)
        #expect(delivered == 0)
    }

    @Test("HTTP 401 from the API is a typed invalid-key error")
    func http401() {
        let error = NetworkError(code: .unacceptableStatus(401), label: "its", method: .get,
                                 url: "https://openapi.its.go.kr:9443/eventInfo?apiKey=REDACTED", statusCode: 401,
                                 attempts: 1, bodyExcerpt: "{\"header\":{\"resultCode\":4005}}")
        let classified = ITSProvider.classify(error) as? FeedError
        #expect(classified?.kind == .invalidKey)
        #expect(classified?.code == "4005")
    }

    @Test("XML in both ITS envelopes, with CDATA, maps like the JSON", arguments: [
        "eventInfo_envelope_2items.xml", "eventInfo_legacy_2items.xml",
    ])
    func xml(file: String) throws {
        let fromXML = try incidents(ITSProvider.self, TestPaths.fixture("its/\(file)"))
        let fromJSON = try incidents(ITSProvider.self, TestPaths.fixture("its/eventInfo_envelope_2items.json"))
        #expect(fromXML == fromJSON)
    }

    @Test("XML fed in chunks of every size from 1 to 64 bytes gives identical records", arguments: [
        "eventInfo_envelope_2items.xml", "eventInfo_legacy_2items.xml",
    ])
    func xmlChunked(file: String) throws {
        let bytes = [UInt8](try Data(contentsOf: TestPaths.fixture("its/\(file)")))
        func read(_ size: Int) throws -> [EventInfoDTO] {
            var out: [EventInfoDTO] = []
            let reader = XMLRecordReader(schema: ITSReaders.xmlSchema) { record, _ in out.append(ITSReaders.xml.dto(record)) }
            for start in stride(from: 0, to: bytes.count, by: size) {
                try reader.parse(Array(bytes[start..<min(start + size, bytes.count)]))
            }
            try reader.finish()
            return out
        }
        let whole = try read(bytes.count)
        #expect(whole.count == 2)
        for size in 1...64 { #expect(try read(size) == whole, "chunk size \(size)") }
    }

    @Test("the gateway envelope answered to a JSON request is read as XML and classified")
    func gatewayForJSON() {
        let (error, _) = feedError(ITSProvider.self, TestPaths.fixture("datagokr/gateway_error_22_quota.xml"))
        #expect(error?.kind == .quotaExceeded)
    }

    @Test("golden URLs: bounding box and both key forms", arguments: ["K+ey/1=", "K%2Bey%2F1%3D"])
    func router(key: String) throws {
        var source = SourceDefinition(name: "its-seoul", provider: "its", key: APIKey(key))
        source.options[ITSProvider.bbox] = [126.76, 37.41, 127.18, 37.70]
        source.options[ITSProvider.format] = "xml"
        let url = try ITSProvider.router(for: source).asURLRequest().url?.absoluteString
        #expect(url == "https://openapi.its.go.kr:9443/eventInfo?apiKey=K%2Bey%2F1%3D&type=all&eventType=all&minX=126.76&maxX=127.18&minY=37.41&maxY=37.7&getType=xml")
    }

    @Test("without options, the declared defaults: all of Korea, every road class and kind, JSON")
    func defaults() throws {
        let source = SourceDefinition(name: "its", provider: "its", key: APIKey("k"))
        let url = try ITSProvider.router(for: source).asURLRequest().url?.absoluteString
        #expect(url == "https://openapi.its.go.kr:9443/eventInfo?apiKey=k&type=all&eventType=all&minX=124&maxX=132&minY=33&maxY=39&getType=json")
        #expect(ProviderRegistry.describeOptions(of: source).isEmpty)
    }

    @Test("each option checks its values and names what it accepts", arguments: [
        ("bbox", ConfigValue.list([.number(127.18), .number(37.41), .number(126.76), .number(37.70)]), "must be [minX, minY, maxX, maxY] in WGS84 degrees (longitude, latitude) with min < max, e.g. [126.76, 37.41, 127.18, 37.70]"),
        ("bbox", .list([.number(1), .number(2), .number(3)]), "must be [minX, minY, maxX, maxY] in WGS84 degrees (longitude, latitude) with min < max, e.g. [126.76, 37.41, 127.18, 37.70]"),
        ("bbox", .text("126,37,127,38"), "must be 4 numbers"),
        ("bbox", .list([.number(126), .text("37"), .number(127), .number(38)]), "must be 4 numbers"),
        ("eventType", .text("crash"), "must be one of all, cor, acc, wea, ete, dis, etc"),
        ("format", .text("csv"), "must be one of json, xml"),
        ("type", .text("highway"), "must be one of all, ex, its, loc, sgg, etc"),
        ("type", .number(1), "must be one of all, ex, its, loc, sgg, etc"),
    ])
    func badOptions(name: String, value: ConfigValue, problem: String) throws {
        let option = try #require(ITSProvider.options.first { $0.name == name })
        var values = ProviderOptionValues()
        #expect(throws: ProviderOptionProblem(problem)) { try values.set(option, from: value) }
        #expect(values.configured(name) == nil)
    }

    @Test("a good value is kept as written and shown by check-config in declaration order")
    func goodOptions() throws {
        var source = SourceDefinition(name: "its", provider: "its", key: APIKey("k"))
        for (name, value) in [("format", ConfigValue.text("xml")), ("bbox", .list([.number(126.76), .number(37.41), .number(127.18), .number(37.7)]))] {
            try source.options.set(try #require(ITSProvider.options.first { $0.name == name }), from: value)
        }
        #expect(source.options[ITSProvider.bbox] == [126.76, 37.41, 127.18, 37.7])
        #expect(source.options[ITSProvider.format] == "xml")
        #expect(source.options[ITSProvider.eventType] == "all")
        #expect(ProviderRegistry.describeOptions(of: source) == ["bbox=126.76,37.41,127.18,37.7", "format=xml"])
    }

    @Test("each provider's key parameter names are registered at startup, so their values are hidden before any request")
    func keyParameterNames() {
        #expect(GITSProvider.keyParameterNames == ["serviceKey"])
        #expect(ITSProvider.keyParameterNames == ["apiKey"])
        ProviderRegistry.registerKeyParameterNames()
        #expect(Redaction.redact("http://h/x?serviceKey=abc%2B1&apiKey=def-2&type=all") == "http://h/x?serviceKey=REDACTED&apiKey=REDACTED&type=all")
    }

    @Test("the real items-only sample has no envelope: its records are read, but it cannot clear")
    func itemsOnlyCannotClear() throws {
        let result = try read(ITSProvider.self, Self.real)
        #expect(result.incidents.count == 11)
        #expect(result.verdict.incompleteBecause == ["the response does not say it succeeded (no resultCode), so it may not list every active incident"])
    }

    @Test("a response that does not positively say success is an error, never 'no incidents' (an error named without its code is that error)", arguments: [
        "<response><header><resultCode></resultCode><resultMsg>SERVICE ACCESS DENIED ERROR.</resultMsg></header></response>",
        "<response><header><resultMsg>SERVICE ACCESS DENIED ERROR.</resultMsg></header></response>",
        "<response/>",
        "<response><header/><body><items/></body></response>",
        #"{"header":{"resultCode":"","resultMsg":"SERVICE ACCESS DENIED ERROR."}}"#,
        #"{"header":{"resultMsg":"SERVICE ACCESS DENIED ERROR."},"body":{"items":[]}}"#,
        #"{"response":{"header":{"resultCode":null}}}"#,
    ])
    func noSuccessCode(body: String) throws {
        let (error, delivered) = feedError(ITSProvider.self, try temporaryFile(body))
        if body.contains("DENIED") {
            // The error's name, without its code, still names the error (data.go.kr 20).
            #expect(error?.kind == .invalidKey, "\(String(describing: error))")
            #expect(error?.code == "20")
            #expect(error?.message.contains("no resultCode but the error name SERVICE_ACCESS_DENIED_ERROR, that is resultCode 20 (SERVICE ACCESS DENIED ERROR.)") == true,
                    "\(String(describing: error))")
        } else {
            #expect(error?.kind == .unexpectedResponse, "\(String(describing: error))")
            #expect(error?.message.contains("no resultCode and no records") == true)
        }
        #expect(delivered == 0)
    }

    /// A success code alone, with no record and no declared count, does not say there are no
    /// incidents: the answer is incomplete (nothing cleared). A count of 0 or the NODATA code
    /// (03) does say it.
    @Test("a success code with no record and no totalCount cannot clear; totalCount 0 or resultCode 03 can", arguments: [
        (#"{"resultCode":0}"#, false), (#"{"header":{"resultCode":0}}"#, false), (#"{"header":{"resultCode":0},"body":null}"#, false),
        (#"{"header":{"resultCode":0},"body":{"items":{}}}"#, false), (#"{"header":{"resultCode":"00"},"body":{"items":[]}}"#, false),
        ("<response><header><resultCode>0</resultCode></header></response>", false),
        ("<response><header><resultCode>0</resultCode></header><body><items/></body></response>", false),
        (#"{"header":{"resultCode":0},"body":{"totalCount":0,"items":[]}}"#, true),
        (#"{"header":{"resultCode":"03","resultMsg":"NODATA_ERROR"},"body":{"items":""}}"#, true),
        ("<response><header><resultCode>0</resultCode></header><body><totalCount>0</totalCount><items/></body></response>", true),
    ])
    func emptyAnswers(body: String, complete: Bool) throws {
        let result = try read(ITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.isEmpty)
        #expect(result.verdict.incompleteBecause
                    == (complete ? [] : ["the response holds no record and declares no totalCount, so it cannot say there are no incidents"]), "\(body)")
    }

    @Test("fewer items than totalCount (or datacount) declares: read, but the response cannot clear", arguments: [
        #"{"header":{"resultCode":0},"body":{"totalCount":3,"items":[{"startDate":"20240101000000","linkId":"1"}]}}"#,
        "<response><header><resultCode>0</resultCode></header><body><totalCount>3</totalCount><items><item><startDate>20240101000000</startDate><linkId>1</linkId></item></items></body></response>",
        "<response><datacount>3</datacount><data><startDate>20240101000000</startDate><linkId>1</linkId></data></response>",
    ])
    func countMismatch(body: String) throws {
        let result = try read(ITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.count == 1)
        let field = body.contains("datacount") ? "datacount" : "totalCount"
        #expect(result.verdict.incompleteBecause == ["the response declares \(field) 3 but holds 1 record(s)"])
    }

    @Test("quota and key codes are typed whichever envelope and syntax they come in", arguments: [
        (#"{"header":{"resultCode":4001,"resultMsg":"LIMIT"}}"#, FeedError.Kind.quotaExceeded, "4001"),
        (#"{"header":{"resultCode":"22","resultMsg":"LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR"}}"#, .quotaExceeded, "22"),
        ("<response><header><resultCode>22</resultCode><resultMsg>LIMITED</resultMsg></header></response>", .quotaExceeded, "22"),
        ("<response><header><resultCode>4005</resultCode><resultMsg>key</resultMsg></header></response>", .invalidKey, "4005"),
        (#"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"SERVICE ERROR","returnAuthMsg":"LIMITED","returnReasonCode":"22"}}}"#, .quotaExceeded, "22"),
    ])
    func typedCodes(body: String, kind: FeedError.Kind, code: String) throws {
        let (error, _) = feedError(ITSProvider.self, try temporaryFile(body))
        #expect(error?.kind == kind)
        #expect(error?.code == code)
    }

    /// The gateway's quota envelope without its `returnReasonCode`: the error name (in
    /// `returnAuthMsg` or `errMsg`, in either syntax, spelled with spaces or in lower case) is
    /// code 22, so the source pauses as for code 22. A name the table does not hold (the
    /// per-second rate limit) is a gateway error, polled again next time.
    @Test("a gateway envelope with the quota's error name but no returnReasonCode is the quota (22), in XML and JSON", arguments: [
        ("<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR</returnAuthMsg></cmmMsgHeader></OpenAPI_ServiceResponse>",
         FeedError.Kind.quotaExceeded, "22"),
        ("<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR</returnAuthMsg><returnReasonCode/></cmmMsgHeader></OpenAPI_ServiceResponse>",
         .quotaExceeded, "22"),
        (#"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR","returnAuthMsg":"서비스 요청제한횟수 초과"}}}"#,
         .quotaExceeded, "22"),
        (#"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"SERVICE ERROR","returnAuthMsg":"Limited number of service requests exceeds error.","returnReasonCode":""}}}"#,
         .quotaExceeded, "22"),
        (#"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"SERVICE ERROR","returnAuthMsg":"DEADLINE_HAS_EXPIRED_ERROR"}}}"#, .invalidKey, "31"),
        (#"{"OpenAPI_ServiceResponse":{"cmmMsgHeader":{"errMsg":"SERVICE ERROR","returnAuthMsg":"LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR"}}}"#,
         .gatewayError, nil),
        ("<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg></cmmMsgHeader></OpenAPI_ServiceResponse>", .gatewayError, nil),
    ] as [(String, FeedError.Kind, String?)])
    func gatewayNameWithoutCode(body: String, kind: FeedError.Kind, code: String?) throws {
        for provider in [ITSProvider.self, GITSProvider.self] as [any FeedProvider.Type] where provider == ITSProvider.self || body.hasPrefix("<") {
            let (error, delivered) = feedError(provider, try temporaryFile(body))
            #expect(error?.kind == kind, "\(provider): \(String(describing: error))")
            #expect(error?.code == code)
            #expect(delivered == 0)
            if kind == .quotaExceeded {
                #expect(error?.message.contains("no returnReasonCode but the error name LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR, that is returnReasonCode 22") == true,
                        "\(String(describing: error))")
                #expect(error?.quotaResumesAt(failedAt: try #require(UTCInstant(rfc3339: "2024-01-01T03:00:00Z")))?.rfc3339 == "2024-01-01T15:00:00Z")
            }
        }
    }

    @Test("the real data.go.kr gateway JSON (HTTP 403 body) is an invalid key, code 30, with its message")
    func gatewayJSON() {
        let (error, _) = feedError(ITSProvider.self, TestPaths.sharedFeed("datagokr/gateway_error_30_json_http403_2026-08.json"))
        #expect(error?.kind == .invalidKey)
        #expect(error?.code == "30")
        #expect(error?.message.contains("등록되지 않은 서비스키") == true, "\(String(describing: error))")
    }

    @Test("raw control characters inside JSON strings are accepted and counted; a repeated key sets the record aside")
    func jsonTolerance() throws {
        let body = "{\"header\":{\"resultCode\":0},\"body\":{\"totalCount\":2,\"items\":["
            + "{\"startDate\":\"20240101000000\",\"linkId\":\"1\",\"message\":\"a\tb\"},"
            + "{\"startDate\":\"20240101000000\",\"linkId\":\"2\",\"linkId\":\"3\"}]}}"
        let result = try read(ITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.map(\.description) == ["a\tb"])
        #expect(result.rejected.map(\.position) == ["items[2]"])
        #expect(result.rejected.first?.reason.contains("\"linkId\" occurs 2 times") == true, "\(result.rejected)")
        #expect(result.verdict.warnings == ["1 character(s) could not be read as sent (illegal in XML or JSON text, or an HTML entity) and were replaced"])
    }

    /// The id is linkId, startDate and the event type: a record set aside for a bad coordinate
    /// keeps it (its incident is then neither cleared nor counted as unidentified).
    @Test("a record set aside for a bad coordinate keeps its id; the response stays complete", arguments: ["true", "null", "\"x\"", "1e999", "\"500\""])
    func badCoordinateKeepsTheID(coordX: String) throws {
        let body = "{\"header\":{\"resultCode\":0},\"body\":{\"totalCount\":1,\"items\":["
            + "{\"startDate\":\"20240101000000\",\"linkId\":\"7\",\"eventType\":\"공사\",\"coordX\":\(coordX),\"coordY\":\"37.5\"}]}}"
        let result = try read(ITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.isEmpty)
        #expect(result.rejected.map(\.externalID) == ["7:20240101000000:공사"], "\(result.rejected)")
        #expect(result.verdict.incompleteBecause.isEmpty, "\(result.verdict)")
    }

    /// A JSON response in CP949 (Korean APIs' legacy encoding) is read with U+FFFD where its
    /// bytes are not UTF-8; ids built from its Korean text would be garbled, so it never clears.
    @Test("a JSON response whose bytes are not UTF-8 is stored but cannot clear")
    func notUTF8CannotClear() throws {
        let url = try TestPaths.temporaryDirectory("feed").appendingPathComponent("cp949.json")
        // {"header":{"resultCode":"0"},"body":{"totalCount":1,"items":[{"startDate":"20240101000000","linkId":"1","eventType":"공사"}]}}
        // with 공사 in CP949 (B0 F8 BB E7).
        var bytes = Array(#"{"header":{"resultCode":"0"},"body":{"totalCount":1,"items":[{"startDate":"20240101000000","linkId":"1","eventType":""#.utf8)
        bytes += [0xB0, 0xF8, 0xBB, 0xE7] + Array(#""}]}}"#.utf8)
        try Data(bytes).write(to: url)
        let result = try read(ITSProvider.self, url)
        #expect(result.incidents.count == 1)
        #expect(result.verdict.incompleteBecause == ["4 byte sequence(s) were not UTF-8 (is the response in another encoding, such as CP949?), so ids may be garbled and nothing is cleared"], "\(result.verdict)")
    }

    @Test("city-road messages packed as 종류::도로::시작::끝::차로::[태그] 본문 give road, section and lanes")
    func packedMessage() throws {
        let dto = EventInfoDTO(type: "도시부", eventType: "공사", startDate: "20240301090000", coordX: "127.08", coordY: "37.52",
                               linkId: "1220000100", message: "공사::올림픽대로::잠실대교::청담대교::2차로::[공사/통제] 도로 보수 공사")
        let incident = try mapped(dto)
        #expect(incident.road == "올림픽대로")
        #expect(incident.location == "잠실대교 → 청담대교")
        #expect(incident.restriction == "2차로")
        #expect(incident.category == .roadwork)
        #expect(incident.description == dto.message)
        var plain = dto
        plain.message = "(갓길)방초매트설치작업중"
        #expect(try mapped(plain).road == nil)
        #expect(try mapped(plain).location == nil)
    }
}
