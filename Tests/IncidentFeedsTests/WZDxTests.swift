import Foundation
import IncidentCore
@testable import IncidentFeeds
import IncidentNetworking
import TestSupport
import Testing

@Suite("WZDx")
struct WZDxTests {
    static func feed(_ name: String) -> URL { TestPaths.sharedFeed("wzdx/\(name)") }
    static func instant(_ text: String) -> UTCInstant? { UTCInstant(rfc3339: text) }

    @Test("spec example, scenario 2 (lane shift): every field")
    func scenario2() throws {
        let (all, verdict) = try records(WZDxProvider.self, Self.feed("wzdx_v4_scenario2_laneshift_linestring.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2020-06-18T15:00:00Z")))
        try #require(all.count == 1)
        var incident = try #require(all[0].incident)
        let geometry = try #require(incident.geometry)
        #expect(geometry.typeName == "LineString")
        #expect(geometry.positions.count == 16)
        #expect(geometry.positions.first == position(-93.65271494099994, 41.65020083600007))
        #expect(incident.coordinate == geometry.representativePoint)
        incident.geometry = nil
        incident.coordinate = nil
        #expect(incident == Incident(
            source: "test", externalID: "85912735-7a36-45f5-b644-41b0203ae400", category: .roadwork,
            providerCategory: "work-zone/all-lanes-open-shift-right", description: "Single-direction work zone with lane shift",
            road: "I-80; I-35", location: "milepost 133.967 → 133.112", direction: "westbound",
            restriction: "all-lanes-open-shift-right; lanes: 1 shoulder closed, 2 general shift-right, 3 general shift-right, 4 general shift-right, 5 shoulder closed; speed limit 88.5 km/h",
            startedAt: Self.instant("2010-01-01T05:57:36Z"), expectedEndAt: Self.instant("2010-01-05T23:00:00Z")))
        try Golden.check(all, "wzdx_v4_scenario2_laneshift_linestring")
    }

    @Test("spec example, scenario 6 (multi-lane closure): restrictions and lanes in the restriction text")
    func scenario6() throws {
        let (all, verdict) = try records(WZDxProvider.self, Self.feed("wzdx_v4_scenario6_multi_lane_closure.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2020-06-18T15:00:00Z")))
        let incident = try #require(all.first?.incident)
        #expect(incident.externalID == "8fed746d-8f4f-4e0c-8d9b-fa4db7c3c2d8")
        #expect(incident.category == .roadwork)
        #expect(incident.providerCategory == "work-zone/some-lanes-closed")
        #expect(incident.restriction == "some-lanes-closed; lanes: 1 shoulder closed, 2 general closed, 3 general closed, 4 general open, 5 shoulder open; reduced-width 16 feet; reduced-weight 156000 pounds; speed limit 88.5 km/h")
        #expect(incident.startedAt?.rfc3339 == "2010-01-02T08:00:00Z")
        #expect(incident.expectedEndAt?.rfc3339 == "2010-03-31T23:00:00Z")
        #expect(incident.endedAt == nil)
        #expect(incident.geometry?.positions.first == position(-93.53729725067586, 41.65790432034191))
        #expect(incident.geometry?.positions.count == 5)
        #expect(incident.description == "Multi-lane closure example")
        try Golden.check(all, "wzdx_v4_scenario6_multi_lane_closure")
    }

    @Test("WZDx 2.0 (Caltrans): road_event_feed_info, road_event_id, road_name, lane_status, accuracy flags")
    func version2() throws {
        let (all, verdict) = try records(WZDxProvider.self, Self.feed("wzdx_v2_caltrans_example.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2016-04-19T14:41:04Z")))
        try #require(all.count == 1)
        let incident = try #require(all[0].incident)
        #expect(incident.externalID == "C299CA-0004-2016-04-12-00:01:00")
        #expect(incident.category == .roadwork)
        #expect(incident.providerCategory == "some-lanes-closed")
        #expect(incident.road == "CA-299")
        #expect(incident.direction == "eastbound")
        #expect(incident.location == "milepost 114.190 → 121.633")
        #expect(incident.restriction == "some-lanes-closed; lanes: 1 left-shoulder closed, 2 left-lane closed, 3 right-lane open, 4 right-shoulder open")
        #expect(incident.startedAt?.rfc3339 == "2016-11-03T19:37:00Z")
        #expect(incident.expectedEndAt?.rfc3339 == "2016-11-04T05:30:00Z")
        #expect(incident.endedAt == nil)  // end_date_accuracy "estimated"
        #expect(incident.geometry?.typeName == "LineString")
        #expect(incident.geometry?.positions.count == 485)
        #expect(incident.geometry?.positions.first == position(-122.73389875888823, 40.63513265927444))
        #expect(incident.description == "One lane closed on Route 299 East near Lewiston to French Gulch (0.6 mi west of Crystal Creek Rd) for approximately 30 days.")
        try Golden.check(all, "wzdx_v2_caltrans_example")
    }

    @Test("CDOT's production feed of 2023-05-22: 87 LineString work zones")
    func cdot2023() throws {
        let (all, verdict) = try records(WZDxProvider.self, Self.feed("wzdx_v4_2_cdot_production_20230522_linestring.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2023-05-22T23:40:06Z")))
        let incidents = all.compactMap(\.incident)
        #expect(incidents.count == 87)
        #expect(Set(incidents.map(\.externalID)).count == 87)
        #expect(incidents.allSatisfy { $0.geometry?.typeName == "LineString" })
        #expect(incidents.filter { $0.category == .closure }.count == 5)
        #expect(incidents.filter { $0.category == .roadwork }.count == 82)
        #expect(Dictionary(grouping: incidents, by: { $0.providerCategory ?? "-" }).mapValues(\.count)
                == ["work-zone/some-lanes-closed": 60, "work-zone/all-lanes-open": 22, "work-zone/all-lanes-closed": 5])
        let first = incidents[0]
        #expect(first.externalID == "098bd70a-4e9e-5a78-8bb5-c62cbabd485a")
        #expect(first.road == "I-70")
        #expect(first.direction == "eastbound")
        #expect(first.location == "Exit 87: Rifle → Exit 90: CO 13; Rifle (Rifle), milepost 87.0 → 89.0")
        #expect(first.restriction == "some-lanes-closed; lanes: 1 general open, 2 general closed")
        #expect(first.startedAt?.rfc3339 == "2023-05-22T06:00:00Z")
        #expect(first.expectedEndAt?.rfc3339 == "2023-05-23T05:59:00Z")
        #expect(first.geometry?.positions.first == position(-107.83899603099997, 39.52052304500006))
        #expect(first.description?.hasPrefix("Between Exit 87: Rifle and Exit 90: CO 13; Rifle (Rifle) from Mile Point 87 to Mile Point 89.") == true)
        try Golden.check(all, "wzdx_v4_2_cdot_production_20230522_linestring")
    }

    @Test("CDOT's production feed of 2025-08-13: 279 work zones, 83 of them MultiPoint (start and end)")
    func cdot2025() throws {
        let (all, verdict) = try records(WZDxProvider.self, Self.feed("wzdx_v4_2_cdot_production_20250813_linestring_multipoint.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2025-08-13T18:24:07Z")))
        let incidents = all.compactMap(\.incident)
        #expect(incidents.count == 279)
        #expect(incidents.filter { $0.geometry?.typeName == "MultiPoint" }.count == 83)
        #expect(incidents.filter { $0.geometry?.typeName == "LineString" }.count == 196)
        #expect(incidents.filter { $0.providerCategory == "work-zone/alternating-one-way" }.count == 152)
        #expect(incidents.filter { $0.category == .closure }.count == 3)
        let first = incidents[0]
        #expect(first.externalID == "d1743e64-f414-5630-b013-ba4c9782a8e4")
        #expect(first.geometry == .multiPoint([position(-102.802362, 40.824391), position(-103.078137, 40.695555)]))
        #expect(first.coordinate == position(-102.802362, 40.824391))  // a MultiPoint stands for its first point: the start
        #expect(first.startedAt?.rfc3339 == "2025-08-11T13:00:00Z")
        #expect(first.expectedEndAt?.rfc3339 == "2025-08-15T23:00:00Z")
        #expect(first.location == "Red Lion Road → US 6, milepost 149.0 → 132.0")
        try Golden.check(all, "wzdx_v4_2_cdot_production_20250813_linestring_multipoint")
    }

    @Test("bad features are set aside with their reason; the rest is stored; the feed stays complete")
    func variants() throws {
        let (all, verdict) = try records(WZDxProvider.self, TestPaths.fixture("wzdx/features_variants.json"))
        #expect(verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2024-06-01T12:00:00Z")))
        try #require(all.count == 10)
        #expect(all[0].incident == {
            var i = Incident(source: "test", externalID: "wz-1", category: .closure, providerCategory: "detour/all-lanes-closed",
                             description: "Detour around the closed bridge", road: "US-6; Main St", location: "1st St, milepost 10 → 12.5",
                             direction: "northbound", restriction: "all-lanes-closed",
                             startedAt: Self.instant("2024-06-01T12:00:00Z"), expectedEndAt: Self.instant("2024-06-03T18:00:00Z"),
                             endedAt: Self.instant("2024-06-03T18:00:00Z"))
            i.setGeometry(.multiPoint([position(-104.99, 39.74), position(-104.98, 39.75)]))
            return i
        }())
        #expect(all[1].rejected?.externalID == "wz-2")
        #expect(all[1].rejected?.reason == "key \"start_date\" occurs 2 times in properties")
        #expect(all[1].rejected?.position == "features[1]")
        #expect(all[2].rejected?.externalID == nil)
        #expect(all[2].rejected?.reason == "the feature has no id")
        #expect(all[3].rejected?.externalID == "wz-4")
        #expect(all[3].rejected?.reason == "start_date '2024-13-01T00:00:00Z' is not an RFC 3339 time")
        #expect(all[3].rejected?.excerpt == "id=wz-4; event_type=work-zone; start_date=2024-13-01T00:00:00Z; road_names=I-70")
        let flagging = try #require(all[4].incident)
        #expect(flagging.road == "CO-9")
        #expect(flagging.category == .roadwork)
        #expect(flagging.providerCategory == "work-zone/flagging")
        #expect(flagging.coordinate == nil)
        #expect(flagging.endedAt == nil)
        #expect(all[5].rejected?.reason == "properties.lanes is an object, not a list")
        #expect(all[6].rejected?.reason == "the feature is a text, not an object")
        #expect(all[7].incident?.category == .other)
        #expect(all[7].incident?.providerCategory == "restriction")
        #expect(all[7].incident?.coordinate == position(-105.5, 39.9))
        #expect(all[8].rejected?.reason == "the feature has no properties object")
        #expect(all[8].rejected?.externalID == nil)  // read before its id: nothing was read
        #expect(all[9].rejected?.externalID == "10")
        #expect(all[9].rejected?.reason == "geometry: the LineString has too few positions (a line needs two)")
    }

    @Test("an empty features list with feed_info is a complete answer with no work zone")
    func emptyFeed() throws {
        let (all, verdict) = try records(WZDxProvider.self, try temporaryFile(#"{"feed_info": {"publisher": "X", "version": "4.2"}, "type": "FeatureCollection", "features": []}"#))
        #expect(all.isEmpty)
        #expect(verdict == .complete)
    }

    @Test("the publication time of each WZDx version, after the features too; one that is not a time is a warning", arguments: [
        (#"{"type": "FeatureCollection", "features": [], "feed_info": {"update_date": "2024-05-01T10:05:00Z"}}"#, "2024-05-01T10:05:00Z", nil),
        (#"{"road_event_feed_info": {"update_date": "2021-02-03T04:05:06-05:00", "version": "3.1"}, "type": "FeatureCollection", "features": []}"#,
         "2021-02-03T09:05:06Z", nil),
        (#"{"road_event_feed_info": {"feed_update_date": "2016-04-19T14:41:04Z"}, "type": "FeatureCollection", "features": []}"#, "2016-04-19T14:41:04Z", nil),
        (#"{"feed_info": {"update_date": "yesterday"}, "type": "FeatureCollection", "features": []}"#, nil,
         #"feed_info.update_date "yesterday" is not an ISO 8601 time, so this feed's age cannot be checked"#),
        (#"{"feed_info": {"publisher": "X"}, "type": "FeatureCollection", "features": []}"#, nil, nil),
    ] as [(String, String?, String?)])
    func publicationTime(body: String, published: String?, warning: String?) throws {
        let (_, verdict) = try records(WZDxProvider.self, try temporaryFile(body))
        #expect(verdict.publishedAt == published.flatMap { UTCInstant(rfc3339: $0) })
        #expect(verdict.warnings == (warning.map { [$0] } ?? []))
        #expect(verdict.isComplete)
    }

    @Test("features without feed_info are stored but cannot clear")
    func noFeedInfo() throws {
        let (all, verdict) = try records(WZDxProvider.self, try temporaryFile(#"{"type": "FeatureCollection", "features": [{"id": "a", "properties": {"core_details": {"event_type": "work-zone"}}, "geometry": null}]}"#))
        #expect(all.count == 1)
        #expect(verdict.incompleteBecause == ["the response does not say it succeeded (no feed_info), so it may not list every active incident"])
    }

    @Test("a document without features, or of another GeoJSON type, is refused", arguments: [
        #"{"feed_info": {"publisher": "X"}, "type": "FeatureCollection"}"#, #"{"message": "Forbidden"}"#, "{}", "[]",
        #"{"type": "Feature", "feed_info": {}, "features": []}"#,
    ])
    func notAFeed(body: String) throws {
        let (error, delivered) = feedError(WZDxProvider.self, try temporaryFile(body))
        #expect(error?.kind == .unexpectedResponse, "\(body)")
        #expect(delivered == 0)
    }

    /// A list that is not an array (null, an object, a text, a number) says nothing about which
    /// work zones are active: refused, where `[]` (above) is a complete empty answer.
    @Test("features that is not a list is refused: it never clears the stored work zones", arguments: ["null", "{}", #"{"id": "a"}"#, #""""#, "0", "true"])
    func featuresNotAList(value: String) throws {
        let body = #"{"feed_info": {"publisher": "X", "version": "4.2"}, "type": "FeatureCollection", "features": "# + value + "}"
        let (error, delivered) = feedError(WZDxProvider.self, try temporaryFile(body))
        #expect(error?.kind == .unexpectedResponse, "\(body)")
        #expect(error?.message == "the JSON document's features is not a list (RFC 7946 §3.3 requires an array), so it cannot say there are no work zones; nothing was stored or cleared")
        // A scalar or an object is read as one record before the end refuses the document;
        // the poll is one transaction, so the store keeps none of it (IngestTests).
    }

    @Test("XML, HTML or a truncated document is refused with its cause")
    func otherBodies() throws {
        #expect(feedError(WZDxProvider.self, try temporaryFile("<html><body>Forbidden</body></html>")).error?.kind == .unexpectedResponse)
        let truncated = feedError(WZDxProvider.self, try temporaryFile(#"{"feed_info": {}, "features": [{"id": "a""#))
        #expect(truncated.error?.kind == .malformedBody)
    }

    @Test("the request: the key under the source's keyParameter, encoded once; no key, no parameter")
    func request() throws {
        var source = SourceDefinition(name: "cdot", provider: "wzdx", key: APIKey("K+ey/1="), baseURL: URL(string: "https://data.cotrip.org/api/v1/wzdx"))
        #expect(try WZDxProvider.router(for: source).asURLRequest().url?.absoluteString == "https://data.cotrip.org/api/v1/wzdx?apiKey=K%2Bey%2F1%3D")
        source.options[WZDxProvider.keyParameter] = "api_key"
        #expect(try WZDxProvider.router(for: source).asURLRequest().url?.absoluteString == "https://data.cotrip.org/api/v1/wzdx?api_key=K%2Bey%2F1%3D")
        source.key = nil
        #expect(try WZDxProvider.router(for: source).asURLRequest().url?.absoluteString == "https://data.cotrip.org/api/v1/wzdx")
        source.baseURL = nil
        #expect(throws: FeedError.self) { try WZDxProvider.router(for: source) }
        ProviderRegistry.registerKeyParameterNames()
        #expect(Redaction.redact("https://x/wzdx?key=secret1&a=1&apiKey=secret2") == "https://x/wzdx?key=REDACTED&a=1&apiKey=REDACTED")
    }
}

/// The two providers polled through `StubHTTPClient` (their sample responses, no sockets), with
/// the `IngestIncidents` use case over a store double.
@Suite("Open511 and WZDx through the stub client")
struct InternationalStubbedPollTests {
    @Test("each provider's sample response polls into a mapped incident", arguments: [
        ("open511", "511.org/1", IncidentCategory.breakdown, "2024-01-01T00:00:00Z"),
        ("wzdx", "wz-1", IncidentCategory.roadwork, "2024-01-01T00:00:00Z"),
    ])
    func samples(provider: String, id: String, category: IncidentCategory, start: String) async throws {
        var source = SourceDefinition(name: "\(provider)-test", provider: provider, baseURL: URL(string: "https://example.org/feed"))
        source.key = APIKey("k+1/2=")
        let feed = try ProviderRegistry.feed(for: source, client: StubHTTPClient())
        let store = StubbedPollTests.RecordingStore()
        let run = await IngestIncidents(store: store, clock: .fixed(StubbedPollTests.now), describe: { String(describing: $0) })(feed)
        #expect(run.status == .succeeded)
        let incident = try #require(store.stored.first)
        #expect(store.stored.count == 1)
        #expect(incident.externalID == id)
        #expect(incident.source == "\(provider)-test")
        #expect(incident.category == category)
        #expect(incident.startedAt?.rfc3339 == start)
    }
}
