import Foundation

/// An incident's geometry as the feed gives it: WGS84 decimal degrees, RFC 7946 shapes
/// (GeoJSON, whose positions are longitude, latitude).
///
/// Korean feeds give a point; WZDx work zones are LineStrings or MultiPoints (start and end);
/// DATEX II linear locations and Open511 roads are LineStrings. Queries use its
/// ``boundingBox`` (the spatial index) and ``distance(to:)`` (`--near`); lists show its
/// ``representativePoint``.
public enum Geometry: Hashable, Sendable {
    case point(Coordinate)
    case multiPoint([Coordinate])
    case lineString([Coordinate])
    case multiLineString([[Coordinate]])

    /// The RFC 7946 type name.
    public var typeName: String {
        switch self {
        case .point: "Point"
        case .multiPoint: "MultiPoint"
        case .lineString: "LineString"
        case .multiLineString: "MultiLineString"
        }
    }

    /// Every position, in order.
    public var positions: [Coordinate] {
        switch self {
        case .point(let p): [p]
        case .multiPoint(let ps), .lineString(let ps): ps
        case .multiLineString(let lines): lines.flatMap { $0 }
        }
    }

    /// Nil unless every part has the positions its type needs (a line at least two).
    public init?(validating geometry: Geometry) {
        switch geometry {
        case .point: break
        case .multiPoint(let ps): guard !ps.isEmpty else { return nil }
        case .lineString(let ps): guard ps.count >= 2 else { return nil }
        case .multiLineString(let lines): guard !lines.isEmpty, lines.allSatisfy({ $0.count >= 2 }) else { return nil }
        }
        self = geometry
    }

    /// The smallest longitude/latitude box holding every position (a point's box has no area).
    /// Geometries that cross the antimeridian are not split: their box spans the long way.
    public var boundingBox: BoundingBox {
        let ps = positions
        let lons = ps.map(\.longitude), lats = ps.map(\.latitude)
        return BoundingBox(extent: (lons.min() ?? 0, lats.min() ?? 0, lons.max() ?? 0, lats.max() ?? 0))
    }

    /// One position that stands for the geometry in tables and markers: the point itself; the
    /// first of a MultiPoint (WZDx: the start of the work zone); for lines, the point halfway
    /// along (of the longest part of a MultiLineString).
    public var representativePoint: Coordinate {
        switch self {
        case .point(let p): return p
        case .multiPoint(let ps): return ps[0]
        case .lineString(let ps): return Self.halfway(ps)
        case .multiLineString(let lines):
            return Self.halfway(lines.max { Self.length($0) < Self.length($1) } ?? lines[0])
        }
    }

    /// Distance in meters from `point` to the nearest part of the geometry: to the nearest
    /// position for points, to the nearest segment for lines (segments measured in a local
    /// equirectangular projection around `point`, within 0.5 % for segments of tens of km).
    public func distance(to point: Coordinate) -> Double {
        switch self {
        case .point, .multiPoint:
            return positions.map { $0.distance(to: point) }.min() ?? .infinity
        case .lineString(let ps):
            return Self.distance(from: point, toLine: ps)
        case .multiLineString(let lines):
            return lines.map { Self.distance(from: point, toLine: $0) }.min() ?? .infinity
        }
    }

    static func length(_ line: [Coordinate]) -> Double {
        zip(line, line.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
    }

    static func halfway(_ line: [Coordinate]) -> Coordinate {
        guard line.count > 1 else { return line[0] }
        var remaining = length(line) / 2
        for (a, b) in zip(line, line.dropFirst()) {
            let segment = a.distance(to: b)
            if segment >= remaining, segment > 0 {
                let t = remaining / segment
                return Coordinate(latitude: a.latitude + (b.latitude - a.latitude) * t,
                                  longitude: a.longitude + (b.longitude - a.longitude) * t) ?? a
            }
            remaining -= segment
        }
        return line[line.count - 1]
    }

    static func distance(from point: Coordinate, toLine line: [Coordinate]) -> Double {
        guard line.count > 1 else { return line.first.map { $0.distance(to: point) } ?? .infinity }
        let metersPerDegreeLatitude = Coordinate.metersPerDegreeLatitude
        let metersPerDegreeLongitude = metersPerDegreeLatitude * cos(point.latitude * .pi / 180)
        func local(_ c: Coordinate) -> (x: Double, y: Double) {
            ((c.longitude - point.longitude) * metersPerDegreeLongitude, (c.latitude - point.latitude) * metersPerDegreeLatitude)
        }
        var best = Double.infinity
        for (a, b) in zip(line, line.dropFirst()) {
            let (p, q) = (local(a), local(b))
            let (dx, dy) = (q.x - p.x, q.y - p.y)
            let lengthSquared = dx * dx + dy * dy
            let t = lengthSquared == 0 ? 0 : max(0, min(1, -(p.x * dx + p.y * dy) / lengthSquared))
            let (x, y) = (p.x + t * dx, p.y + t * dy)
            best = min(best, (x * x + y * y).squareRoot())
        }
        return best
    }
}

extension Geometry {
    /// The geometry as an RFC 7946 GeoJSON geometry object, compact:
    /// `{"type":"LineString","coordinates":[[127.1,37.2],[127.2,37.3]]}`. Numbers are written
    /// in Swift's shortest round-tripping form, so decoding gives back exactly the same values.
    public var geoJSON: String {
        func position(_ c: Coordinate) -> String { "[\(c.longitude),\(c.latitude)]" }
        func list(_ ps: [Coordinate]) -> String { "[" + ps.map(position).joined(separator: ",") + "]" }
        let coordinates: String = switch self {
        case .point(let p): position(p)
        case .multiPoint(let ps), .lineString(let ps): list(ps)
        case .multiLineString(let lines): "[" + lines.map(list).joined(separator: ",") + "]"
        }
        return "{\"type\":\"\(typeName)\",\"coordinates\":\(coordinates)}"
    }

    /// Reads a GeoJSON geometry object of one of the four types; nil for anything else, for
    /// positions outside WGS84 ranges, or for lines with fewer than two positions. A third
    /// number in a position (altitude) is ignored, as RFC 7946 §3.1.1 allows.
    public init?(geoJSON text: String) {
        guard let object = try? JSONDecoder().decode(GeoJSONGeometry.self, from: Data(text.utf8)) else { return nil }
        func position(_ value: GeoJSONGeometry.Coordinates) -> Coordinate? {
            guard case .list(let numbers) = value, numbers.count >= 2,
                  case .number(let lon) = numbers[0], case .number(let lat) = numbers[1] else { return nil }
            return Coordinate(latitude: lat, longitude: lon)
        }
        func positions(_ value: GeoJSONGeometry.Coordinates) -> [Coordinate]? {
            guard case .list(let items) = value else { return nil }
            let mapped = items.compactMap(position)
            return mapped.count == items.count ? mapped : nil
        }
        let geometry: Geometry?
        switch object.type {
        case "Point": geometry = position(object.coordinates).map(Geometry.point)
        case "MultiPoint": geometry = positions(object.coordinates).map(Geometry.multiPoint)
        case "LineString": geometry = positions(object.coordinates).map(Geometry.lineString)
        case "MultiLineString":
            guard case .list(let lines) = object.coordinates else { return nil }
            let mapped = lines.compactMap(positions)
            geometry = mapped.count == lines.count ? .multiLineString(mapped) : nil
        default: geometry = nil
        }
        guard let geometry, let valid = Geometry(validating: geometry) else { return nil }
        self = valid
    }
}

/// The shape of a GeoJSON geometry object, for decoding.
private struct GeoJSONGeometry: Decodable {
    indirect enum Coordinates: Decodable {
        case number(Double)
        case list([Coordinates])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .list(try container.decode([Coordinates].self))
            }
        }
    }

    var type: String
    var coordinates: Coordinates
}

extension BoundingBox {
    /// A box from `(minLongitude, minLatitude, maxLongitude, maxLatitude)` that may have no
    /// area (a point's extent). The values are taken as they are: callers pass WGS84 extents.
    public init(extent: (Double, Double, Double, Double)) {
        self.init(unchecked: extent)
    }

    /// Whether the two boxes share at least one point.
    public func intersects(_ other: BoundingBox) -> Bool {
        minLongitude <= other.maxLongitude && other.minLongitude <= maxLongitude
            && minLatitude <= other.maxLatitude && other.minLatitude <= maxLatitude
    }
}

extension Incident {
    /// Meters from `point` to the incident as `--near` measures it: to its geometry's lines or
    /// points when it has one (``Geometry/distance(to:)``), else to its position; nil when it
    /// has neither. The SQLite store computes the same in SQL (`geometry_distance`).
    public func distance(to point: Coordinate) -> Double? {
        geometry?.distance(to: point) ?? coordinate?.distance(to: point)
    }
}
