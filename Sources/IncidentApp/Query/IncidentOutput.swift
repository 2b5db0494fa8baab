import Foundation
import IncidentCore

/// One field of an incident as output: snake_case key named after the database column.
enum FieldValue {
    case text(String?)
    case number(Double?)
    case integer(Int64)
    /// A list of texts (a run's warnings).
    case texts([String])

    /// JSON text (RFC 8259): strings quoted, numbers bare, absent values `null`.
    var json: String {
        switch self {
        case .text(let value): value.map(JSONText.quoted) ?? "null"
        case .number(let value): value.map { "\($0)" } ?? "null"
        case .integer(let value): String(value)
        case .texts(let values): "[" + values.map(JSONText.quoted).joined(separator: ", ") + "]"
        }
    }

    /// CSV cell text (empty when absent).
    var plain: String {
        switch self {
        case .text(let value): value ?? ""
        case .number(let value): value.map { "\($0)" } ?? ""
        case .integer(let value): String(value)
        case .texts(let values): values.joined(separator: "; ")
        }
    }
}

/// The output formats of `incidents list` and how each incident is written in them.
enum IncidentOutput {
    enum Format: String, CaseIterable {
        case table, json, ndjson, csv, geojson
    }

    /// The fields of one stored incident, in column order: the identity, every content field
    /// of ``IncidentField/content`` (so a new content column appears in every format), then what
    /// the store adds.
    static func fields(_ stored: StoredIncident) -> [(String, FieldValue)] {
        var fields: [(String, FieldValue)] = [
            ("id", .integer(stored.id)), ("source", .text(stored.incident.source)), ("external_id", .text(stored.incident.externalID)),
        ]
        for field in IncidentField.content {
            switch field.value(stored.incident) {
            case .null:
                let absent: FieldValue = field.storage == .coordinate ? .number(nil) : .text(nil)
                fields += field.columns.map { ($0, absent) }
            case .text(let text): fields.append((field.columns[0], .text(text)))
            case .instant(let instant): fields.append((field.columns[0], .text(instant.rfc3339)))
            case .coordinate(let point):
                fields += zip(field.columns, [point.latitude, point.longitude]).map { ($0, FieldValue.number($1)) }
            }
        }
        return fields + [
            ("first_seen_at", .text(stored.firstSeenAt.rfc3339)), ("last_seen_at", .text(stored.lastSeenAt.rfc3339)),
            ("cleared_at", .text(stored.clearedAt?.rfc3339)), ("revision", .integer(Int64(stored.revision))),
        ]
    }

    static func object(_ fields: [(String, FieldValue)]) -> String {
        "{" + fields.map { "\(JSONText.quoted($0.0)): \($0.1.json)" }.joined(separator: ", ") + "}"
    }

    /// Renders `incidents` in `format`. `table` fits `width` columns, times shown in `zone`.
    static func render(_ incidents: [StoredIncident], as format: Format, width: Int, zone: DisplayZone) -> String {
        switch format {
        case .json:
            return JSONText.array(incidents.map { object(fields($0)) })
        case .ndjson:
            return incidents.map { object(fields($0)) + "\n" }.joined()
        case .csv:
            return csv(incidents)
        case .geojson:
            return geoJSON(incidents)
        case .table:
            return table(incidents, width: width, zone: zone)
        }
    }

    /// RFC 4180: a header row, CRLF line ends, a field quoted (quotes doubled) when it holds a
    /// comma, a quote, CR or LF.
    static func csv(_ incidents: [StoredIncident]) -> String {
        func cell(_ text: String) -> String {
            text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        let header = fields(StoredIncident.placeholder).map { cell($0.0) }.joined(separator: ",")
        return ([header] + incidents.map { fields($0).map { cell($0.1.plain) }.joined(separator: ",") })
            .map { $0 + "\r\n" }.joined()
    }

    /// A GeoJSON FeatureCollection (RFC 7946) of Points in `[longitude, latitude]` order, WGS84;
    /// an incident without a position gets a null geometry, as §3.2 allows.
    static func geoJSON(_ incidents: [StoredIncident]) -> String {
        let features = incidents.map { stored -> String in
            let geometry = stored.incident.coordinate.map {
                "{\"type\": \"Point\", \"coordinates\": [\($0.longitude), \($0.latitude)]}"
            } ?? "null"
            let properties = fields(stored).filter { $0.0 != "latitude" && $0.0 != "longitude" }
            return "{\"type\": \"Feature\", \"id\": \(stored.id), \"geometry\": \(geometry), \"properties\": \(object(properties))}"
        }
        return "{\"type\": \"FeatureCollection\", \"features\": [\n" + features.map { "  " + $0 }.joined(separator: ",\n") + "\n]}\n"
    }

    static func table(_ incidents: [StoredIncident], width: Int, zone: DisplayZone) -> String {
        var rows = [["ID", "SOURCE", "CATEGORY", "STARTED (\(zone.label))", "ROAD", "LOCATION",
                     "RESTRICTION", "DESCRIPTION"]]
        for stored in incidents {
            let i = stored.incident
            rows.append([
                String(stored.id), i.source, i.category.rawValue, i.startedAt.map(zone.shortTime) ?? "-",
                i.road ?? "-", i.location ?? i.direction ?? "-", i.restriction ?? "-", i.description ?? "-",
            ])
        }
        // Description and location are cut first; on a narrow terminal, location, restriction,
        // source and category are left out.
        return TextTable.render(rows, maxWidth: width, flexible: [7, 5], droppable: [5, 6, 1, 2])
    }
}

extension StoredIncident {
    /// A row with every field present, for the CSV header.
    static let placeholder = StoredIncident(
        id: 0, incident: Incident(source: "", externalID: "", category: .other),
        firstSeenAt: UTCInstant(secondsSince1970: 0), lastSeenAt: UTCInstant(secondsSince1970: 0), clearedAt: nil, revision: 1)
}
