import Foundation
import IncidentCore
import TestSupport
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

@Suite("The box around a --near circle")
struct NearBoxTests {
    /// Every point within the radius lies in the box: 20,000 seeded random centres, radii from
    /// 1 m to 25,000 km, and points at random bearings and distances inside the radius.
    @Test("holds every point within the radius, near the poles, across the antimeridian and around the earth")
    func holdsEveryPointWithin() throws {
        var random = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let center = try #require(Coordinate(latitude: random.next(in: -89.999...89.999), longitude: random.next(in: -180...180)))
            let meters = pow(10, random.next(in: 0...7.4))
            let box = BoundingBox.around(center, meters: meters)
            let point = Self.destination(from: center, meters: random.next(in: 0...1) * meters, bearing: random.next(in: 0...(2 * .pi)))
            guard point.distance(to: center) <= meters else { continue }
            #expect(box.contains(point), "\(center) \(meters) m: \(point) outside \(box)")
        }
    }

    @Test("examples: across the antimeridian, over a pole, around the earth, and a small circle stays small")
    func examples() throws {
        let fiji = try #require(Coordinate(latitude: -17, longitude: 179.97))
        let across = BoundingBox.around(fiji, meters: 20_000)
        #expect(across.minLongitude == -180 && across.maxLongitude == 180)
        #expect(across.contains(try #require(Coordinate(latitude: -17, longitude: -179.97))))
        let seoul = try #require(Coordinate(latitude: 37.5, longitude: 127))
        let denver = try #require(Coordinate(latitude: 39.52, longitude: -107.84))
        #expect(BoundingBox.around(seoul, meters: 10_000_000).contains(denver))  // 9,785 km away
        let whole = BoundingBox.around(seoul, meters: 1e12)
        #expect((whole.minLongitude, whole.minLatitude, whole.maxLongitude, whole.maxLatitude) == (-180, -90, 180, 90))
        let polar = BoundingBox.around(try #require(Coordinate(latitude: 89, longitude: 0)), meters: 300_000)
        #expect(polar.maxLatitude == 90 && polar.minLongitude == -180)
        let small = BoundingBox.around(seoul, meters: 5_000)
        #expect(abs(small.maxLatitude - 37.5 - 0.044966) < 0.000_01)
        #expect(abs(small.maxLongitude - 127 - 0.056678) < 0.000_01)
    }

    /// The point `meters` from `start` at `bearing` (radians) on the same sphere.
    static func destination(from start: Coordinate, meters: Double, bearing: Double) -> Coordinate {
        let δ = meters / Coordinate.earthRadiusMeters, φ1 = start.latitude * .pi / 180, λ1 = start.longitude * .pi / 180
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(bearing))
        let λ2 = λ1 + atan2(sin(bearing) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        var longitude = (λ2 * 180 / .pi).truncatingRemainder(dividingBy: 360)
        if longitude > 180 { longitude -= 360 } else if longitude < -180 { longitude += 360 }
        return Coordinate(latitude: min(90, max(-90, φ2 * 180 / .pi)), longitude: longitude)!
    }
}
