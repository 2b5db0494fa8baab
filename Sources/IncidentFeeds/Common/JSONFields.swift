import IncidentCore
import IncidentJSON

extension JSONValue {
    /// A string's or a number's text, trimmed; nil when empty, absent (`null`) or of another
    /// type. Providers send ids and codes either way (`"id": 17` or `"id": "17"`).
    var text: String? {
        guard let text = scalarText else { return nil }
        // Most values start and end with a visible ASCII character: no Unicode property lookup.
        if let first = text.utf8.first, let last = text.utf8.last, (0x21...0x7E).contains(first), (0x21...0x7E).contains(last) {
            return text
        }
        return text.nonEmptyTrimmed
    }

    /// The value as one line of text for an extension field: a string as is, a number as
    /// written, `true`/`false`, anything else as compact JSON; nil for `null`.
    var displayText: String? {
        switch self {
        case .null: nil
        case .string(let text): text.nonEmptyTrimmed
        case .number(let text): text
        case .bool(let value): value ? "true" : "false"
        case .array, .object: description
        }
    }

    /// The member `key` of an object as text (see ``text``).
    /// - Throws: ``RecordProblem`` when the member is an object or an array.
    func text(_ key: String, in place: String) throws(RecordProblem) -> String? {
        guard let value = self[key] else { return nil }
        switch value {
        case .array, .object: throw RecordProblem(text: "\(place)\(key) is \(value.kindName), not a text")
        default: return value.text
        }
    }

    /// The member `key` as a list of texts: an array of strings or numbers, or one string
    /// (read as a list of one); empty when absent or `null`.
    /// - Throws: ``RecordProblem`` for an object, or an array holding objects or arrays.
    func texts(_ key: String, in place: String) throws(RecordProblem) -> [String] {
        guard let value = self[key] else { return [] }
        switch value {
        case .null: return []
        case .string, .number: return value.text.map { [$0] } ?? []
        case .array(let items):
            var out: [String] = []
            for item in items {
                switch item {
                case .array, .object: throw RecordProblem(text: "\(place)\(key) holds \(item.kindName), not texts")
                default: if let text = item.text { out.append(text) }
                }
            }
            return out
        default: throw RecordProblem(text: "\(place)\(key) is \(value.kindName), not a list of texts")
        }
    }

    /// The member `key` as a list of objects; empty when absent or `null`.
    /// - Throws: ``RecordProblem`` when it is not an array of objects.
    func objects(_ key: String, in place: String) throws(RecordProblem) -> [JSONValue] {
        guard let value = self[key], !value.isNull else { return [] }
        guard let items = value.array else { throw RecordProblem(text: "\(place)\(key) is \(value.kindName), not a list") }
        for (index, item) in items.enumerated() where item.object == nil {
            throw RecordProblem(text: "\(place)\(key)[\(index)] is \(item.kindName), not an object")
        }
        return items
    }

    /// The member `key` as a Boolean; nil when absent or `null`.
    /// - Throws: ``RecordProblem`` when it is another type.
    func bool(_ key: String, in place: String) throws(RecordProblem) -> Bool? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let bool = value.bool else { throw RecordProblem(text: "\(place)\(key) is \(value.kindName), not true or false") }
        return bool
    }

    /// `an object`, `a list`, `a text`, … for messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a text"
        case .array: "a list"
        case .object: "an object"
        }
    }
}

extension Geometry {
    /// Reads a GeoJSON geometry object (RFC 7946 §3.1) from a JSON tree: `Point`, `MultiPoint`,
    /// `LineString`, `MultiLineString`, and `Polygon`/`MultiPolygon`, which are kept as the
    /// outline of their exterior rings (a `LineString`/`MultiLineString`: this model has no
    /// areas). Positions are `[longitude, latitude]` in WGS84 degrees; a third number
    /// (altitude) is ignored. Members other than `type` and `coordinates` (the legacy `crs` of
    /// GeoJSON 2008, `bbox`) are ignored. A `GeometryCollection` (§3.1.8, which Open511's
    /// `geography` may be) becomes one of this model's shapes: its points a `MultiPoint`, its
    /// lines (and outlines) a `LineString` or `MultiLineString`; when it mixes both, each point
    /// joins the lines as a line of length zero (`[p, p]`), so that the box, `--near` and the
    /// map still find it.
    ///
    /// - Throws: ``RecordProblem`` for another type, a position that is not two numbers
    ///   within WGS84 ranges, a line with fewer than two positions, or an empty collection.
    init(geoJSON value: JSONValue) throws(RecordProblem) {
        guard value.object != nil else { throw RecordProblem(text: "the geometry is \(value.kindName), not a GeoJSON object") }
        guard let type = value["type"]?.string else { throw RecordProblem(text: "the geometry has no type") }
        if type == "GeometryCollection" {
            guard let members = value["geometries"]?.array else {
                throw RecordProblem(text: "the GeometryCollection has no geometries list")
            }
            var parts: [Geometry] = []
            for member in members { parts.append(try Geometry(geoJSON: member)) }
            guard let combined = Geometry(combining: parts) else { throw RecordProblem(text: "the GeometryCollection is empty") }
            self = combined
            return
        }
        guard let coordinates = value["coordinates"] else { throw RecordProblem(text: "the \(type) geometry has no coordinates") }
        func list(_ value: JSONValue) throws(RecordProblem) -> [JSONValue] {
            guard let items = value.array else { throw RecordProblem(text: "the \(type) coordinates are not nested lists") }
            return items
        }
        func position(_ value: JSONValue) throws(RecordProblem) -> Coordinate {
            guard let numbers = value.array, numbers.count >= 2,
                  let lon = numbers[0].number.flatMap(Double.init), let lat = numbers[1].number.flatMap(Double.init) else {
                throw RecordProblem(text: "a position of the \(type) is not [longitude, latitude]: \(String(value.description.prefix(60)))")
            }
            guard let coordinate = Coordinate(latitude: lat, longitude: lon) else {
                throw RecordProblem(text: "a position of the \(type) is outside WGS84 ranges: \(String(value.description.prefix(60)))")
            }
            return coordinate
        }
        func positions(_ value: JSONValue) throws(RecordProblem) -> [Coordinate] {
            var out: [Coordinate] = []
            for item in try list(value) { out.append(try position(item)) }
            return out
        }
        func rings(_ value: JSONValue) throws(RecordProblem) -> [Coordinate] {
            guard let outer = try list(value).first else { throw RecordProblem(text: "a \(type) has no exterior ring") }
            return try positions(outer)
        }
        let geometry: Geometry
        switch type {
        case "Point": geometry = .point(try position(coordinates))
        case "MultiPoint": geometry = .multiPoint(try positions(coordinates))
        case "LineString": geometry = .lineString(try positions(coordinates))
        case "MultiLineString":
            var lines: [[Coordinate]] = []
            for line in try list(coordinates) { lines.append(try positions(line)) }
            geometry = .multiLineString(lines)
        case "Polygon": geometry = .lineString(try rings(coordinates))
        case "MultiPolygon":
            var lines: [[Coordinate]] = []
            for polygon in try list(coordinates) { lines.append(try rings(polygon)) }
            geometry = .multiLineString(lines)
        default:
            throw RecordProblem(text: "the geometry type \(type) is not one of Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon")
        }
        guard let valid = Geometry(validating: geometry) else {
            throw RecordProblem(text: "the \(type) has too few positions (a line needs two)")
        }
        self = valid
    }

    /// The members of a geometry collection as one shape (see ``init(geoJSON:)``): nil when
    /// there are none. Shared by the GeoJSON and the GML readers.
    init?(combining parts: [Geometry]) {
        guard !parts.isEmpty else { return nil }
        if parts.count == 1 {
            self = parts[0]
            return
        }
        var points: [Coordinate] = []
        var lines: [[Coordinate]] = []
        for part in parts {
            switch part {
            case .point(let p): points.append(p)
            case .multiPoint(let ps): points += ps
            case .lineString(let ps): lines.append(ps)
            case .multiLineString(let ls): lines += ls
            }
        }
        if lines.isEmpty {
            self = .multiPoint(points)
        } else {
            lines += points.map { [$0, $0] }
            self = lines.count == 1 ? .lineString(lines[0]) : .multiLineString(lines)
        }
    }
}
