import Foundation
import IncidentCore
import IncidentHTTP
import IncidentJSON

/// A page of `/collections/incidents/items`, streamed as the store reads it with the CLI's
/// encoders (GeoJSON, NDJSON, CSV) or an HTML table.
///
/// **Paging is by keyset, not offset**: features come in id order, and the `next` link asks
/// for the ids after the last one sent (`after=ID`), the `prev` link for those before the first
/// (`before=ID`). An incident keeps its id for life and a new one gets a higher id, so while
/// polls commit between pages a walk through `next` links never shows an id twice and never
/// skips one that matched the filters both before and after the poll (one that stopped
/// matching, or started to, on a page already passed is the only difference; new incidents
/// appear on the last pages). An `OFFSET` would shift under every insert or deletion. The
/// store reads a page from the first id after the cursor (a rowid range in SQLite, the primary
/// key in PostgreSQL), so every page costs the same, the last as the first.
struct ItemsPage {
    let filters: ServerFilters
    let parameters: [(name: String, value: String?)]
    let base: String
    let format: OGC.Format
    let readers: ServerReaders

    var url: String { base + "/collections/" + OGC.collectionID + "/items" }

    func response() -> HTTPResponse {
        let page = self
        return HTTPResponse(status: 200, headers: [("Content-Type", format.itemsMediaType)], body: .stream { writer in
            try page.write(to: writer)
        }, route: "")
    }

    /// The page's URL with `changes` made to its parameters (nil removes one), percent-encoded.
    func link(_ changes: [String: String?]) -> String {
        var kept = parameters.filter { changes[$0.name] == nil }
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
            if let value { kept.append((name, value)) }
        }
        let query = kept.map { name, value in
            Self.encoded(name) + (value.map { "=" + Self.encoded($0) } ?? "")
        }.joined(separator: "&")
        return url + (query.isEmpty ? "" : "?" + query)
    }

    /// RFC 3986 unreserved characters kept, every other byte as `%XX`.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private func write(to body: BodyWriter) throws {
        let limit = filters.limit
        var query = filters.query
        query.order = .id
        var hasPrevious = false, hasNext = false
        let out = OutputBuffer { try body.write($0) }
        try readers.withReader { reader in
            if let before = filters.before {
                // The `limit` ids before `before`, read backwards; then the page is read forwards.
                var back = query
                back.order = .idDescending
                back.beforeID = before
                back.limit = limit + 1
                var ids: [Int64] = []
                try reader.forEachIncident(matching: back) { ids.append($0.id) }
                hasPrevious = ids.count > limit
                query.afterID = (ids.prefix(limit).last ?? before) - 1
                query.beforeID = before
                query.limit = limit
                hasNext = true
            } else {
                query.afterID = filters.after
                query.limit = limit + 1
                hasPrevious = (filters.after ?? 0) > 0
            }
            var writer = Writer(format, out: out, query: query, itemURL: url + "/")
            var count = 0
            var first: Int64?, last: Int64?
            try reader.forEachIncident(matching: query) { stored in
                guard count < limit else {
                    hasNext = true
                    return
                }
                try writer.write(ListedIncident(stored, query: query))
                count += 1
                first = first ?? stored.id
                last = stored.id
            }
            var links = [OGC.Link(href: link(["f": format == .html ? "html" : "json"]), rel: "self",
                                  type: format == .html ? "text/html" : "application/geo+json", title: "This page")]
            links.append(OGC.Link(href: link(["f": format == .html ? "json" : "html"]), rel: "alternate",
                                  type: format == .html ? "application/geo+json" : "text/html", title: "This page in another format"))
            if hasNext, let last {
                links.append(OGC.Link(href: link(["after": String(last), "before": nil]), rel: "next", type: "application/geo+json", title: "Next page"))
            }
            if hasPrevious {
                let edge = first ?? (filters.after.map { $0 + 1 } ?? 1)
                links.append(OGC.Link(href: link(["before": String(edge), "after": nil]), rel: "prev", type: "application/geo+json", title: "Previous page"))
            }
            links.append(OGC.Link(href: base + "/collections/" + OGC.collectionID, rel: "collection", type: "application/json", title: "The collection"))
            try writer.finish(returned: count, links: links)
        }
    }

    /// The writer of a page in each format.
    struct Writer {
        var geoJSON: GeoJSONWriter?
        var other: (any IncidentWriter)?

        init(_ format: OGC.Format, out: OutputBuffer, query: IncidentQuery, itemURL: String) {
            let distance = query.near != nil
            switch format {
            case .json: geoJSON = GeoJSONWriter(out, withDistance: distance)
            case .ndjson: other = JSONWriter(out, lines: true, withDistance: distance)
            case .csv: other = CSVWriter(out, withDistance: distance, spreadsheetZone: nil)
            case .html: other = HTMLTableWriter(out, withDistance: distance, itemURL: itemURL)
            }
        }

        mutating func write(_ row: ListedIncident) throws {
            if geoJSON != nil { try geoJSON?.write(row) } else { try other?.write(row) }
        }

        /// Ends the page: GeoJSON gets `numberReturned`, `timeStamp` and the links
        /// (§7.15.5–7.15.7); HTML its links; NDJSON and CSV nothing (the last row's id is the
        /// next page's `after`).
        mutating func finish(returned: Int, links: [OGC.Link]) throws {
            if geoJSON != nil {
                try geoJSON?.finish(members: ", \"numberReturned\": \(returned), \"timeStamp\": \"\(UTCClock.system.now().rfc3339)\", "
                                    + "\"links\": \(OGC.links(links))")
            } else if var html = other as? HTMLTableWriter {
                try html.finish(links: links)
            } else {
                try other?.finish()
            }
        }
    }

    /// One incident (`/collections/incidents/items/{id}`): a GeoJSON Feature with its links,
    /// or an HTML page.
    static func single(_ stored: StoredIncident, now: UTCInstant, base: String, format: OGC.Format) -> HTTPResponse {
        let url = base + "/collections/" + OGC.collectionID + "/items/" + String(stored.id)
        let links = OGC.selfLinks(url, format, type: "application/geo+json")
            + [OGC.Link(href: base + "/collections/" + OGC.collectionID, rel: "collection", type: "application/json", title: "The collection")]
        let row = ListedIncident(stored, query: IncidentQuery(now: now))
        var text = ""
        var out = OutputBuffer { text += $0 }
        if format == .html {
            var writer = HTMLTableWriter(out, withDistance: false, itemURL: base + "/collections/" + OGC.collectionID + "/items/")
            try? writer.write(row)
            try? writer.finish(links: links)
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: text, route: "")
        }
        try? out.write("{\"type\": \"Feature\", \"id\": \(stored.id), \"geometry\": \(GeoJSONWriter.geometry(stored.incident)), \"properties\": {")
        for (index, (_, column)) in GeoJSONWriter(out, withDistance: false).properties.enumerated() {
            try? IncidentOutput.writeMember(column.name, column.value(row), first: index == 0, to: &out)
        }
        try? out.write("}, \"links\": \(OGC.links(links))}\n")
        try? out.flush()
        return HTTPResponse(status: 200, contentType: "application/geo+json", text: text, route: "")
    }
}

/// `f=html`: an HTML table of the incidents, every feed text escaped, each id a link to the
/// incident.
struct HTMLTableWriter: IncidentWriter {
    private(set) var out: OutputBuffer
    let columns: [IncidentOutput.Column<ListedIncident>]
    /// The URL an id is appended to for the incident's page.
    let itemURL: String
    private var started = false

    init(_ out: OutputBuffer, withDistance: Bool, itemURL: String) {
        self.out = out
        self.itemURL = itemURL
        columns = IncidentOutput.listColumns(withDistance: withDistance).filter { $0.name != "geometry" }
    }

    private mutating func start() throws {
        started = true
        try out.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(OGC.title)</title>"
                      + "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>"
                      + "</head><body><h1>\(OGC.title)</h1>\n<table><tr>")
        for column in columns { try out.write("<th>\(column.name)</th>") }
        try out.write("</tr>\n")
    }

    mutating func write(_ row: ListedIncident) throws {
        if !started { try start() }
        try out.write("<tr>")
        for column in columns {
            let text = column.value(row).plain
            if column.name == "id" {
                try out.write("<td><a href=\"\(MapPage.htmlEscaped(itemURL))\(text)?f=html\">\(text)</a></td>")
            } else {
                try out.write("<td>\(MapPage.htmlEscaped(text))</td>")
            }
        }
        try out.write("</tr>\n")
    }

    mutating func finish() throws {
        try finish(links: [])
    }

    mutating func finish(links: [OGC.Link]) throws {
        if !started { try start() }
        try out.write("</table>\n<ul>")
        for link in links {
            try out.write("<li><a href=\"\(MapPage.htmlEscaped(link.href))\" rel=\"\(link.rel)\">\(MapPage.htmlEscaped(link.title))</a></li>")
        }
        try out.write("</ul></body></html>\n")
        try out.flush()
    }
}
