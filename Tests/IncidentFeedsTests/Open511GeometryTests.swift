import Foundation
import IncidentCore
@testable import IncidentFeeds
import TestSupport
import Testing

/// Open511 geographies as real servers send them: a GeoJSON GeometryCollection (RFC 7946
/// §3.1.8) in JSON, GML 3 `gml:pos`/`gml:posList` (and GML 3.2) in XML.
@Suite("Open511 geometry")
struct Open511GeometryTests {
    static func event(_ id: String, geography: String) -> String {
        #"{"id":"\#(id)","status":"ACTIVE","event_type":"INCIDENT","headline":"INCIDENT","severity":"MINOR","created":"2023-06-01T10:00:00-07:00","geography":\#(geography)}"#
    }

    @Test("a GeometryCollection is stored: points and lines together, points alone, one member, nested; an empty one is set aside")
    func geometryCollections() throws {
        let events = [
            Self.event("c/mixed", geography: #"{"type":"GeometryCollection","geometries":[{"type":"LineString","coordinates":[[-123.1,49.2],[-123.2,49.3]]},{"type":"Point","coordinates":[-123.05,49.25]}]}"#),
            Self.event("c/points", geography: #"{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[-123.1,49.2]},{"type":"MultiPoint","coordinates":[[-123.3,49.4]]}]}"#),
            Self.event("c/one", geography: #"{"type":"GeometryCollection","geometries":[{"type":"LineString","coordinates":[[-123.1,49.2],[-123.2,49.3]]}]}"#),
            Self.event("c/nested", geography: #"{"type":"GeometryCollection","geometries":[{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[-123.1,49.2]}]},{"type":"LineString","coordinates":[[-123.4,49.5],[-123.5,49.6]]}]}"#),
            Self.event("c/empty", geography: #"{"type":"GeometryCollection","geometries":[]}"#),
        ]
        let file = try temporaryFile(#"{"events":["# + events.joined(separator: ",") + #"],"pagination":{"offset":0},"meta":{"version":"v1"}}"#)
        let result = try read(Open511Provider.self, file)
        #expect(result.incidents.map(\.externalID) == ["c/mixed", "c/points", "c/one", "c/nested"])
        #expect(result.incidents.map(\.geometry) == [
            .multiLineString([[position(-123.1, 49.2), position(-123.2, 49.3)], [position(-123.05, 49.25), position(-123.05, 49.25)]]),
            .multiPoint([position(-123.1, 49.2), position(-123.3, 49.4)]),
            .lineString([position(-123.1, 49.2), position(-123.2, 49.3)]),
            .multiLineString([[position(-123.4, 49.5), position(-123.5, 49.6)], [position(-123.1, 49.2), position(-123.1, 49.2)]]),
        ])
        #expect(result.rejected.map(\.externalID) == ["c/empty"])
        #expect(result.rejected.map(\.reason) == ["geography: the GeometryCollection is empty"])
    }

    @Test("GML 3: gml:pos and gml:posList, latitude first under the EPSG URN, GML 3.2 MultiCurve with altitudes, polygon outline; a bad posList is set aside")
    func gml3() throws {
        let result = try read(Open511Provider.self, TestPaths.fixture("open511/events_gml3.xml"))
        #expect(result.incidents.map(\.externalID) == ["gml3.example/1", "gml3.example/2", "gml3.example/3", "gml3.example/4"])
        #expect(result.incidents.map(\.geometry) == [
            nil,  // a point is the incident's coordinate
            .lineString([position(-73.6001, 45.5001), position(-73.6012, 45.5011), position(-73.6025, 45.5020)]),
            .multiLineString([[position(-73.70, 45.40), position(-73.71, 45.41)], [position(-73.72, 45.42), position(-73.73, 45.43)]]),
            .lineString([position(-73.1, 45.1), position(-73.2, 45.1), position(-73.2, 45.2), position(-73.1, 45.1)]),
        ])
        #expect(result.incidents.first?.coordinate == position(-73.5512, 45.5088))
        #expect(result.rejected.map(\.externalID) == ["gml3.example/5"])
        #expect(result.rejected.map(\.reason) == ["geography: gml:posList holds 3 numbers, not a multiple of its dimension 2"])
    }
}
