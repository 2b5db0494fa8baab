import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport
import Testing

/// WZDx 3.0 and 3.1 (schemas/3.0 and 3.1 of github.com/usdot-jpo-ode/wzdx): flat properties
/// like 2.0, with `event_status`, restrictions as strings and lanes as `order`/`type`/`status`.
/// The fixtures are written after the specification's examples.
@Suite("WZDx 3.x")
struct WZDx3Tests {
    static func fixture(_ name: String) -> URL { TestPaths.fixture("wzdx/\(name)") }

    @Test("3.0: road_event_id, road_name and road_number, string restrictions, lanes, event_status cancelled and completed")
    func version30() throws {
        let result = try read(WZDxProvider.self, Self.fixture("v3_0_feed.json"))
        #expect(result.verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2021-03-02T15:00:00Z")))
        #expect(result.rejected.isEmpty, "\(result.rejected.map(\.reason))")
        #expect(result.incidents == [
            Incident(source: "test", externalID: "EX-0042", category: .roadwork, providerCategory: "work-zone/some-lanes-closed",
                     description: "Right lane closed for utility work", road: "Main Street; US-20",
                     location: "Elm St → Oak St, milepost 12.5 → 13.1", direction: "eastbound",
                     restriction: "some-lanes-closed; lanes: 1 left-lane open, 2 right-lane closed; no-trucks; reduced-width; speed limit 25",
                     coordinate: nil, startedAt: instant("2021-03-01T13:00:00Z"), expectedEndAt: instant("2021-03-20T22:00:00Z"))
                .withGeometry(.lineString([position(-89.40012, 43.07311), position(-89.39821, 43.07355), position(-89.39602, 43.07402)])),
            // Cancelled: over since the event was last updated, not at its planned end.
            Incident(source: "test", externalID: "EX-0043", category: .closure, providerCategory: "work-zone/all-lanes-closed",
                     description: "Overnight closure (called off)", road: "I-94", direction: "westbound",
                     restriction: "all-lanes-closed", startedAt: instant("2021-03-05T06:00:00Z"),
                     expectedEndAt: instant("2021-03-06T18:00:00Z"), endedAt: instant("2021-03-02T09:30:00Z"))
                .withGeometry(.multiPoint([position(-89.5101, 43.1002), position(-89.5003, 43.1010)])),
            // Completed: over at its end date.
            Incident(source: "test", externalID: "EX-0040", category: .roadwork, providerCategory: "detour/all-lanes-open",
                     road: "County Road K", direction: "northbound", restriction: "all-lanes-open",
                     startedAt: instant("2021-02-01T07:00:00Z"), expectedEndAt: instant("2021-02-28T17:00:00Z"),
                     endedAt: instant("2021-02-28T17:00:00Z"))
                .withGeometry(.lineString([position(-89.6001, 43.2001), position(-89.6002, 43.2101)])),
        ])
    }

    @Test("3.1: the feature's id over road_event_id, road_names over road_name, verified end, cancelled")
    func version31() throws {
        let result = try read(WZDxProvider.self, Self.fixture("v3_1_feed.json"))
        #expect(result.verdict == ResponseVerdict(publishedAt: UTCInstant(rfc3339: "2021-09-14T18:00:00Z")))
        #expect(result.rejected.isEmpty, "\(result.rejected.map(\.reason))")
        #expect(result.incidents == [
            Incident(source: "test", externalID: "f3a9c2e0-1d8b-4b8e-9a57-2f0c5b1a7e11", category: .roadwork,
                     providerCategory: "work-zone/some-lanes-closed", description: "Two right lanes closed overnight",
                     road: "Harbor Freeway; I-110", location: "milepost 20.4 → 21.0", direction: "southbound",
                     restriction: "some-lanes-closed; lanes: 1 left-lane open, 2 middle-lane closed, 3 right-lane closed; local-access-only; hov-2; speed limit 45",
                     startedAt: instant("2021-09-14T04:00:00Z"), expectedEndAt: instant("2021-09-14T12:00:00Z"),
                     endedAt: instant("2021-09-14T12:00:00Z"))
                .withGeometry(.lineString([position(-118.2781, 33.9902), position(-118.2779, 33.9801)])),
            Incident(source: "test", externalID: "7d1e4b2a-55c0-4f7e-8d0e-0e3b6a9f4c22", category: .roadwork,
                     providerCategory: "work-zone/alternating-one-way", road: "Figueroa St", direction: "northbound",
                     restriction: "alternating-one-way; no-parking", startedAt: instant("2021-09-20T09:00:00Z"),
                     expectedEndAt: instant("2021-09-22T17:00:00Z"), endedAt: instant("2021-09-13T16:20:00Z"))
                .withGeometry(.lineString([position(-118.2601, 34.0501), position(-118.2598, 34.0552)])),
        ])
    }

    @Test("a restriction that is neither a string nor an object, and a cancelled event with no time, are set aside with their ids")
    func badVariants() throws {
        let file = try temporaryFile("""
            {"road_event_feed_info":{"update_date":"2021-01-01T00:00:00Z","version":"3.0"},"type":"FeatureCollection","features":[
            {"type":"Feature","properties":{"road_event_id":"r-1","restrictions":[12],"start_date":"2021-01-01T00:00:00Z"},"geometry":null},
            {"type":"Feature","properties":{"road_event_id":"r-2","event_status":"cancelled"},"geometry":null}]}
            """)
        let result = try read(WZDxProvider.self, file)
        #expect(result.incidents.isEmpty)
        #expect(result.rejected.map(\.externalID) == ["r-1", "r-2"])
        #expect(result.rejected.map(\.reason) == [
            "properties.restrictions[0] is a number, not a restriction",
            "the event is cancelled but has no end_date, update_date or start_date to date its end",
        ])
    }
}

extension Incident {
    /// The incident with `geometry` set as the mappers set it (its coordinate too).
    func withGeometry(_ geometry: Geometry) -> Incident {
        var copy = self
        copy.setGeometry(geometry)
        return copy
    }
}
