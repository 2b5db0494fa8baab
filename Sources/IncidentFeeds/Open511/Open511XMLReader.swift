import Foundation
import IncidentCore
import IncidentXML

/// Reads Open511 XML (open511.org, `<open511 version="v0">`), streaming: `<events><event>`,
/// GML geographies (`gml:Point`, `gml:LineString`, `gml:MultiPoint`, `gml:MultiLineString`,
/// GML 3's `gml:MultiCurve`, polygons as their outer rings' outline): GML 2 `gml:coordinates`
/// (`lon,lat lon,lat` tuples) or GML 3 `gml:pos`/`gml:posList` (numbers separated by spaces,
/// `srsDimension` of 2 or 3), in the GML namespace or GML 3.2's. Axis order (OGC 08-038 and
/// the EPSG register): latitude first under the URN and URI names of EPSG 4326
/// (`urn:ogc:def:crs:EPSG::4326`, `http://www.opengis.net/def/crs/EPSG/0/4326`); longitude
/// first under `EPSG:4326`, CRS84 and no `srsName` (the GIS convention, and Open511's
/// GeoJSON order). `xml:lang` on repeated headlines and descriptions, and
/// schedules as intervals or recurring schedules (`recurring_schedules/recurring_schedule`
/// with `daily_start_time`, or the older `schedules/schedule` with `start_time`).
///
/// Extension elements (in other namespaces) are skipped by the XML reader and not kept.
///
/// Completeness: the root must be `<open511>`. The XML reader reports no element that holds
/// no record, so an `<events/>` with no event cannot be told from a page of another kind: a
/// document with no event is read as incomplete (nothing cleared) rather than as "no events".
enum Open511XMLReader {
    static let gml = "http://www.opengis.net/gml"
    static let xmlLang = XMLAttribute(XMLName("lang", namespaceURI: "http://www.w3.org/XML/1998/namespace"))
    static let srsName = XMLAttribute(XMLName("srsName"))

    /// The fields, in the order ``schema`` lists them.
    enum Field: Int, CaseIterable {
        case id, status, headline, description, eventType, eventSubtype, severity, created, updated, timezone, detour
        case road, roadName, roadFrom, roadTo, roadDirection, roadState, roadLanesClosed, roadLanesOpen
        case areaName, interval, recurringSchedule, schedule, startDate, endDate, dailyStartTime, startTime
        case dailyEndTime, endTime, day
        case point, lineString, multiPoint, multiLineString, polygon, multiPolygon
        case pointCoordinates, lineCoordinates, ringCoordinates
        // GML 3
        case multiCurve, pos, posList, ringPosList
    }

    static func field(_ field: Field) -> XMLField {
        func event(_ name: String, _ cardinality: XMLField.Cardinality = .single, attributes: [XMLAttribute] = []) -> XMLField {
            XMLField([XMLName("event"), XMLName(name)], cardinality: cardinality, attributes: attributes)
        }
        func repeated(_ names: [String], capturesText: Bool = true) -> XMLField {
            XMLField(names.map { XMLName($0) }, cardinality: .repeated, capturesText: capturesText)
        }
        func geometry(_ name: String) -> XMLField {
            XMLField([XMLName("geography"), XMLName(name, namespaceURI: gml)], cardinality: .repeated,
                     attributes: [srsName], capturesText: false)
        }
        func coordinates(_ parents: [String], _ name: String = "coordinates") -> XMLField {
            XMLField((parents + [name]).map { XMLName($0, namespaceURI: gml) }, cardinality: .repeated,
                     attributes: name == "coordinates" ? [] : [srsDimension])
        }
        return switch field {
        case .id: event("id")
        case .status: event("status")
        case .headline: event("headline", .repeated, attributes: [xmlLang])
        case .description: event("description", .repeated, attributes: [xmlLang])
        case .eventType: event("event_type")
        case .eventSubtype: repeated(["event_subtypes", "event_subtype"])
        case .severity: event("severity")
        case .created: event("created")
        case .updated: event("updated")
        case .timezone: event("timezone")
        case .detour: event("detour", .repeated)
        case .road: repeated(["roads", "road"], capturesText: false)
        case .roadName: repeated(["road", "name"])
        case .roadFrom: repeated(["road", "from"])
        case .roadTo: repeated(["road", "to"])
        case .roadDirection: repeated(["road", "direction"])
        case .roadState: repeated(["road", "state"])
        case .roadLanesClosed: repeated(["road", "lanes_closed"])
        case .roadLanesOpen: repeated(["road", "lanes_open"])
        case .areaName: repeated(["area", "name"])
        case .interval: repeated(["intervals", "interval"])
        case .recurringSchedule: repeated(["recurring_schedules", "recurring_schedule"], capturesText: false)
        case .schedule: repeated(["schedules", "schedule"], capturesText: false)
        case .startDate: repeated(["start_date"])
        case .endDate: repeated(["end_date"])
        case .dailyStartTime: repeated(["daily_start_time"])
        case .startTime: repeated(["start_time"])
        case .dailyEndTime: repeated(["daily_end_time"])
        case .endTime: repeated(["end_time"])
        case .day: repeated(["days", "day"])
        case .point: geometry("Point")
        case .lineString: geometry("LineString")
        case .multiPoint: geometry("MultiPoint")
        case .multiLineString: geometry("MultiLineString")
        case .polygon: geometry("Polygon")
        case .multiPolygon: geometry("MultiPolygon")
        case .pointCoordinates: coordinates(["Point"])
        case .lineCoordinates: coordinates(["LineString"])
        case .ringCoordinates: coordinates(["outerBoundaryIs", "LinearRing"])
        case .multiCurve: geometry("MultiCurve")
        case .pos: coordinates(["Point"], "pos")
        case .posList: coordinates(["LineString"], "posList")
        case .ringPosList: coordinates(["exterior", "LinearRing"], "posList")
        }
    }

    static let srsDimension = XMLAttribute(XMLName("srsDimension"))

    /// GML 3.2 (`http://www.opengis.net/gml/3.2`) is read as GML: the elements read here have
    /// the same names and meaning in both.
    static let schema: XMLRecordSchema = {
        var schema = XMLRecordSchema(recordElements: [XMLName("event")], fields: Field.allCases.map(field))
        schema.namespaceAliases = [XMLNamespaceAlias(suffix: "/gml/3.2", namespaceURI: gml)]
        return schema
    }()

    /// Pagination: `<pagination><link rel="next" href="…"/></pagination>`, resolved against the
    /// root's `xml:base` when it has one.
    static let paginationSchema = XMLRecordSchema(
        recordElements: [XMLName("pagination")],
        fields: [XMLField(XMLName("link"), cardinality: .repeated, attributes: [XMLAttribute(XMLName("rel")), XMLAttribute(XMLName("href"))],
                          capturesText: false)],
        contextAttributes: [XMLContextAttribute(element: XMLName("open511"),
                                                attribute: XMLAttribute(XMLName("base", namespaceURI: "http://www.w3.org/XML/1998/namespace")))])

    /// The events of a response. The root must be `<open511>`; with no event, the answer is
    /// incomplete (see the type's documentation).
    static let format = XMLFeedFormat(
        provider: Open511Provider.name, schema: schema, successField: "<events>", dto: event(from:),
        inspect: { envelope, tally in
            guard envelope.rootElement == XMLName("open511") else {
                throw FeedError(.unexpectedResponse, provider: Open511Provider.name,
                                message: "expected an Open511 <open511> document but the root element is <\(envelope.rootElement?.description ?? "none")>; check the base URL")
            }
            tally.confirmedSuccess = true
            if tally.recordsRead == 0 {
                tally.incompleteBecause.append("the Open511 XML document lists no event, which cannot be told from a document of another kind")
            }
        })

    /// The `href` of the `rel="next"` link of the page's pagination, resolved against `xml:base`.
    static func nextURL(in file: URL, charset: String?) -> String? {
        var next: String?
        let reader = XMLRecordReader(schema: paginationSchema) { record, _ in
            for link in record.occurrences(of: 0) where link.attributes.first == "next" {
                guard let href = link.attributes.last ?? nil else { continue }
                if let base = record.context.first ?? nil, let url = URL(string: href, relativeTo: URL(string: base)) {
                    next = url.absoluteString
                } else {
                    next = href
                }
            }
        }
        do {
            try reader.parse(contentsOf: file, charset: charset)
        } catch {
            return nil  // reading the page fails with the real cause
        }
        return next?.nonEmptyTrimmed
    }

    /// The event as sent, from one record of ``schema``.
    static func event(from record: XMLRecord) -> Open511Event {
        var event = Open511Event(position: "event at line \(record.line)")
        event.problems = record.problems
        func value(_ field: Field) -> String? { record[field.rawValue] }
        func texts(_ field: Field) -> [String] { record.occurrences(of: field.rawValue).compactMap(\.text) }
        event.id = value(.id)
        event.status = value(.status)
        event.headlines = languageTagged(record.occurrences(of: Field.headline.rawValue))
        event.descriptions = languageTagged(record.occurrences(of: Field.description.rawValue))
        event.eventType = value(.eventType)
        event.eventSubtypes = texts(.eventSubtype)
        event.severity = value(.severity)
        event.created = value(.created)
        event.updated = value(.updated)
        event.timezone = value(.timezone)
        event.detours = texts(.detour)
        event.intervals = texts(.interval)
        event.areas = texts(.areaName)
        // Road and schedule members follow their element's start in document order.
        var geometry: (field: Field, srsName: String?)?
        var parts: [(field: Field, text: String?, srsDimension: String?)] = []
        for occurrence in record.occurrences {
            guard let field = Field(rawValue: occurrence.field) else { continue }
            let text = occurrence.text
            switch field {
            case .road: event.roads.append(Open511Event.Road())
            case .roadName: event.roads.modifyLast { $0.name = text }
            case .roadFrom: event.roads.modifyLast { $0.from = text }
            case .roadTo: event.roads.modifyLast { $0.to = text }
            case .roadDirection: event.roads.modifyLast { $0.direction = text }
            case .roadState: event.roads.modifyLast { $0.state = text }
            case .roadLanesClosed: event.roads.modifyLast { $0.lanesClosed = text }
            case .roadLanesOpen: event.roads.modifyLast { $0.lanesOpen = text }
            case .recurringSchedule, .schedule: event.recurringSchedules.append(Open511Event.RecurringSchedule())
            case .startDate: event.recurringSchedules.modifyLast { $0.startDate = text }
            case .endDate: event.recurringSchedules.modifyLast { $0.endDate = text }
            case .dailyStartTime, .startTime: event.recurringSchedules.modifyLast { $0.dailyStartTime = text }
            case .dailyEndTime, .endTime: event.recurringSchedules.modifyLast { $0.dailyEndTime = text }
            case .day: if let text { event.recurringSchedules.modifyLast { $0.days.append(text) } }
            case .point, .lineString, .multiPoint, .multiLineString, .polygon, .multiPolygon, .multiCurve:
                if geometry != nil { event.problems.append("the geography holds more than one geometry") }
                geometry = (field, occurrence.attributes.first ?? nil)
            case .pointCoordinates, .lineCoordinates, .ringCoordinates, .pos, .posList, .ringPosList:
                parts.append((field, text, occurrence.attributes.first ?? nil))
            default: break
            }
        }
        if let (field, srsName) = geometry, event.problems.isEmpty {
            do throws(RecordProblem) {
                event.geography = try shape(field, srsName: srsName, parts: parts)
            } catch {
                event.problems.append("geography: \(error.text)")
            }
        }
        return event
    }

    /// Texts of a repeated element that may come in several languages: with one, its text;
    /// with several, each prefixed by its `xml:lang` (`[fr] …`).
    static func languageTagged(_ occurrences: [XMLOccurrence]) -> [String] {
        let texts = occurrences.compactMap { occurrence in occurrence.text.map { (occurrence.attributes.first ?? nil, $0) } }
        guard texts.count > 1 else { return texts.map(\.1) }
        return texts.map { language, text in language.map { "[\($0)] \(text)" } ?? text }
    }

    /// GML 2 `gml:coordinates`: tuples separated by whitespace, `lon,lat` (a third number, an
    /// altitude, is ignored).
    static func coordinates(_ text: String?) throws(RecordProblem) -> [Coordinate] {
        guard let text else { throw RecordProblem(text: "empty gml:coordinates") }
        var out: [Coordinate] = []
        for tuple in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            let numbers = tuple.split(separator: ",")
            guard numbers.count >= 2, let lon = Double(numbers[0]), let lat = Double(numbers[1]) else {
                throw RecordProblem(text: "gml:coordinates tuple '\(tuple.prefix(60))' is not lon,lat")
            }
            guard let coordinate = Coordinate(latitude: lat, longitude: lon) else {
                throw RecordProblem(text: "gml:coordinates tuple '\(tuple.prefix(60))' is outside WGS84 ranges")
            }
            out.append(coordinate)
        }
        return out
    }

    /// GML 3 `gml:pos`/`gml:posList`: numbers separated by whitespace, `dimension` per position
    /// (a third, an altitude, is ignored), latitude first when `latitudeFirst`.
    static func positions(_ text: String?, dimension: String?, latitudeFirst: Bool) throws(RecordProblem) -> [Coordinate] {
        guard let text else { throw RecordProblem(text: "empty gml:pos or gml:posList") }
        guard let size = Int(dimension ?? "2"), size == 2 || size == 3 else {
            throw RecordProblem(text: "srsDimension \(dimension ?? "") is not 2 or 3")
        }
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard numbers.count % size == 0 else {
            throw RecordProblem(text: "gml:posList holds \(numbers.count) numbers, not a multiple of its dimension \(size)")
        }
        var out: [Coordinate] = []
        out.reserveCapacity(numbers.count / size)
        var i = 0
        while i < numbers.count {
            guard let a = Double(numbers[i]), let b = Double(numbers[i + 1]) else {
                throw RecordProblem(text: "gml:pos '\(numbers[i].prefix(30)) \(numbers[i + 1].prefix(30))' is not two numbers")
            }
            guard let coordinate = latitudeFirst ? Coordinate(latitude: a, longitude: b) : Coordinate(latitude: b, longitude: a) else {
                throw RecordProblem(text: "gml:pos '\(numbers[i].prefix(30)) \(numbers[i + 1].prefix(30))' is outside WGS84 ranges")
            }
            out.append(coordinate)
            i += size
        }
        return out
    }

    /// The names of WGS84 (EPSG 4326) this reader accepts, and whether GML 3 positions under
    /// each put latitude first (see the type's documentation).
    static let wgs84Names: [String: Bool] = [
        "EPSG:4326": false, "http://www.opengis.net/gml/srs/epsg.xml#4326": false,
        "urn:ogc:def:crs:OGC:1.3:CRS84": false, "http://www.opengis.net/def/crs/OGC/1.3/CRS84": false, "CRS:84": false,
        "urn:ogc:def:crs:EPSG::4326": true, "http://www.opengis.net/def/crs/EPSG/0/4326": true,
    ]

    /// The geometry of a geography element `field` whose coordinate elements are `parts`.
    static func shape(_ field: Field, srsName: String?, parts texts: [(field: Field, text: String?, srsDimension: String?)]) throws(RecordProblem) -> Geometry {
        var latitudeFirst = false
        if let srsName {
            guard let order = wgs84Names[srsName] else { throw RecordProblem(text: "srsName \(srsName) is not WGS84 (EPSG:4326)") }
            latitudeFirst = order
        }
        var parts: [[Coordinate]] = []
        for part in texts {
            switch part.field {
            case .pos, .posList, .ringPosList:
                parts.append(try positions(part.text, dimension: part.srsDimension, latitudeFirst: latitudeFirst))
            default:
                parts.append(try coordinates(part.text))
            }
        }
        let geometry: Geometry? = switch field {
        case .point: parts.count == 1 && parts[0].count == 1 ? .point(parts[0][0]) : nil
        case .multiPoint: parts.allSatisfy { $0.count == 1 } ? .multiPoint(parts.map { $0[0] }) : nil
        case .lineString, .polygon: parts.count == 1 ? .lineString(parts[0]) : nil
        case .multiLineString, .multiPolygon, .multiCurve: .multiLineString(parts)
        default: nil
        }
        guard let geometry, let valid = Geometry(validating: geometry) else {
            throw RecordProblem(text: "the GML geometry has too few or too many positions for its type")
        }
        return valid
    }
}

extension Array {
    /// Changes the last element, if any.
    mutating func modifyLast(_ change: (inout Element) -> Void) {
        guard !isEmpty else { return }
        change(&self[count - 1])
    }
}
