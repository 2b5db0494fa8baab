import Foundation
import IncidentCore
import IncidentHTTP
import IncidentJSON

/// The documents of OGC API – Features – Part 1: Core (OGC 17-069r4,
/// <https://docs.ogc.org/is/17-069r4/17-069r4.html>): the landing page, the conformance
/// declaration, the OpenAPI 3.0 definition and the collection, each in JSON and HTML, with
/// absolute links (QGIS breaks on relative ones).
enum OGC {
    static let collectionID = "incidents"
    static let title = "Traffic incidents"
    static let description = "Road incidents published by public traffic-data APIs, as polled and stored by incident-scheduler: "
        + "whether each is still active, when it was last seen, and whether the poll that ended it was complete."

    /// The conformance classes implemented (§7.4 and Annex A).
    static let conformance = [
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
    ]

    /// The representations: `f=` or the `Accept` header (``negotiate(_:offered:)``).
    enum Format: String, CaseIterable, Sendable {
        case json, html, ndjson, csv

        /// The media type of a page of items (a single document is `application/json`).
        var itemsMediaType: String {
            switch self {
            case .json: "application/geo+json"
            case .html: "text/html; charset=utf-8"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8; header=present"
            }
        }

        /// The media types that select the format in `Accept` (RFC 9110 §12.5.1).
        var mediaTypes: [String] {
            switch self {
            case .json: ["application/json", "application/geo+json", "application/vnd.oai.openapi+json", "application/problem+json"]
            case .html: ["text/html", "application/xhtml+xml"]
            case .ndjson: ["application/x-ndjson", "application/ndjson"]
            case .csv: ["text/csv"]
            }
        }

        /// The format of a response among `offered` (a route's own, ``FeatureServer/Route/formats``;
        /// the first is the default): `f` when given (`geojson` is `json`), else content
        /// negotiation on `Accept` (RFC 9110 §12.5.1: each format takes the quality of the most
        /// specific range that matches one of its media types, `type/subtype` before `type/*`
        /// before `*/*`; `q=0` means not acceptable; the highest quality wins, ties going to the
        /// earlier format), else the default.
        /// - Throws: ``UsageError`` (400) for an `f` this route does not serve; a 406 ``Problem``
        ///   when `Accept` accepts none of them.
        static func negotiate(_ request: HTTPRequest, offered: [Format]) throws -> Format {
            if let f = request.query.first(where: { $0.name == "f" }) {
                let value = f.value ?? ""
                guard let format = value == "geojson" ? .json : Format(rawValue: value), offered.contains(format) else {
                    throw UsageError("parameter f: '\(ServerFilters.shown(value))' is not " + (offered.count == 1 ? "json, the only format here"
                        : "one of the formats here: " + offered.map(\.rawValue).joined(separator: ", ")))
                }
                return format
            }
            guard let accept = request.header("Accept"), !accept.trimmingCharacters(in: .whitespaces).isEmpty else { return offered[0] }
            let ranges = MediaRange.parse(accept)
            var best: (format: Format, quality: Double)?
            for format in offered {
                let quality = format.mediaTypes.map { MediaRange.quality(of: $0, in: ranges) }.max() ?? 0
                if quality > 0, quality > best?.quality ?? 0 { best = (format, quality) }
            }
            guard let best else {
                throw Problem(406, "Accept: \(ServerFilters.shown(accept)) accepts none of the formats here: "
                              + offered.flatMap { $0.mediaTypes.prefix(1) }.joined(separator: ", ") + " (or ask with f=)")
            }
            return best.format
        }
    }

    /// One element of an `Accept` header: `type/subtype` (either may be `*`) and its quality.
    struct MediaRange {
        var type: Substring
        var subtype: Substring
        var quality: Double

        /// The ranges of `header` (lowercased); an element that is not `type/subtype` is skipped,
        /// a `q` that is not a number from 0 to 1 counts as 1.
        static func parse(_ header: String) -> [MediaRange] {
            header.lowercased().split(separator: ",").compactMap { element in
                let parts = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                let name = (parts.first ?? "").split(separator: "/", omittingEmptySubsequences: false)
                guard name.count == 2, !name[0].isEmpty, !name[1].isEmpty else { return nil }
                let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
                return MediaRange(type: Substring(name[0]), subtype: Substring(name[1]), quality: q.map { (0...1).contains($0) ? $0 : 1 } ?? 1)
            }
        }

        /// The quality `ranges` give `mediaType`: that of the most specific range that matches
        /// it, 0 when none does.
        static func quality(of mediaType: String, in ranges: [MediaRange]) -> Double {
            let name = mediaType.split(separator: "/")
            var found: (specificity: Int, quality: Double)?
            for range in ranges {
                let specificity = range.type == name[0] && range.subtype == name[1] ? 2
                    : range.type == name[0] && range.subtype == "*" ? 1 : range.type == "*" && range.subtype == "*" ? 0 : -1
                if specificity >= 0, specificity > found?.specificity ?? -1 { found = (specificity, range.quality) }
            }
            return found?.quality ?? 0
        }
    }

    /// Refuses every parameter but `f` (whose value ``Format/negotiate(_:offered:)`` checks) and
    /// a repeated `f`.
    static func onlyFormat(_ request: HTTPRequest) throws {
        var seen = false
        for (name, _) in request.query {
            guard name == "f" else { throw UsageError("unknown parameter \(ServerFilters.shown(name)) (this resource takes only f)") }
            guard !seen else { throw UsageError("parameter f: given more than once") }
            seen = true
        }
    }

    /// One link object (§7.2 uses RFC 8288's relations).
    struct Link {
        var href: String
        var rel: String
        var type: String
        var title: String

        var json: String {
            IncidentOutput.object([("href", .text(href)), ("rel", .text(rel)), ("type", .text(type)), ("title", .text(title))])
        }
    }

    static func links(_ links: [Link]) -> String {
        "[" + links.map(\.json).joined(separator: ", ") + "]"
    }

    /// `self` and `alternate` links of a resource at `url` in JSON (`type`) and HTML.
    static func selfLinks(_ url: String, _ format: Format, type: String = "application/json") -> [Link] {
        let json = Link(href: url + "?f=json", rel: "self", type: type, title: "This document as JSON")
        let html = Link(href: url + "?f=html", rel: "self", type: "text/html", title: "This document as HTML")
        return format == .html ? [html, Link(href: json.href, rel: "alternate", type: json.type, title: json.title)]
            : [json, Link(href: html.href, rel: "alternate", type: html.type, title: html.title)]
    }

    static func document(_ format: Format, json: String, title: String, links: [Link], body: String = "") -> HTTPResponse {
        if format == .html {
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: html(title: title, links: links, body: body), route: "")
        }
        return HTTPResponse(status: 200, contentType: "application/json", text: json + "\n", route: "")
    }

    /// An HTML page: the title, the body (already escaped) and the links.
    static func html(title: String, links: [Link], body: String) -> String {
        let escape = MapPage.htmlEscaped
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style>
            </head><body><h1>\(escape(title))</h1>
            \(body)
            <h2>Links</h2><ul>
            \(links.map { "<li><a href=\"\(escape($0.href))\" rel=\"\(escape($0.rel))\" type=\"\(escape($0.type))\">\(escape($0.title))</a> (\(escape($0.rel)))</li>" }.joined(separator: "\n"))
            </ul></body></html>

            """
    }

    static func landing(_ base: String, _ format: Format) -> HTTPResponse {
        let links = selfLinks(base + "/", format) + [
            Link(href: base + "/api", rel: "service-desc", type: "application/vnd.oai.openapi+json;version=3.0", title: "The API definition (OpenAPI 3.0)"),
            Link(href: base + "/conformance", rel: "conformance", type: "application/json", title: "Conformance classes implemented"),
            Link(href: base + "/collections", rel: "data", type: "application/json", title: "The collections"),
            Link(href: base + "/map", rel: "related", type: "text/html", title: "Live map"),
            Link(href: base + "/status", rel: "related", type: "application/json", title: "Each source's last poll"),
        ]
        let json = IncidentOutput.object([("title", .text(title)), ("description", .text(description))]).dropLast() + ", \"links\": \(Self.links(links))}"
        return document(format, json: String(json), title: title, links: links, body: "<p>\(MapPage.htmlEscaped(description))</p>")
    }

    static func conformance(_ base: String, _ format: Format) -> HTTPResponse {
        let links = selfLinks(base + "/conformance", format)
        let json = "{\"conformsTo\": " + JSONText.array(conformance.map { JSONString.quoted($0) }).dropLast() + ", \"links\": \(Self.links(links))}"
        let body = "<ul>" + conformance.map { "<li>\(MapPage.htmlEscaped($0))</li>" }.joined() + "</ul>"
        return document(format, json: json, title: "Conformance", links: links, body: body)
    }

    /// The collection's description (§7.14), with its `items` links.
    static func collectionJSON(_ base: String, _ format: Format, selfPath: String) -> (json: String, links: [Link]) {
        let url = base + "/collections/" + collectionID
        let links = selfLinks(base + selfPath, format) + [
            Link(href: url + "/items?f=json", rel: "items", type: "application/geo+json", title: "The incidents as GeoJSON"),
            Link(href: url + "/items?f=html", rel: "items", type: "text/html", title: "The incidents as HTML"),
        ]
        let json = "{\"id\": \"\(collectionID)\", \"title\": \(JSONString.quoted(title)), \"description\": \(JSONString.quoted(description)), "
            + "\"itemType\": \"feature\", \"crs\": [\"\(ServerFilters.crs84)\"], "
            + "\"extent\": {\"spatial\": {\"bbox\": [[-180, -90, 180, 90]], \"crs\": \"\(ServerFilters.crs84)\"}, "
            + "\"temporal\": {\"interval\": [[null, null]], \"trs\": \"http://www.opengis.net/def/uom/ISO-8601/0/Gregorian\"}}, "
            + "\"links\": \(Self.links(links))}"
        return (json, links)
    }

    static func collections(_ base: String, _ format: Format) -> HTTPResponse {
        let links = selfLinks(base + "/collections", format)
        let collection = collectionJSON(base, .json, selfPath: "/collections/" + collectionID)
        let json = "{\"links\": \(Self.links(links)), \"collections\": [\(collection.json)]}"
        let body = "<h2><a href=\"\(MapPage.htmlEscaped(base + "/collections/" + collectionID + "?f=html"))\">\(MapPage.htmlEscaped(title))</a></h2>"
        return document(format, json: json, title: "Collections", links: links, body: body)
    }

    static func collection(_ base: String, _ format: Format) -> HTTPResponse {
        let (json, links) = collectionJSON(base, format, selfPath: "/collections/" + collectionID)
        return document(format, json: json, title: title, links: links, body: "<p>\(MapPage.htmlEscaped(description))</p>")
    }
}
