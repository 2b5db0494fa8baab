import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentNetworking
import IncidentXML
import TestSupport
import Testing

@Suite("GITS getIncidentInfo")
struct GITSTests {
    static let real = TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml")

    @Test("the recorded real response: 4 incidents, regSeq 202303216347 mapped exactly")
    func realResponse() throws {
        let all = try incidents(GITSProvider.self, Self.real, source: "gits")
        #expect(all.map(\.externalID) == ["202301059559", "202303216347", "202303216348", "202303217889"])
        let i = try #require(all.first { $0.externalID == "202303216347" })
        #expect(i.source == "gits")
        #expect(i.road == "강변북로")
        #expect(i.restriction == "4차로")
        #expect(i.category == .breakdown)
        #expect(i.providerCategory == "차량고장")
        #expect(i.coordinate?.longitude == 127.08203126)
        #expect(i.coordinate?.latitude == 37.52739696162846)
        #expect(i.startedAt?.rfc3339 == "2023-03-21T05:13:00Z")
        #expect(i.confirmedAt?.rfc3339 == "2023-03-21T05:13:00Z")
        #expect(i.expectedEndAt?.rfc3339 == "2023-03-21T06:25:00Z")
        #expect(i.endedAt == nil)
        #expect(i.location == "(구리방향) 잠실대교 → 잠실철교")
        #expect(i.description == "[차량고장] 강변북로 (구리방향) 잠실대교 → 잠실철교  4차로 통제,  차량고장")
        #expect(i.linkID == "1040000103")
        #expect(all[0].category == .closure)
        #expect(all[0].providerCategory == "도로폐쇄")
    }

    @Test("own fixture: entities, empty elements, provider end time, a description without a kind")
    func fixture() throws {
        let all = try incidents(GITSProvider.self, TestPaths.fixture("gits/incidents_3.xml"))
        try #require(all.count == 3)
        #expect(all[0] == Incident(
            source: "test", externalID: "202401010001", category: .accident, providerCategory: "사고",
            description: "[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC  2차로 통제,  추돌사고 & 후속 정체",
            road: "경부고속도로", roadRef: "고속국도1호선", location: "(서울방향) 수원IC → 신갈JC", restriction: "2차로",
            coordinate: Coordinate(latitude: 37.27311188, longitude: 127.10471234), linkID: "1000012345",
            startedAt: instant("2023-12-31T15:02:00Z"), confirmedAt: instant("2023-12-31T15:05:00Z"),
            expectedEndAt: instant("2023-12-31T17:00:00Z")))
        #expect(all[1].category == .roadwork)
        #expect(all[1].endedAt == instant("2023-12-31T20:10:00Z"))
        #expect(all[2] == Incident(source: "test", externalID: "202401010002", category: .other,
                                   description: "낙하물 신고 접수", road: "국도1호선", roadRef: "국도1호선",
                                   startedAt: instant("2023-12-31T23:59:59Z")))
    }

    @Test("fed in chunks of every size from 1 to 64 bytes, the records are identical", arguments: [
        "gits/incidents_3.xml", "gits/incidents_2_later.xml", "shared:gg_gits/getIncidentInfo_20230321.xml",
    ])
    func chunked(path: String) throws {
        let url = path.hasPrefix("shared:") ? TestPaths.sharedFeed(String(path.dropFirst(7))) : TestPaths.fixture(path)
        let bytes = [UInt8](try Data(contentsOf: url))
        func read(chunkSize: Int) throws -> [AccidentDTO] {
            var out: [AccidentDTO] = []
            let reader = XMLRecordReader(schema: GITSRecordReader.schema) { record, _ in out.append(GITSRecordReader.dto(from: record)) }
            var offset = 0
            while offset < bytes.count {
                try reader.parse(Array(bytes[offset..<min(offset + chunkSize, bytes.count)]))
                offset += chunkSize
            }
            try reader.finish()
            return out
        }
        let whole = try read(chunkSize: bytes.count)
        #expect(whole.count >= 2)
        for size in 1...64 {
            #expect(try read(chunkSize: size) == whole, "chunk size \(size)")
        }
    }

    @Test("headerCd ≠ 0 is an API error with the code and message; no incident is delivered")
    func apiError() {
        let (error, delivered) = feedError(GITSProvider.self, TestPaths.fixture("gits/error_headerCd_99.xml"))
        #expect(error?.kind == .apiError)
        #expect(error?.code == "99")
        #expect(error?.description.contains("시스템 오류가 발생하였습니다.") == true)
        #expect(delivered == 0)
    }

    @Test("a truncated document is a malformed-body error with line and column")
    func truncated() {
        let (error, _) = feedError(GITSProvider.self, TestPaths.fixture("gits/truncated.xml"))
        #expect(error?.kind == .malformedBody)
        #expect(error?.message.contains("line ") == true)
        #expect(error?.message.contains("column ") == true)
    }

    @Test("data.go.kr gateway envelopes are classified by returnReasonCode", arguments: [
        ("shared:datagokr/gateway_error_30_SERVICE_KEY_IS_NOT_REGISTERED_doc_quoted.xml", FeedError.Kind.invalidKey, "30"),
        ("datagokr/gateway_error_22_quota.xml", .quotaExceeded, "22"),
        ("datagokr/gateway_error_31_expired.xml", .invalidKey, "31"),
    ])
    func gateway(path: String, kind: FeedError.Kind, code: String) {
        let url = path.hasPrefix("shared:") ? TestPaths.sharedFeed(String(path.dropFirst(7))) : TestPaths.fixture(path)
        let (error, delivered) = feedError(GITSProvider.self, url)
        #expect(error?.kind == kind)
        #expect(error?.code == code)
        #expect(error?.description.contains("returnReasonCode \(code)") == true, "\(String(describing: error))")
        #expect(delivered == 0)
    }

    @Test("an HTML error page is an unexpected response naming the content type and the first bytes")
    func htmlPage() {
        let (error, _) = feedError(GITSProvider.self, TestPaths.fixture("gits/html_error_page.html"))
        #expect(error?.kind == .unexpectedResponse)
        #expect(error?.message.contains("Content-Type: text/html") == true)
        #expect(error?.message.contains("503 Service Temporarily Unavailable") == true)
    }

    @Test("a JSON or empty body is not GITS")
    func notXML() throws {
        #expect(feedError(GITSProvider.self, try temporaryFile("{\"a\":1}")).error?.kind == .unexpectedResponse)
        #expect(feedError(GITSProvider.self, try temporaryFile("  \n")).error?.kind == .unexpectedResponse)
    }

    @Test("another XML document is refused by its root element")
    func wrongRoot() throws {
        let (error, _) = feedError(GITSProvider.self, try temporaryFile("<response><header><resultCode>0</resultCode></header></response>"))
        #expect(error?.kind == .unexpectedResponse)
        #expect(error?.message.contains("<response>") == true)
    }

    @Test("a record that cannot be read faithfully is set aside with its reason; the others are stored", arguments: [
        ("<startDate>2023/03/21 14:13</startDate>", "startDate '2023/03/21 14:13'", "1"),
        ("<coord_x>127.1</coord_x>", "only one of coord_x and coord_y", "1"),
        ("<coord_x>east</coord_x><coord_y>37.5</coord_y>", "not decimal numbers", "1"),
        ("<coord_x>227.1</coord_x><coord_y>37.5</coord_y>", "outside WGS84", "1"),
        ("<inciDesc>no id</inciDesc>", "has no regSeq", nil),
        ("<startDate>2023-03-21 14:13:00</startDate><startDate>2023-03-21 14:14:00</startDate>", "startDate occurs 2 times", "1"),
        ("<regSeq>2</regSeq>", "regSeq occurs 2 times", nil),
    ])
    func invalidRecords(fields: String, problem: String, id: String?) throws {
        let first = fields.contains("no id") ? "" : "<regSeq>1</regSeq>"
        let good = "<itemList><regSeq>9</regSeq><startDate>2023-03-21 14:13:00</startDate></itemList>"
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>2</itemCount></msgHeader><msgBody>"
            + "<itemList>\(first)\(fields)</itemList>\n\(good)</msgBody></ServiceResult>"
        let result = try read(GITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.map(\.externalID) == ["9"])
        let rejected = try #require(result.rejected.first)
        #expect(result.rejected.count == 1)
        #expect(rejected.reason.contains(problem), "\(rejected.reason)")
        #expect(rejected.externalID == id)
        #expect(rejected.position == "itemList at line 1")
        // The excerpt holds the fields as sent; a repeated field reads as absent.
        if fields == "<regSeq>2</regSeq>" {
            #expect(rejected.excerpt == nil)
        } else {
            #expect(rejected.excerpt?.contains(first.isEmpty ? "inciDesc=no id" : "regSeq=1") == true, "\(rejected.excerpt ?? "-")")
        }
        #expect(result.verdict == .complete)
    }

    @Test("one bad character or entity never rejects the response: replaced, counted, the rest stored", arguments: [
        ("\u{01}", "\u{FFFD}"), ("&#1;", "\u{FFFD}"), ("&#x1F;", "\u{FFFD}"), ("&nbsp;", "\u{00A0}"), ("&eacute;", "é"),
    ])
    func repairedCharacters(raw: String, read expected: String) throws {
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>2</itemCount></msgHeader><msgBody>"
            + "<itemList><regSeq>1</regSeq><inciDesc>[사고] a\(raw)b</inciDesc></itemList>"
            + "<itemList><regSeq>2</regSeq><inciDesc>[공사] c</inciDesc></itemList></msgBody></ServiceResult>"
        let result = try read(GITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.map(\.externalID) == ["1", "2"])
        #expect(result.incidents.first?.description == "[사고] a\(expected)b")
        #expect(result.verdict.isComplete)
        #expect(result.verdict.warnings == ["1 character(s) could not be read as sent (illegal in XML or JSON text, or an HTML entity) and were replaced"])
    }

    @Test("a field in another namespace is ignored: it never becomes the id", arguments: [
        #"<meta:regSeq xmlns:meta="urn:vendor:audit">42</meta:regSeq>"#,
        #"<regSeq xmlns="urn:vendor:audit">42</regSeq>"#,
    ])
    func foreignNamespace(field: String) throws {
        let items = (1...4).map { "<itemList>\(field)<regSeq>\($0)</regSeq></itemList>" }.joined()
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>4</itemCount></msgHeader><msgBody>\(items)</msgBody></ServiceResult>"
        let result = try read(GITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.map(\.externalID) == ["1", "2", "3", "4"])
        #expect(result.rejected.isEmpty)
    }

    @Test("coordinates 0,0 mean no position")
    func zeroCoordinates() throws {
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd></msgHeader><msgBody><itemList><regSeq>1</regSeq><coord_x>0</coord_x><coord_y>0.0</coord_y></itemList></msgBody></ServiceResult>"
        #expect(try incidents(GITSProvider.self, try temporaryFile(body)).first?.coordinate == nil)
    }

    @Test("a response with no itemList is a complete empty answer only when it says so: itemCount 0 or headerCd 4 (no result)")
    func empty() throws {
        for body in ["<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>0</itemCount></msgHeader><msgBody/></ServiceResult>",
                     "<ServiceResult><msgHeader><headerCd>4</headerCd><headerMsg>no result</headerMsg></msgHeader><msgBody/></ServiceResult>"] {
            let result = try read(GITSProvider.self, try temporaryFile(body))
            #expect(result.incidents.isEmpty)
            #expect(result.verdict == .complete, "\(body)")
        }
        // A bare success code, inside msgHeader or not, with or without a body, says nothing
        // about which incidents are active: nothing may be cleared.
        for body in ["<ServiceResult><msgHeader><headerCd>0</headerCd></msgHeader><msgBody/></ServiceResult>",
                     "<ServiceResult><headerCd>0</headerCd></ServiceResult>",
                     "<ServiceResult><msgHeader><headerCd>0</headerCd></msgHeader></ServiceResult>"] {
            let result = try read(GITSProvider.self, try temporaryFile(body))
            #expect(result.incidents.isEmpty)
            #expect(result.verdict.incompleteBecause == ["the response holds no record and declares no itemCount, so it cannot say there are no incidents"], "\(body)")
        }
    }

    @Test("fewer itemList records than itemCount declares: the records are read, the response cannot clear", arguments: [
        (3, 1), (2, 0), (1, 2),
    ])
    func countMismatch(declared: Int, present: Int) throws {
        let items = (0..<present).map { "<itemList><regSeq>\($0)</regSeq></itemList>" }.joined()
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>\(declared)</itemCount></msgHeader><msgBody>\(items)</msgBody></ServiceResult>"
        let result = try read(GITSProvider.self, try temporaryFile(body))
        #expect(result.incidents.count == present)
        #expect(result.verdict.incompleteBecause == ["the response declares itemCount \(declared) but holds \(present) record(s)"])
    }

    @Test("a response without headerCd cannot clear; with no records either it is an error", arguments: [true, false])
    func noHeaderCode(withRecords: Bool) throws {
        let body = "<ServiceResult><msgHeader><headerMsg>?</headerMsg></msgHeader><msgBody>"
            + (withRecords ? "<itemList><regSeq>1</regSeq></itemList>" : "") + "</msgBody></ServiceResult>"
        if withRecords {
            let result = try read(GITSProvider.self, try temporaryFile(body))
            #expect(result.incidents.count == 1)
            #expect(result.verdict.incompleteBecause == ["the response does not say it succeeded (no headerCd 0), so it may not list every active incident"])
        } else {
            let (error, _) = feedError(GITSProvider.self, try temporaryFile(body))
            #expect(error?.kind == .unexpectedResponse)
            #expect(error?.message.contains("no headerCd 0 and no records") == true, "\(String(describing: error))")
        }
    }

    @Test("data.go.kr's response/header envelope on the GITS route reports its code and message; quota pauses", arguments: [
        ("99", FeedError.Kind.apiError), ("22", .quotaExceeded), ("30", .invalidKey), ("20", .invalidKey), ("12", .gatewayError),
    ])
    func dataGoKrEnvelope(code: String, kind: FeedError.Kind) throws {
        let body = "<response><header><resultCode>\(code)</resultCode><resultMsg>메시지 \(code)</resultMsg></header></response>"
        let (error, _) = feedError(GITSProvider.self, try temporaryFile(body))
        #expect(error?.kind == kind)
        #expect(error?.code == code)
        #expect(error?.message.contains("resultCode \(code) (메시지 \(code))") == true, "\(String(describing: error))")
    }

    @Test("the request: serviceKey encoded exactly once whichever form the key was given in", arguments: [
        "abc+def/ghi==", "abc%2Bdef%2Fghi%3D%3D",
    ])
    func router(key: String) throws {
        let request = try GITSRouter.getIncidentInfo(key: APIKey(key), baseURL: URL(string: "http://127.0.0.1:8080/api/rest/")).asURLRequest()
        #expect(request.url?.absoluteString == "http://127.0.0.1:8080/api/rest/getIncidentInfo?serviceKey=abc%2Bdef%2Fghi%3D%3D")
        #expect(request.httpMethod == "GET")
        let production = try GITSRouter.getIncidentInfo(key: APIKey(key), baseURL: nil).asURLRequest()
        #expect(production.url?.absoluteString == "https://openapigits.gg.go.kr/api/rest/getIncidentInfo?serviceKey=abc%2Bdef%2Fghi%3D%3D")
    }

    @Test("a baseURL given as a feed file: the path that continues below it is named (GITS, ITS, any case, gzip); an endpoint or a version is not",
          arguments: [
              ("http://h/feeds/gits.xml/getIncidentInfo", "gits.xml"), ("http://h/its/eventInfo.JSON/eventInfo", "eventInfo.JSON"),
              ("http://h/a/b/dump.xml.gz/getIncidentInfo", "dump.xml.gz"), ("http://h/x/feed.geojson/eventInfo", "feed.geojson"),
              ("http://h/api/rest/getIncidentInfo", nil), ("http://h/api/v1.2/eventInfo", nil), ("http://h/wzdx/feed.geojson", nil),
              ("http://h/.xml/eventInfo", nil), ("http://h/", nil),
          ] as [(String, String?)])
    func baseURLNamingAFile(url: String, file: String?) throws {
        #expect(EndpointRouter.segmentBelowFile(in: try #require(URL(string: url))) == file)
    }

    @Test("a recorded file's URL as GITS's baseURL gets the operation appended below it (what check-config warns about)")
    func fileBaseURL() throws {
        let request = try GITSRouter.getIncidentInfo(key: APIKey("k"), baseURL: URL(string: "http://127.0.0.1:8080/feeds/gits.xml")).asURLRequest()
        let url = try #require(request.url)
        #expect(url.path == "/feeds/gits.xml/getIncidentInfo")
        #expect(EndpointRouter.segmentBelowFile(in: url) == "gits.xml")
    }

    @Test("category keywords", arguments: [
        ("사고", IncidentCategory.accident), ("차량고장", .breakdown), ("공사", .roadwork), ("도로폐쇄", .closure),
        ("낙하물", .obstruction), ("기상", .weather), ("교통사고", .accident), ("충돌사고", .accident),
        ("시설물보수작업", .roadwork), ("결빙", .weather), ("정체", .congestion), ("행사", .event),
    ])
    func categories(label: String, category: IncidentCategory) {
        #expect(CategoryClassifier.category(of: label) == category)
    }
}

@Suite("GITS headerCd codes")
struct GITSHeaderCodeTests {
    func body(_ code: String, items: String = "") -> String {
        "<ServiceResult><msgHeader><headerCd>\(code)</headerCd><headerMsg>메시지</headerMsg></msgHeader><msgBody>\(items)</msgBody></ServiceResult>"
    }

    @Test("headerCd 4 (no result) is a complete, empty answer")
    func noResult() throws {
        #expect(try incidents(GITSProvider.self, try temporaryFile(body("4"))).isEmpty)
    }

    @Test("key and quota codes are typed", arguments: [
        ("5", FeedError.Kind.invalidKey), ("6", .invalidKey), ("7", .invalidKey), ("8", .quotaExceeded),
        ("1", .apiError), ("99", .apiError), ("x", .apiError),
    ])
    func typed(code: String, kind: FeedError.Kind) throws {
        let (error, delivered) = feedError(GITSProvider.self, try temporaryFile(body(code, items: "<itemList><regSeq>1</regSeq></itemList>")))
        #expect(error?.kind == kind)
        #expect(error?.code == code)
        #expect(delivered == 0)
    }

    @Test("an exhausted quota resumes at the next midnight in Korea, or after Retry-After")
    func quotaResumes() {
        let failedAt = UTCInstant(rfc3339: "2023-03-21T14:59:59Z")!  // 23:59:59 KST
        let quota = FeedError(.quotaExceeded, provider: "gits", message: "limit")
        #expect(quota.quotaResumesAt(failedAt: failedAt)?.rfc3339 == "2023-03-21T15:00:00Z")
        #expect(quota.quotaResumesAt(failedAt: failedAt.adding(seconds: 1))?.rfc3339 == "2023-03-22T15:00:00Z")
        let withRetryAfter = FeedError(.quotaExceeded, provider: "its", message: "429", retryAfterSeconds: 120.2)
        #expect(withRetryAfter.quotaResumesAt(failedAt: failedAt)?.rfc3339 == "2023-03-21T15:02:00Z")
        #expect(FeedError(.apiError, provider: "gits", message: "x").quotaResumesAt(failedAt: failedAt) == nil)
    }
}

@Suite("GITS in legacy Korean encodings")
struct GITSEncodingTests {
    @Test("UTF-16 and UTF-32 with a byte order mark, and UTF-16 without one, read like UTF-8", arguments: [
        ("UTF-16LE", true), ("UTF-16BE", true), ("UTF-32LE", true), ("UTF-32BE", true), ("UTF-16LE", false), ("UTF-16BE", false),
    ])
    func wideEncodings(encoding: String, mark: Bool) throws {
        let text = try String(contentsOf: TestPaths.fixture("xml/gits_multi.xml"), encoding: .utf8)
            .replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"\(encoding)\"")
        let (swiftEncoding, bom): (String.Encoding, [UInt8]) = switch encoding {
        case "UTF-16LE": (.utf16LittleEndian, [0xFF, 0xFE])
        case "UTF-16BE": (.utf16BigEndian, [0xFE, 0xFF])
        case "UTF-32LE": (.utf32LittleEndian, [0xFF, 0xFE, 0x00, 0x00])
        default: (.utf32BigEndian, [0x00, 0x00, 0xFE, 0xFF])
        }
        let file = try temporaryFile("", name: "\(encoding)-\(mark).xml")
        try (Data(mark ? bom : []) + (try #require(text.data(using: swiftEncoding)))).write(to: file)
        #expect(try incidents(GITSProvider.self, file) == incidents(GITSProvider.self, TestPaths.fixture("xml/gits_multi.xml")))
    }

    @Test("EUC-KR without a declaration is read by the HTTP charset; a declaration wins over it")
    func httpCharset() throws {
        let euckr = try Data(contentsOf: TestPaths.fixture("xml/gits_multi_euckr.xml"))
        let text = String(decoding: euckr, as: UTF8.self)
        // Drop the XML declaration (ASCII): the document now says nothing of its encoding.
        let body = euckr.suffix(from: euckr.firstIndex(of: UInt8(ascii: ">"))! + 1)
        let file = try temporaryFile("", name: "undeclared.xml")
        try Data(body).write(to: file)
        let twin = try incidents(GITSProvider.self, TestPaths.fixture("xml/gits_multi.xml"))
        let undeclared = try read(GITSProvider.self, file, contentType: "text/xml;charset=EUC-KR")
        #expect(undeclared.incidents == twin)
        #expect(text.hasPrefix("<?xml"))
        // With its declaration (EUC-KR), a wrong HTTP charset is overridden by the document.
        #expect(try read(GITSProvider.self, TestPaths.fixture("xml/gits_multi_euckr.xml"), contentType: "text/xml; charset=ISO-8859-1").incidents == twin)
    }

    @Test("a feed declared EUC-KR (or CP949) maps to the same incidents as its UTF-8 twin", arguments: [
        "xml/gits_multi_euckr.xml", "xml/gits_multi_cp949.xml",
    ])
    func legacyEncoding(file: String) throws {
        let twin = try incidents(GITSProvider.self, TestPaths.fixture("xml/gits_multi.xml"))
        let legacy = try incidents(GITSProvider.self, TestPaths.fixture(file))
        #expect(twin.count >= 3)
        #expect(legacy == twin)
        #expect(legacy.contains { ($0.description ?? "").unicodeScalars.contains { (0xAC00...0xD7A3).contains($0.value) } })
    }
}

@Suite("Hostile responses and replays")
struct HostileResponseTests {
    @Test("a key in a body excerpt never leaks, even where the excerpt is cut through it", arguments: [130, 140, 150, 155, 159, 160])
    func excerptCutThroughKey(padding: Int) throws {
        let key = "EXCERPT+secret/key=="
        _ = APIKey(key)  // configured keys are registered for redaction
        for form in [key, "EXCERPT%2Bsecret%2Fkey%3D%3D"] {
            let head = Array(("<html>" + String(repeating: "x", count: padding) + form + " tail</html>").utf8)
            let excerpt = BodySniffer.excerpt(head)
            #expect(!excerpt.contains("EXCERPT"), "\(excerpt)")
            #expect(excerpt.count <= 160)
        }
    }

    @Test("a huge Retry-After pauses an exhausted source for a day at most")
    func quotaPauseIsCapped() throws {
        let failedAt = try #require(UTCInstant(rfc3339: "2024-01-01T00:00:00Z"))
        for seconds in [999_999_999.0, 1e30, .infinity] {
            let error = FeedError(.quotaExceeded, provider: "its", message: "429", retryAfterSeconds: seconds)
            let resumes = try #require(error.quotaResumesAt(failedAt: failedAt))
            #expect(resumes.secondsSince1970 - failedAt.secondsSince1970 <= 86_400)
        }
    }

    @Test("replaying a saved quota-error response fails the replay but leaves the live source's quota alone")
    func replayDoesNotTouchQuota() async throws {
        let feed = try ProviderRegistry.fileFeed(source: "gits", provider: "gits",
                                                 file: TestPaths.fixture("datagokr/gateway_error_22_quota.xml"))
        #expect(feed.origin == .file(path: TestPaths.fixture("datagokr/gateway_error_22_quota.xml").path, complete: false))
        let store = StubbedPollTests.RecordingStore()
        store.resumesAt = UTCInstant(rfc3339: "2099-01-01T00:00:00Z")  // a replay is not skipped for it either
        let run = await IngestIncidents(store: store, clock: .fixed(UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!),
                                        describe: { String(describing: $0) })(feed)
        #expect(run.status == .failed)
        #expect(run.resumesAt == nil)
        #expect(store.runs.first?.resumesAt == nil)
    }

    @Test("JSON that says nothing is not an empty answer", arguments: ["[]", "{}", "{\"body\":{}}", "{\"response\":{}}"])
    func emptyJSON(body: String) throws {
        let (error, _) = feedError(ITSProvider.self, try temporaryFile(body))
        #expect(error?.kind == .unexpectedResponse || error?.kind == .malformedBody, "\(body): \(String(describing: error))")
    }

    @Test("a JSON value over 1 MiB is refused like an oversized XML text node")
    func hugeJSONValue() throws {
        let body = "{\"header\":{\"resultCode\":0},\"body\":{\"items\":[{\"startDate\":\"20240101000000\",\"linkId\":\"1\",\"message\":\""
            + String(repeating: "가", count: 400_000) + "\"}]}}"
        let (error, delivered) = feedError(ITSProvider.self, try temporaryFile(body))
        #expect(error?.kind == .malformedBody)
        #expect(error?.message.contains("a string longer than 1048576 bytes") == true, "\(String(describing: error))")
        #expect(delivered == 0)
    }

    @Test("a file that is not GITS says so, not 'check the base URL'")
    func fileNotGITS() throws {
        var error: FeedError?
        do {
            _ = try GITSProvider.read(file: try temporaryFile("{\"a\": 1}"), contentType: nil, source: "gits") { _ in }
        } catch let caught as FeedError {
            error = caught
        }
        #expect(error?.message.contains("the file is not GITS XML") == true, "\(String(describing: error))")
        #expect(error?.message.contains("base URL") == false)
    }
}
