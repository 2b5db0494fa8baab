import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentJSON
import IncidentNetworking
import IncidentXML
import TestSupport
import Testing

@Suite("Open511")
struct Open511Tests {
    static let sf511 = TestPaths.sharedFeed("open511/sf511_traffic_events_page.json")
    static let driveBC = TestPaths.sharedFeed("open511/drivebc_events_page_5events_2023-06.json")
    static let driveBCWrapped = TestPaths.sharedFeed("open511/drivebc_event_DBC-28953_wrapped.json")
    static let repentigny = TestPaths.sharedFeed("open511/repentigny_open511_v0_events_xml_2013-05.xml")

    static func source(zone: String? = nil) -> SourceDefinition {
        var source = SourceDefinition(name: "test", provider: "open511")
        if let zone { source.options[Open511Provider.timeZone] = zone }
        return source
    }

    static func instant(_ text: String) -> UTCInstant? { UTCInstant(rfc3339: text) }

    // MARK: The recorded samples

    @Test("511 SF Bay page: the one event, every field, + extensions kept, a complete answer")
    func sf511() throws {
        let (all, verdict) = try records(Open511Provider.self, Self.sf511)
        #expect(verdict == .complete)
        try #require(all.count == 1)
        #expect(all[0].incident == Incident(
            source: "test", externalID: "511.org/1045578", category: .breakdown, providerCategory: "INCIDENT/Disabled vehicle",
            description: "CHP : Disabled vehicle on I-80 Eastbound west of I-505 N (Vacaville). Lane affected. Expect delays.\n+source_type=CHP; +source_id=230531GG00285",
            road: "I-80 E", location: "I-505 N (Solano)", direction: "Eastbound",
            restriction: "SOME_LANES_CLOSED; +lane_type=Lane; +lane_status=affected; +road_advisory=Expect delays; +article=west of",
            coordinate: position(-121.950177, 38.375466), startedAt: Self.instant("2023-05-31T13:17:00Z")))
        try Golden.check(all, "open511_sf511_traffic_events_page")
    }

    @Test("the DriveBC page: five events; intervals without a zone are UTC, recurring schedules local to timeZone")
    func driveBC() throws {
        let (all, verdict) = try records(Open511Provider.self, Self.driveBC, source: Self.source(zone: "America/Vancouver"))
        #expect(verdict == .complete)
        let incidents = all.compactMap(\.incident)
        #expect(incidents.map(\.externalID) == ["drivebc.ca/DBC-28386", "drivebc.ca/DBC-46014", "drivebc.ca/DBC-53145",
                                                "drivebc.ca/DBC-52791", "drivebc.ca/DBC-52446"])
        #expect(incidents.map(\.category) == [.obstruction, .roadwork, .roadwork, .roadwork, .roadwork])
        #expect(incidents.map(\.providerCategory) == ["INCIDENT/HAZARD"] + Array(repeating: "CONSTRUCTION/ROAD_MAINTENANCE", count: 4))
        // "2021-04-26T15:19/" (open); DBC-52791 "2023-05-24T16:00/2023-07-27T22:00" is described as "Until Thu Jul 27 at 3:00 PM PDT".
        #expect(incidents.map { $0.startedAt?.rfc3339 } == ["2021-04-26T15:19:00Z", "2022-10-21T15:01:00Z", "2023-06-05T16:00:00Z",
                                                            "2023-05-24T16:00:00Z", "2023-05-23T14:00:00Z"])
        #expect(incidents.map { $0.expectedEndAt?.rfc3339 } == [nil, nil, "2023-07-28T22:00:00Z", "2023-07-27T22:00:00Z", "2023-07-22T14:00:00Z"])
        #expect(incidents.allSatisfy { $0.endedAt == nil })
        #expect(incidents.map(\.direction) == ["BOTH", "BOTH", "BOTH", "BOTH", "NONE"])
        #expect(incidents[0].geometry == nil)
        #expect(incidents[0].coordinate == position(-122.479074, 53.155476))
        #expect(incidents[0].location == "at Cottonwood bridge (Cariboo District)")
        #expect(incidents[0].road == "Other Roads")
        let line = try #require(incidents[1].geometry)
        #expect(line.typeName == "LineString")
        #expect(line.positions.count == 148)
        #expect(line.positions.first == position(-123.658384, 48.39398))
        #expect(incidents[1].coordinate == line.representativePoint)
        #expect(incidents[4].location == "Bromley Pl → Frontage Rd (Okanagan-Shuswap District)")
        #expect(incidents[0].description?.hasPrefix("Quesnel-Hixon Road, in both directions. Landslide at Cottonwood bridge. Road closed.") == true)
        #expect(incidents[0].description?.hasSuffix("Last updated Thursday, April 13 at 10:30 AM.; +linear_reference_km=-1") == true)
        try Golden.check(all, "open511_drivebc_events_page_5events_2023-06")
    }

    @Test("recurring schedule DBC-53145 (09:00–15:00 daily from 2023-06-05 to 2023-07-28) in three zones")
    func recurringScheduleZones() throws {
        for (zone, start, end) in [("America/Vancouver", "2023-06-05T16:00:00Z", "2023-07-28T22:00:00Z"),
                                   ("UTC", "2023-06-05T09:00:00Z", "2023-07-28T15:00:00Z"),
                                   ("America/Toronto", "2023-06-05T13:00:00Z", "2023-07-28T19:00:00Z")] {
            let (all, _) = try records(Open511Provider.self, Self.driveBC, source: Self.source(zone: zone))
            let event = try #require(all.compactMap(\.incident).first { $0.externalID == "drivebc.ca/DBC-53145" })
            #expect(event.startedAt?.rfc3339 == start, "\(zone)")
            #expect(event.expectedEndAt?.rfc3339 == end, "\(zone)")
        }
    }

    @Test("wall-clock times of a tz zone: summer and winter offsets, the repeated hour, the skipped hour", arguments: [
        ("2023-06-05T09:00:00Z", "2023-06-05T16:00:00Z"),  // PDT, -07:00
        ("2023-01-05T09:00:00Z", "2023-01-05T17:00:00Z"),  // PST, -08:00
        ("2023-11-05T01:30:00Z", "2023-11-05T08:30:00Z"),  // shown twice: the first time, still PDT
        ("2023-03-12T02:30:00Z", "2023-03-12T10:30:00Z"),  // never shown: 03:30 PDT
    ])
    func zone(wall: String, expected: String) throws {
        let vancouver = try #require(ProviderZone(identifier: "America/Vancouver"))
        #expect(vancouver.instant(showing: try #require(Self.instant(wall))).rfc3339 == expected)
        #expect(ProviderZone.utc.instant(showing: try #require(Self.instant(wall))).rfc3339 == wall)
        #expect(ProviderZone(identifier: "Nowhere/Atlantis") == nil)
    }

    @Test("DriveBC's {\"event\": …} wrapper: the event is read, and the answer is incomplete (it lists one event, not all)")
    func wrappedEvent() throws {
        let (all, verdict) = try records(Open511Provider.self, Self.driveBCWrapped)
        try #require(all.count == 1)
        let event = try #require(all[0].incident)
        #expect(event.externalID == "drivebc.ca/DBC-28953")
        #expect(event.category == .roadwork)
        #expect(event.providerCategory == "CONSTRUCTION/ROAD_MAINTENANCE")
        // "2021-05-08T00:31/2023-11-24T07:59": UTC; created is 2021-05-07T17:31:08-07:00.
        #expect(event.startedAt?.rfc3339 == "2021-05-08T00:31:00Z")
        #expect(event.expectedEndAt?.rfc3339 == "2023-11-24T07:59:00Z")
        #expect(event.location == "Columbia West FSR → Wiseman Rd (Rocky Mountain District)")
        #expect(event.geometry?.typeName == "LineString")
        #expect(event.geometry?.positions.count == 63)
        #expect(event.geometry?.positions.first == position(-117.401688, 51.495589))
        #expect(event.description?.contains("\n+ivr_message=Highway 1, in both directions.") == true)
        #expect(event.description?.hasSuffix("; +linear_reference_km=941.22") == true)
        #expect(!verdict.isComplete)
        #expect(verdict.incompleteBecause == ["the document is one event wrapped as {\"event\": …} by an application, not an Open511 events list, so it cannot say which other events are active"])
        try Golden.check(all, "open511_drivebc_event_DBC-28953_wrapped")
    }

    @Test("Repentigny's Open511 XML: 19 events, GML 2 geometries, French text, ARCHIVED events ended")
    func repentigny() throws {
        let (all, verdict) = try records(Open511Provider.self, Self.repentigny, source: Self.source(zone: "America/Toronto"))
        #expect(verdict == .complete)
        let incidents = all.compactMap(\.incident)
        #expect(incidents.count == 19)
        #expect(incidents.map(\.externalID) == (1...19).map { "test.open511.org/\($0)" })
        #expect(incidents.filter { $0.endedAt == nil }.map(\.externalID) == [7, 14, 15, 16, 17, 19].map { "test.open511.org/\($0)" })
        #expect(incidents.filter { $0.geometry?.typeName == "LineString" }.count == 11)
        #expect(incidents.filter { $0.geometry == nil && $0.coordinate != nil }.count == 8)
        let first = incidents[0]
        // ARCHIVED, 2013-05-08 to 2013-05-09 with no daily times: midnight to midnight in Repentigny (EDT, -04:00).
        #expect(first.category == .other)
        #expect(first.providerCategory == "INCIDENT")
        #expect(first.startedAt?.rfc3339 == "2013-05-08T04:00:00Z")
        #expect(first.expectedEndAt?.rfc3339 == "2013-05-10T04:00:00Z")
        #expect(first.endedAt?.rfc3339 == "2013-05-10T04:00:00Z")
        #expect(first.description == "Excavation d'égouts\nFermeture complète\ndetour: Partage des deux voies de circulation en direction Ouest")
        #expect(first.road == "Iberville")
        #expect(first.location == "Bonaventure → Bord-de-l'eau")
        #expect(first.geometry?.positions.first == position(-73.468033075299999, 45.722562664000002))
        #expect(first.geometry?.positions.count == 3)
        // ARCHIVED with updated (2013-05-24T14:58) after its schedule's end: ended at the end of the schedule.
        #expect(incidents[1].endedAt?.rfc3339 == "2013-05-20T04:00:00Z")
        #expect(incidents[1].coordinate == position(-73.471326828000002, 45.727479736900001))
        #expect(incidents[1].geometry == nil)
        let active = incidents[6]
        #expect(active.externalID == "test.open511.org/7")
        #expect(active.category == .roadwork)
        #expect(active.startedAt?.rfc3339 == "2013-05-06T04:00:00Z")
        #expect(active.expectedEndAt?.rfc3339 == "2013-06-01T04:00:00Z")
        #expect(active.description == "Travaux majeurs d'aqueduc\nFermeture complète en direction Nord\ndetour: Emprunter les boulevards Beauchesne ou Iberville pour accéder à l'Autoroute.")
        #expect(incidents[8].description == "Travaux majeurs de branchement de services\nFermeture partiel de la rue Notre Dame:\n\t- Fermeture de deux voies sur la rue Notre-Dame en face du numéro civique 915\n\t- Maintien d\u{2019}une voie de circulation dans chacune des directions en face du numéro civique 915")
        try Golden.check(all, "open511_repentigny_open511_v0_events_xml_2013-05")
    }

    @Test("Repentigny read in chunks of 1 to 64 bytes, and with the GML prefix renamed, gives the same events")
    func repentignyChunksAndPrefixes() throws {
        /// The events read from `bytes` fed in chunks of `chunkSize`.
        func read(_ bytes: [UInt8], chunkSize: Int) throws -> [Open511Event] {
            var out: [Open511Event] = []
            let reader = XMLRecordReader(schema: Open511XMLReader.schema) { record, _ in out.append(Open511XMLReader.event(from: record)) }
            var offset = 0
            while offset < bytes.count {
                try reader.parse(Array(bytes[offset..<min(offset + chunkSize, bytes.count)]))
                offset += chunkSize
            }
            try reader.finish()
            return out
        }
        let bytes = [UInt8](try Data(contentsOf: Self.repentigny))
        let whole = try read(bytes, chunkSize: bytes.count)
        #expect(whole.count == 19)
        #expect(whole.allSatisfy { $0.problems.isEmpty && $0.geography != nil })
        for size in 1...64 {
            #expect(try read(bytes, chunkSize: size) == whole, "chunk size \(size)")
        }
        // The GML namespace under another prefix.
        let text = try String(decoding: bytes, as: UTF8.self)
        let renamed = text.replacingOccurrences(of: "gml:", with: "g:").replacingOccurrences(of: "xmlns:gml=", with: "xmlns:g=")
        #expect(try read(Array(renamed.utf8), chunkSize: 4096) == whole)
        // The GML namespace as the default namespace of each geometry, no prefix at all.
        var defaulted = text
        for name in ["Point", "LineString"] {
            defaulted = defaulted.replacingOccurrences(of: "<gml:\(name) ", with: "<\(name) xmlns=\"http://www.opengis.net/gml\" ")
                .replacingOccurrences(of: "</gml:\(name)>", with: "</\(name)>")
        }
        defaulted = defaulted.replacingOccurrences(of: "gml:coordinates>", with: "coordinates>")
        #expect(!defaulted.contains("<gml:"))
        #expect(try read(Array(defaulted.utf8), chunkSize: 4096) == whole)
        // GML elements in no namespace are not GML: no geometry is read from them.
        let foreign = text.replacingOccurrences(of: "<gml:", with: "<").replacingOccurrences(of: "</gml:", with: "</")
        #expect(try read(Array(foreign.utf8), chunkSize: 4096).map(\.geography) == Array(repeating: nil, count: 19))
    }

    // MARK: Variants of the kinds

    @Test("bad events are set aside with their reason; the others are stored; the answer stays complete")
    func variants() throws {
        let (all, verdict) = try records(Open511Provider.self, TestPaths.fixture("open511/events_variants.json"))
        #expect(verdict == .complete)
        try #require(all.count == 12)
        let first = try #require(all[0].incident)
        #expect(first == {
            var i = Incident(source: "test", externalID: "test.org/1", category: .accident, providerCategory: "INCIDENT/ACCIDENT,SPILL",
                             description: "Crash on Main St\nTwo vehicles, right lane blocked\n+custom={\"a\":1}; +count=3",
                             road: "Main St; Oak Rd", location: "Main St: 1st Ave → 2nd Ave; Oak Rd: Main St (Downtown, North)",
                             direction: "N; E",
                             restriction: "Main St: SOME_LANES_CLOSED; lanes_closed=1; lanes_open=2 | Oak Rd: CLOSED; +detour_sign=true",
                             startedAt: Self.instant("2024-03-01T15:00:00Z"), expectedEndAt: Self.instant("2024-03-02T17:00:00Z"))
            i.setGeometry(.multiLineString([[position(-75.70, 45.42), position(-75.69, 45.43)], [position(-75.68, 45.44), position(-75.67, 45.45)]]))
            return i
        }())
        func rejected(_ index: Int) -> RejectedRecord? { all[index].rejected }
        #expect(rejected(1)?.externalID == nil)
        #expect(rejected(1)?.reason == "key \"id\" occurs 2 times")
        #expect(rejected(1)?.position == "events[1]")
        #expect(rejected(2)?.externalID == "test.org/3")
        #expect(rejected(2)?.reason == "created 'yesterday' is not an ISO 8601 time")
        #expect(rejected(2)?.excerpt == "id=test.org/3; status=ACTIVE; event_type=INCIDENT; created=yesterday; headline=Bad time")
        #expect(rejected(3)?.externalID == nil)
        #expect(rejected(3)?.reason == "the event has no id")
        #expect(rejected(4)?.reason == "geography: the geometry type Circle is not one of Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon")
        #expect(rejected(4)?.externalID == "test.org/5")
        #expect(rejected(5)?.reason == "roads is a text, not a list")
        // Archived on 2024-02-10, before the planned end of 2024-03-31: it ended when it was archived.
        #expect(all[6].incident?.endedAt == Self.instant("2024-02-10T12:00:00Z"))
        #expect(all[6].incident?.expectedEndAt == Self.instant("2024-03-31T17:00:00Z"))
        #expect(rejected(7)?.reason == "the event is ARCHIVED but has no schedule, created or updated time to date its end")
        #expect(rejected(7)?.externalID == "test.org/8")
        // A polygon is kept as the outline of its exterior ring; an unknown subtype falls back to the type.
        let parade = try #require(all[8].incident)
        #expect(parade.geometry == .lineString([position(-75.70, 45.40), position(-75.60, 45.40), position(-75.60, 45.50), position(-75.70, 45.40)]))
        #expect(parade.category == .event)
        #expect(parade.providerCategory == "SPECIAL_EVENT/PARADE")
        #expect(parade.expectedEndAt == nil)
        #expect(rejected(9)?.reason == "the event is a number, not an object")
        #expect(rejected(9)?.position == "events[9]")
        #expect(rejected(10)?.reason == "schedule interval '2024-03-01T15:00:00Z/P1D' has an end that is not an ISO 8601 time")
        // The event's own timezone wins over the option: 22:00–06:00 on weekends from Sat 2 to Sat 9 November 2024,
        // Winnipeg (CDT -05:00 until 3 November, then CST -06:00): Sat 2 Nov 22:00 CDT to Sun 10 Nov 06:00 CST.
        let ice = try #require(all[11].incident)
        #expect(ice.category == .weather)
        #expect(ice.startedAt?.rfc3339 == "2024-11-03T03:00:00Z")
        #expect(ice.expectedEndAt?.rfc3339 == "2024-11-10T12:00:00Z")
    }

    @Test("the events as sent: severity in the server's case and normalized, + members of the event and of its roads")
    func eventsAsSent() throws {
        func events(_ file: URL) throws -> [Open511Event] {
            var out: [Open511Event] = []
            try JSONRecordReader(schema: Open511JSONReader.schema) { record, _ in out.append(Open511JSONReader.event(from: record)) }
                .parse(contentsOf: file)
            return out
        }
        let sf = try #require(try events(Self.sf511).first)
        #expect(sf.severity == "Moderate")
        #expect(sf.normalizedSeverity == "MODERATE")
        #expect(sf.extensions == [.init("+source_type", "CHP"), .init("+source_id", "230531GG00285")])
        #expect(sf.roads.first?.extensions.map(\.name) == ["+lane_type", "+lane_status", "+road_advisory", "+article"])
        #expect(sf.intervals == ["2023-05-31T13:17Z/"])
        let driveBC = try events(Self.driveBC)
        #expect(driveBC.map(\.normalizedSeverity) == ["MAJOR", "MINOR", "MINOR", "MINOR", "MAJOR"])
        #expect(driveBC[2].recurringSchedules == [Open511Event.RecurringSchedule(
            startDate: "2023-06-05", endDate: "2023-07-28", dailyStartTime: "09:00", dailyEndTime: "15:00",
            days: ["1", "2", "3", "4", "5", "6", "7"])])
    }

    @Test("an empty events list is a complete answer with no event")
    func emptyList() throws {
        let (all, verdict) = try records(Open511Provider.self, try temporaryFile(#"{"events": [], "pagination": {"offset": 0}, "meta": {"version": "v1"}}"#))
        #expect(all.isEmpty)
        #expect(verdict == .complete)
    }

    @Test("events that is not a list is refused: it never clears the stored events", arguments: ["null", "{}", #"{"id": "a/1", "status": "ACTIVE"}"#, #""""#, "0"])
    func eventsNotAList(value: String) throws {
        let body = #"{"meta": {"version": "v1"}, "events": "# + value + "}"
        let (error, delivered) = feedError(Open511Provider.self, try temporaryFile(body))
        #expect(error?.kind == .unexpectedResponse, "\(body)")
        #expect(error?.message == "the JSON document's events is not a list, so it cannot say there are no events; nothing was stored or cleared")
        // A scalar or an object is read as one record before the end refuses the document;
        // the poll is one transaction, so the store keeps none of it (IngestTests).
    }

    @Test("a JSON document without events is refused, never read as no events", arguments: [
        #"{"error": {"code": 401, "message": "Invalid API key"}}"#, "{}", "[]", #"{"features": []}"#,
        #"{"meta": {"version": "v1"}, "pagination": {"offset": 0}}"#,
    ])
    func notAnAnswer(body: String) throws {
        let (error, delivered) = feedError(Open511Provider.self, try temporaryFile(body))
        #expect(error?.kind == .unexpectedResponse)
        #expect(error?.message == "the JSON document has no events list, so it is not an Open511 answer and cannot say there are no events; check the base URL and the key")
        #expect(delivered == 0)
    }

    @Test("bodies that are not Open511 at all: an HTML page, an empty body, truncated JSON, another XML root")
    func otherBodies() throws {
        #expect(feedError(Open511Provider.self, try temporaryFile("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>")).error?.kind == .unexpectedResponse)
        #expect(feedError(Open511Provider.self, try temporaryFile("")).error?.kind == .unexpectedResponse)
        let truncated = feedError(Open511Provider.self, try temporaryFile(#"{"events": [{"id": "a/1", "status": "ACTIVE"}, {"id": "a/2""#))
        #expect(truncated.error?.kind == .malformedBody)
        #expect(truncated.error?.message.hasPrefix("truncated JSON response (cut off before its end) at line 1, column") == true)
        let xml = feedError(Open511Provider.self, try temporaryFile("<error><message>Invalid key</message></error>"))
        #expect(xml.error?.message == "expected an Open511 <open511> document but the root element is <error>; check the base URL")
    }

    @Test("XML variant: two languages, a MultiPoint, projected coordinates refused, a repeated id refused")
    func xmlVariant() throws {
        let (all, verdict) = try records(Open511Provider.self, TestPaths.fixture("open511/events_two_languages.xml"))
        #expect(verdict == .complete)
        try #require(all.count == 3)
        let event = try #require(all[0].incident)
        #expect(event == {
            var i = Incident(source: "test", externalID: "example.ca/1", category: .roadwork, providerCategory: "CONSTRUCTION/ROAD_CONSTRUCTION",
                             description: "[fr] Travaux de pavage\n[en] Paving work\nUne voie fermée", road: "Rue Notre-Dame",
                             location: "Rue A → Rue B (Montréal)", direction: "BOTH", restriction: "SINGLE_LANE_ALTERNATING",
                             startedAt: Self.instant("2024-05-03T11:00:00Z"), expectedEndAt: Self.instant("2024-05-10T21:00:00Z"))
            i.setGeometry(.multiPoint([position(-73.55, 45.50), position(-73.54, 45.51)]))
            return i
        }())
        #expect(all[1].rejected?.reason == "geography: srsName EPSG:32188 is not WGS84 (EPSG:4326)")
        #expect(all[1].rejected?.externalID == "example.ca/2")
        #expect(all[2].rejected?.reason == "event/id occurs 2 times")
        #expect(all[2].rejected?.externalID == nil)
    }

    // MARK: Pagination links

    static let request = URL(string: "https://api.511.org/traffic/events?format=json&api_key=K%2Bey%2F1")!

    @Test("511.org's relative next_url resolves against the request and carries exactly the request's key")
    func nextPageSF511() throws {
        let next = try Open511Provider.nextPage(after: Self.sf511, contentType: "application/json", requestURL: Self.request)
        #expect(next?.absoluteString == "https://api.511.org/traffic/events?api_key=K%2Bey%2F1&request_limit=10&limit=20&offset=20")
    }

    @Test("next_url forms", arguments: [
        // (next_url JSON value, expected URL or nil)
        (#""/traffic/events?offset=20""#, "https://api.511.org/traffic/events?offset=20&api_key=K%2Bey%2F1"),
        (#""events?offset=20""#, "https://api.511.org/traffic/events?offset=20&api_key=K%2Bey%2F1"),
        (#""https://api.511.org/traffic/events?api_key=K+ey/1&offset=40&API_KEY=other""#,
         "https://api.511.org/traffic/events?api_key=K%2Bey%2F1&offset=40"),
        (#""https://elsewhere.example/traffic/events?offset=40""#, "https://elsewhere.example/traffic/events?offset=40"),
        (#""http://api.511.org/traffic/events?offset=40""#, "http://api.511.org/traffic/events?offset=40"),
        ("null", nil), (#""""#, nil),
    ] as [(String, String?)])
    func nextPageForms(link: String, expected: String?) throws {
        let file = try temporaryFile(#"{"events": [], "pagination": {"offset": 0, "next_url": \#(link)}}"#)
        let next = try Open511Provider.nextPage(after: file, contentType: nil, requestURL: Self.request)
        #expect(next?.absoluteString == expected)
    }

    @Test("the last page (no next_url), a number for next_url, and an XML pagination link")
    func nextPageOthers() throws {
        #expect(try Open511Provider.nextPage(after: Self.driveBC, contentType: nil, requestURL: Self.request) == nil)
        #expect(try Open511Provider.nextPage(after: Self.repentigny, contentType: nil, requestURL: Self.request) == nil)
        #expect(throws: FeedError.self) {
            try Open511Provider.nextPage(after: try temporaryFile(#"{"events": [], "pagination": {"next_url": 3}}"#), contentType: nil, requestURL: Self.request)
        }
        let xml = try Open511Provider.nextPage(after: TestPaths.fixture("open511/events_two_languages.xml"), contentType: "text/xml",
                                               requestURL: URL(string: "https://example.open511.ca/api/events?format=xml")!)
        #expect(xml?.absoluteString == "https://example.open511.ca/api/events?offset=3&format=xml")
    }

    @Test("a saved page that links to a next page, replayed with --complete, is incomplete: it may not clear")
    func savedPageIsIncomplete() async throws {
        let feed = try ProviderRegistry.fileFeed(definition: Self.source(), file: Self.sf511, complete: true)
        let verdict = try await feed.poll { stream in try stream.read { _ in } }
        #expect(verdict.incompleteBecause == ["the response links to a next page that was not read (a saved page of a paged answer), so it does not list every active incident"])
        let last = try ProviderRegistry.fileFeed(definition: Self.source(), file: Self.driveBC, complete: true)
        #expect(try await last.poll { stream in try stream.read { _ in } } == .complete)
    }

    // MARK: Configuration and requests

    @Test("the request: format and the key encoded once; the key optional; no baseURL is a configuration error")
    func request() throws {
        var source = SourceDefinition(name: "sf", provider: "open511", key: APIKey("K+ey/1="),
                                      baseURL: URL(string: "https://api.511.org/traffic/events?status=ACTIVE"))
        let withKey = try Open511Provider.router(for: source).asURLRequest()
        #expect(withKey.url?.absoluteString == "https://api.511.org/traffic/events?status=ACTIVE&format=json&api_key=K%2Bey%2F1%3D")
        #expect(withKey.value(forHTTPHeaderField: "Accept") == "application/json")
        source.key = nil
        source.options[Open511Provider.format] = "xml"
        let noKey = try Open511Provider.router(for: source).asURLRequest()
        #expect(noKey.url?.absoluteString == "https://api.511.org/traffic/events?status=ACTIVE&format=xml")
        source.baseURL = nil
        #expect(throws: FeedError.self) { try Open511Provider.router(for: source) }
        #expect(Open511Provider.timeZone.check("America/Vancouver") == nil)
        #expect(Open511Provider.timeZone.check("UTC") == nil)
        #expect(Open511Provider.timeZone.check("Mars/Olympus") != nil)
        #expect(Open511Provider.timeZone.check("PST") != nil)
    }
}
