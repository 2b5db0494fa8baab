import Foundation
import IncidentCore
@testable import IncidentSQLite
import Testing

private func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon)! }

/// Issue 16, point 3: geometries as the feed gives them, and the spatial filters on their extent.
@Suite("Geometry and canonical roads in the store")
struct GeometryStorageTests {
    /// A work zone along a road east of Denver, about 8.6 km long.
    static let zone = Geometry.lineString([c(39.70, -104.90), c(39.70, -104.85), c(39.70, -104.80)])

    static func workZone(_ id: String, _ geometry: Geometry) -> Incident {
        var incident = Incident(source: "wzdx", externalID: id, category: .roadwork, road: "I-70")
        incident.setGeometry(geometry)
        return incident
    }

    @Test("a line geometry is stored, read back exactly, revised when it changes, and hashed")
    func roundTrip() throws {
        let store = try memoryStore()
        try poll(store, [.incident(Self.workZone("A", Self.zone))], at: t0, source: "wzdx")
        let stored = try #require(try allRows(store).first)
        #expect(stored.incident.geometry == Self.zone)
        #expect(stored.incident.coordinate == Self.zone.representativePoint)
        let moved = Geometry.lineString([c(39.70, -104.90), c(39.71, -104.80)])
        try poll(store, [.incident(Self.workZone("A", moved))], at: t1, source: "wzdx")
        let history = try #require(try store.history(ofIncident: stored.id))
        #expect(history.current.incident.geometry == moved)
        #expect(history.revisions.map(\.incident.geometry) == [Self.zone])
    }

    @Test("--bbox matches a line by its extent; --near by the distance to the line, not to its middle")
    func spatialFilters() throws {
        let store = try memoryStore()
        try poll(store, [.incident(Self.workZone("line", Self.zone)),
                         .incident(Self.workZone("point", .point(c(39.60, -104.90))))], at: t0, source: "wzdx")
        // A box around the line's east end only: it overlaps the line's extent.
        var query = IncidentQuery(now: t1)
        query.boundingBox = BoundingBox(minLongitude: -104.81, minLatitude: 39.69, maxLongitude: -104.79, maxLatitude: 39.71)
        #expect(try store.incidents(matching: query).map(\.incident.externalID) == ["line"])
        // 1 km north of the line's west end: 1 km from the line, about 4.4 km from its middle.
        var near = IncidentQuery(now: t1, order: .distance)
        near.near = c(39.70 + 1000 / (6_371_008.8 * .pi / 180), -104.90)
        near.radiusMeters = 1_500
        #expect(try store.incidents(matching: near).map(\.incident.externalID) == ["line"])
        near.radiusMeters = 15_000
        #expect(try store.incidents(matching: near).map(\.incident.externalID) == ["line", "point"])
        near.limit = 1
        #expect(try store.incidents(matching: near).map(\.incident.externalID) == ["line"])
    }

    @Test("--road finds a road by its canonical name whatever each provider calls it")
    func canonicalRoad() throws {
        let store = try memoryStore()
        var gits = incident("G")
        gits.road = "경부고속도로"
        gits.roadRef = "고속국도1호선"
        var its = incident("I", source: "its")
        its.road = "경부선"
        its.roadRef = "고속국도1호선"
        var national = incident("N", source: "its")
        national.road = "6"
        national.roadRef = "국도6호선"
        try poll(store, [.incident(gits)], at: t0)
        try poll(store, [.incident(its), .incident(national)], at: t0, source: "its")
        func road(_ text: String, _ reference: String? = nil) throws -> [String] {
            var query = IncidentQuery(now: t1, order: .source)
            query.roadContains = text
            query.roadReference = reference
            return try store.incidents(matching: query).map(\.incident.externalID)
        }
        #expect(try road("경부고속도로", "고속국도1호선") == ["G", "I"])
        #expect(try road("경부") == ["G", "I"])
        #expect(try road("국도6") == ["N"])
        #expect(try road("6호선") == ["N"])
        #expect(try road("강변") == [])
    }
}
