import Foundation
import IncidentCore
import IncidentHTTP
import IncidentJSON

extension OGC {
    /// The OpenAPI 3.0 definition of the server (`/api`, OGC API – Features /req/oas30): every
    /// path, and every parameter of the items with its schema: `limit`'s documented maximum
    /// (``ServerFilters/maxLimit``) and the filter catalogue's parameters (``IncidentFilter/Parameter``).
    /// Each path's `f` lists the formats of its route (``FeatureServer/Route/formats``); with
    /// `token`, every operation may answer 401.
    static func openAPI(_ base: String, token: Bool) -> HTTPResponse {
        func parameter(_ name: String, _ description: String, _ schema: String, explode: Bool = false, in place: String = "query",
                       required: Bool = false) -> String {
            "{\"name\": \(JSONString.quoted(name)), \"in\": \"\(place)\", \"required\": \(required), \"description\": \(JSONString.quoted(description)), "
                + "\"style\": \"\(place == "path" ? "simple" : "form")\", \"explode\": \(explode), \"schema\": \(schema)}"
        }
        /// The route's `f`, with exactly the formats it serves (none: no `f`).
        func f(_ route: FeatureServer.Route) -> [String] {
            let formats = route.formats.map(\.rawValue)
            guard !formats.isEmpty else { return [] }
            return [parameter("f", "The representation (else the Accept header; else \(formats[0])): " + formats.joined(separator: ", ") + ".",
                              "{\"type\": \"string\", \"enum\": [" + formats.map { JSONString.quoted($0) }.joined(separator: ", ") + "]}")]
        }
        let items = [
            parameter("bbox-crs", "The CRS of bbox: only CRS84 (WGS84 longitude, latitude).",
                      "{\"type\": \"string\", \"enum\": [\"\(ServerFilters.crs84)\"]}"),
            parameter("datetime", "An instant (RFC 3339): only the incidents their source listed as active then, as `incidents list --at` "
                      + "(from the poll that first listed one to the complete poll that no longer did, or its provider's end). "
                      + "An interval START/END (open ends '..'): only those in force at some time of it, from their start "
                      + "(or first sighting) to the earlier of their end and their clearing.",
                      "{\"type\": \"string\"}"),
            parameter("limit", "Features per page; more than the maximum is cut to it.",
                      "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": \(ServerFilters.maxLimit), \"default\": \(ServerFilters.defaultLimit)}"),
            parameter("after", "Keyset cursor: the page starts after this id (the next link sets it).", "{\"type\": \"integer\", \"minimum\": 0}"),
            parameter("before", "Keyset cursor: the page ends before this id (the prev link sets it).", "{\"type\": \"integer\", \"minimum\": 1}"),
        ]
        var filters: [String] = []
        for filter in IncidentFilter.Parameter.allCases {
            let description = filter.help + (filter.placeholder.isEmpty ? "" : " (\(filter.placeholder))") + "; example: " + filter.example
            let choices = filter.choices.map { ", \"enum\": [" + $0.map { JSONString.quoted($0) }.joined(separator: ", ") + "]" } ?? ""
            switch filter.kind {
            case .flag: filters.append(parameter(filter.name, description + " (true only: leave it out for every incident)", "{\"type\": \"boolean\", \"enum\": [true]}"))
            case .value where filter == .bbox:
                filters.append(parameter(filter.name, "Only incidents whose extent overlaps this WGS84 box: minLon,minLat,maxLon,maxLat (CRS84).",
                                         "{\"type\": \"array\", \"minItems\": 4, \"maxItems\": 4, \"items\": {\"type\": \"number\"}}"))
            case .value: filters.append(parameter(filter.name, description, "{\"type\": \"string\"}"))
            case .repeatable:
                filters.append(parameter(filter.name, description, "{\"type\": \"array\", \"items\": {\"type\": \"string\"\(choices)}}", explode: true))
            }
        }
        func problem(_ status: Int, _ description: String) -> String {
            "\"\(status)\": {\"description\": \(JSONString.quoted(description + " (RFC 9457 problem)")), \"content\": {\"application/problem+json\": {}}}"
        }
        func operation(_ id: String, _ summary: String, _ route: FeatureServer.Route, _ parameters: [String], _ type: String,
                       more: [String] = []) -> String {
            var responses = ["\"200\": {\"description\": \"OK\", \"content\": {\"\(type)\": {}}}",
                             problem(400, "A parameter is malformed"), problem(404, "Not found")]
            if !route.formats.isEmpty { responses.append(problem(406, "Accept accepts none of the formats of f")) }
            if token { responses.append(problem(401, "The bearer token is missing or wrong")) }
            return "{\"get\": {\"operationId\": \"\(id)\", \"summary\": \(JSONString.quoted(summary)), "
                + "\"parameters\": [\((parameters + f(route)).joined(separator: ", "))], "
                + "\"responses\": {\((responses + more).joined(separator: ", "))}}}"
        }
        let featureID = parameter("featureId", "The incident's id.", "{\"type\": \"integer\"}", in: "path", required: true)
        let paths: [(String, String)] = [
            ("/", operation("getLandingPage", "Landing page", .landing, [], "application/json")),
            ("/conformance", operation("getConformanceDeclaration", "Conformance classes", .conformance, [], "application/json")),
            ("/api", operation("getAPI", "This definition", .api, [], "application/vnd.oai.openapi+json;version=3.0")),
            ("/collections", operation("getCollections", "The collections", .collections, [], "application/json")),
            ("/collections/\(collectionID)", operation("describeCollection", "The incidents collection", .collection, [], "application/json")),
            ("/collections/\(collectionID)/items", operation("getFeatures", "Incidents, a page at a time, in id order", .items, items + filters, "application/geo+json")),
            ("/collections/\(collectionID)/items/{featureId}", operation("getFeature", "One incident", .item, [featureID], "application/geo+json")),
            ("/map", operation("getMap", "Live map of the incidents", .map, [
                parameter("refresh", "Seconds between the map's conditional requests for new incidents.",
                          "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 3600, \"default\": 15}"),
            ], "text/html")),
            ("/runs", operation("getRuns", "The run log, newest first", .runs, [
                parameter("source", "Only this source.", "{\"type\": \"string\"}"),
                parameter("limit", "At most this many runs; more than the maximum is cut to it.",
                          "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": \(StatusDocuments.maxRuns), \"default\": 20}"),
            ], "application/json")),
            ("/changes", operation("getChanges", "The change feed: transitions after a cursor, in commit order (Accept: text/event-stream for a stream)", .changes, [
                parameter("after", "The last cursor received (0: from the start); Last-Event-ID for a stream.", "{\"type\": \"integer\", \"minimum\": 0, \"default\": 0}"),
                parameter("limit", "At most this many changes; more than the maximum is cut to it.",
                          "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": \(ChangesDocuments.maxLimit), \"default\": \(ChangesDocuments.defaultLimit)}"),
            ], "application/json")),
            ("/status", operation("getStatus", "Each configured source's health, as incident-scheduler status --format json: 200 when every source is ok (the command exits 0), 503 when one is failing or stale (1 or 3)", .status, [
                parameter(StatusCommand.staleAfter.option.name, StatusCommand.staleAfter.option.help,
                          "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10000, \"default\": 3}"),
            ], "application/json", more: [
                "\"503\": {\"description\": \"A source is failing or stale (the same document), or the configuration cannot be judged (RFC 9457 problem)\", "
                    + "\"content\": {\"application/json\": {}, \"application/problem+json\": {}}}",
            ])),
            ("/stats", operation("getStats", "Counts of the incidents matching the filters", .stats, [items[0]] + filters, "application/json")),
            ("/metrics", operation("getMetrics", "Request counters (Prometheus text format)", .metrics, [], "text/plain")),
        ]
        let json = "{\"openapi\": \"3.0.3\", \"info\": {\"title\": \(JSONString.quoted(title)), \"version\": \"\(BuildInfo.version)\", "
            + "\"description\": \(JSONString.quoted(description))}, \"servers\": [{\"url\": \(JSONString.quoted(base))}], "
            + "\"paths\": {" + paths.map { "\(JSONString.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}}\n"
        return HTTPResponse(status: 200, contentType: "application/vnd.oai.openapi+json;version=3.0", text: json, route: "")
    }
}
