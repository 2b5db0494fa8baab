import Foundation
import IncidentCore
import Testing

private func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon)! }

@Suite("Geometry (RFC 7946 shapes, WGS84)")
struct GeometryTests {
    static let line = Geometry.lineString([c(39.5, -105.0), c(39.5, -104.9), c(39.6, -104.9)])

    @Test("GeoJSON text round-trips exactly", arguments: [
        Geometry.point(c(37.52739696162846, 127.08203126)),
        Geometry.multiPoint([c(39.73, -104.99), c(39.74, -104.98)]),
        line,
        Geometry.multiLineString([[c(60.1, 24.9), c(60.2, 25.0)], [c(60.3, 25.1), c(60.31, 25.11), c(60.4, 25.2)]]),
    ])
    func roundTrip(geometry: Geometry) throws {
        #expect(Geometry(geoJSON: geometry.geoJSON) == geometry)
    }

    @Test("the GeoJSON text is compact RFC 7946 with longitude first")
    func text() {
        #expect(Self.line.geoJSON == #"{"type":"LineString","coordinates":[[-105.0,39.5],[-104.9,39.5],[-104.9,39.6]]}"#)
    }

    @Test("altitudes are ignored; other types, bad ranges and short lines are refused", arguments: [
        (#"{"type":"Point","coordinates":[24.9,60.1,12.5]}"#, true),
        (#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#, false),
        (#"{"type":"Point","coordinates":[200,10]}"#, false),
        (#"{"type":"LineString","coordinates":[[1,1]]}"#, false),
        (#"{"type":"MultiPoint","coordinates":[]}"#, false),
        (#"{"type":"LineString","coordinates":"nope"}"#, false),
        ("not json", false),
    ])
    func decodeVariants(text: String, valid: Bool) {
        #expect((Geometry(geoJSON: text) != nil) == valid)
    }

    @Test("bounding box, representative point and distance to a line")
    func measures() {
        let box = Self.line.boundingBox
        #expect([box.minLongitude, box.minLatitude, box.maxLongitude, box.maxLatitude] == [-105.0, 39.5, -104.9, 39.6])
        let mid = Self.line.representativePoint
        // The line is about 8.6 km east then 11.1 km north: halfway lies on the second segment.
        #expect(abs(mid.longitude - -104.9) < 1e-9)
        #expect(mid.latitude > 39.5 && mid.latitude < 39.53)
        // A point 1 km north of the first segment's middle is 1 km from the line, though 4+ km
        // from every vertex.
        let north = c(39.5 + 1000 / (6_371_008.8 * .pi / 180), -104.95)
        #expect(abs(Self.line.distance(to: north) - 1000) < 5)
        #expect(Geometry.multiPoint([c(39.5, -105.0), c(39.6, -104.9)]).representativePoint == c(39.5, -105.0))
    }

    @Test("an incident keeps a Point as its coordinate only, and a line as geometry plus its representative point")
    func incidentGeometry() {
        var incident = Incident(source: "wzdx", externalID: "1", category: .roadwork)
        incident.setGeometry(.point(c(37.0, 127.0)))
        #expect(incident.geometry == nil)
        #expect(incident.coordinate == c(37.0, 127.0))
        incident.setGeometry(Self.line)
        #expect(incident.geometry == Self.line)
        #expect(incident.coordinate == Self.line.representativePoint)
        #expect(incident.extent == Self.line.boundingBox)
    }
}
