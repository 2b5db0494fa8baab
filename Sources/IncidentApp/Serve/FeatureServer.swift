import Foundation
import IncidentCore
import IncidentFeeds
import IncidentHTTP
import IncidentJSON
import IncidentNetworking
import Synchronization

/// What `incidents serve` answers: routing, then what every response shares (the bearer token,
/// CORS, `ETag`/`Last-Modified` and 304, gzip, RFC 9457 problems), then the route's body.
///
/// Every failure a request can cause is a problem document with status 400 (a parameter),
/// 404, 405 or 401; a failure of the database is a 503 whose detail says only that, the cause
/// going to the log (redacted), never to the client: no SQL text leaves the server.
struct FeatureServer: Sendable {
    struct Settings: Sendable {
        /// The public URL of the server, without a trailing `/`; nil: `http://` + the request's `Host`.
        var baseURL: String?
        /// Origins allowed to read responses from a browser (`*`: any).
        var corsOrigins: [String]
        /// The bearer token required, nil for none.
        var token: String?
    }

    let readers: ServerReaders
    let settings: Settings
    let clock: UTCClock
    let logger: Logger
    /// The configured sources `/status` judges (``StatusDocuments/status(_:_:now:sources:)``).
    let sources: @Sendable () throws -> [SourceDefinition]
    let counters = RequestCounters()

    /// The routes, as their labels in the log and the metrics.
    enum Route: String, CaseIterable {
        case landing = "/", conformance = "/conformance", api = "/api", collections = "/collections"
        case collection = "/collections/{collectionId}", items = "/collections/{collectionId}/items"
        case item = "/collections/{collectionId}/items/{featureId}"
        case map = "/map", mapAsset = "/map/{asset}", runs = "/runs", status = "/status", stats = "/stats", metrics = "/metrics"
        case changes = "/changes"
        case unknown = "unknown"

        /// The formats the route serves, the default first: `f` takes exactly these, `Accept`
        /// chooses among them (``OGC/Format/negotiate(_:offered:)``), and `/api` lists them as
        /// the route's `f` enum. Empty: the route takes no `f` (and serves one media type).
        var formats: [OGC.Format] {
            switch self {
            case .landing, .conformance, .collections, .collection, .item: [.json, .html]
            case .items: [.json, .html, .ndjson, .csv]
            case .changes: [.json, .ndjson]
            case .api, .runs, .status, .stats: [.json]
            case .map, .mapAsset, .metrics, .unknown: []
            }
        }
    }

    /// The route of `path`, and the feature id or asset name it holds. Paths are matched whole,
    /// segment by segment: `..`, `//` or an encoded `/` never reach another route or a file.
    /// A path holding a control character (a decoded `%00`) is no route.
    static func route(_ request: HTTPRequest) -> (Route, String?) {
        request.pathHasControlCharacters ? (.unknown, nil) : route(request.path)
    }

    static func route(_ path: String) -> (Route, String?) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch segments {
        case [""]: return (.landing, nil)
        case ["conformance"]: return (.conformance, nil)
        case ["api"]: return (.api, nil)
        case ["collections"]: return (.collections, nil)
        case [OGC.collectionID]: return (.unknown, nil)
        case ["collections", OGC.collectionID]: return (.collection, nil)
        case ["collections", OGC.collectionID, "items"]: return (.items, nil)
        case _ where segments.count == 4 && segments[0] == "collections" && segments[1] == OGC.collectionID && segments[2] == "items":
            return (.item, segments[3])
        case ["map"]: return (.map, nil)
        case _ where segments.count == 2 && segments[0] == "map" && MapAssets.files[segments[1]] != nil: return (.mapAsset, segments[1])
        case ["runs"]: return (.runs, nil)
        case ["status"]: return (.status, nil)
        case ["stats"]: return (.stats, nil)
        case ["metrics"]: return (.metrics, nil)
        case ["changes"]: return (.changes, nil)
        default: return (.unknown, nil)
        }
    }

    /// Answers one request (on a connection thread of the HTTP server).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let (route, argument) = Self.route(request)
        var response: HTTPResponse
        do {
            response = try answer(request, route, argument)
        } catch {
            response = problem(error, request, route: route)
        }
        response.route = route.rawValue
        return shared(response, request)
    }

    /// A streamed body's producer failed before its first byte.
    func failure(_ error: any Error, _ request: HTTPRequest) -> HTTPResponse {
        let route = Self.route(request).0
        return shared(problem(error, request, route: route), request)
    }

    /// The access log line and the counters, once a response is finished or abandoned.
    func log(_ exchange: HTTPExchange) {
        counters.count(route: exchange.route, status: exchange.status, seconds: exchange.seconds)
        logger.log(exchange.status >= 500 ? .warning : .info, "http.request", [
            "method": exchange.method, "path": String(exchange.path.prefix(200)), "route": exchange.route,
            "status": exchange.status, "bytes": exchange.bytes, "duration_s": exchange.seconds, "client": exchange.client,
            "complete": exchange.complete ? "true" : "false",
        ])
    }

    private func answer(_ request: HTTPRequest, _ route: Route, _ argument: String?) throws -> HTTPResponse {
        if request.method == "OPTIONS" { return HTTPResponse(status: 204, route: route.rawValue) }
        guard request.method == "GET" || request.method == "HEAD" else {
            throw Problem(405, "method \(ServerFilters.shown(request.method)) is not allowed; this API is read-only (GET, HEAD)",
                          headers: [("Allow", "GET, HEAD, OPTIONS")])
        }
        if let token = settings.token, !Self.authorized(request.header("Authorization"), token: token) {
            throw Problem(401, "this server requires a bearer token (Authorization: Bearer …)",
                          headers: [("WWW-Authenticate", "Bearer realm=\"incidents\"")])
        }
        let base = try baseURL(request)
        let now = clock.now()
        switch route {
        case .unknown:
            throw Problem(404, "no resource at \(ServerFilters.shown(request.path)) (start at \(base)/)")
        case .metrics:
            try noParameters(request)
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", text: counters.render(), route: route.rawValue)
        case .mapAsset:
            return try MapAssets.response(argument ?? "")
        case .changes where ChangesDocuments.wantsStream(request):
            // Before negotiation and caching: a stream is never cached, a page is. An `f` is still one of the route's.
            if request.query.contains(where: { $0.name == "f" }) { _ = try OGC.Format.negotiate(request, offered: route.formats) }
            return try ChangesDocuments.stream(try ChangesDocuments.parameters(request, format: .json), clock: clock, readers)
        case .map:
            for (name, value) in request.query where name != "refresh" || !(1...3600).contains(Int(value ?? "") ?? 0) {
                throw UsageError("parameter \(ServerFilters.shown(name)): the map takes only refresh=SECONDS (1…3600)")
            }
            return try cached(request, now: now) { MapAssets.page(base: base) }
        default:
            break
        }
        let format = try OGC.Format.negotiate(request, offered: route.formats)
        switch route {
        case .landing:
            try OGC.onlyFormat(request)
            return try cached(request, now: now) { OGC.landing(base, format) }
        case .conformance:
            try OGC.onlyFormat(request)
            return try cached(request, now: now) { OGC.conformance(base, format) }
        case .api:
            try OGC.onlyFormat(request)
            return try cached(request, now: now) { OGC.openAPI(base, token: settings.token != nil) }
        case .collections:
            try OGC.onlyFormat(request)
            return try cached(request, now: now) { OGC.collections(base, format) }
        case .collection:
            try OGC.onlyFormat(request)
            return try cached(request, now: now) { OGC.collection(base, format) }
        case .changes:
            let parameters = try ChangesDocuments.parameters(request, format: format)
            return try cached(request, now: now) { try ChangesDocuments.page(parameters, base: base, now: now, readers) }
        case .items:
            let filters = try ServerFilters(request.query, now: now)
            return try cached(request, now: now) { ItemsPage(filters: filters, parameters: request.query, base: base, format: format, readers: readers).response() }
        case .item:
            try OGC.onlyFormat(request)
            guard let text = argument, !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }),
                  let id = Int64(text) else {
                throw Problem(404, "no incident \(ServerFilters.shown(argument ?? "")) (ids are whole numbers)")
            }
            return try cached(request, now: now) {
                guard let found = try readers.withReader({ try $0.history(ofIncident: id) }) else {
                    throw Problem(404, "no incident \(id)")
                }
                return ItemsPage.single(found.current, now: now, base: base, format: format)
            }
        case .runs:
            return try cached(request, now: now) { try StatusDocuments.runs(request.query, readers) }
        case .status:
            // Never a 304: a source turns stale with time alone, within the minute of a tag.
            return try StatusDocuments.status(request.query, readers, now: now, sources: sources)
        case .stats:
            let filters = try ServerFilters(request.query, now: now, allowed: ["f", "bbox-crs"])
            return try cached(request, now: now) { try StatusDocuments.stats(filters.query, readers) }
        case .unknown, .metrics, .map, .mapAsset:
            throw Problem(404, "no resource at \(ServerFilters.shown(request.path))")
        }
    }

    /// RFC 6750 §2.1: `Bearer TOKEN`, compared in constant time.
    static func authorized(_ header: String?, token: String) -> Bool {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
        let given = Array(header.dropFirst(7).utf8), wanted = Array(token.utf8)
        guard given.count == wanted.count else { return false }
        return zip(given, wanted).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `--base-url`, else `http://` and the `Host` header (checked: a host name or address and
    /// an optional port, so that a forged one cannot inject text into links); an HTTP/1.0
    /// request, which need not send `Host` (RFC 9112 §3.2 asks it of HTTP/1.1), without one gets
    /// the address and port it came in on.
    func baseURL(_ request: HTTPRequest) throws -> String {
        if let base = settings.baseURL { return base }
        if request.header("Host") == nil, request.version == "HTTP/1.0", !request.local.isEmpty { return "http://" + request.local }
        guard let host = request.header("Host"), !host.isEmpty, host.utf8.count <= 255,
              host.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-:[]".unicodeScalars.contains($0)) })
        else { throw Problem(400, "the Host header is missing or is not a host[:port]") }
        return "http://" + host
    }

    private func noParameters(_ request: HTTPRequest) throws {
        if let first = request.query.first { throw UsageError("unknown parameter \(ServerFilters.shown(first.name)) (this resource takes none)") }
    }

    // MARK: Shared behaviour

    /// `ETag` and `Last-Modified` from the last committed poll (the newest run of the run
    /// log), with `304 Not Modified` for a request that has them (`If-None-Match` first,
    /// RFC 9110 §13.2.2). The tag also holds the representation (path, parameters, format,
    /// coding) and the minute, as an incident's state is judged at the time of the request
    /// (a planned incident starts without a poll), so a cached page is at most a minute behind.
    /// `If-Modified-Since` is compared with `Last-Modified` at HTTP dates' one-second
    /// resolution: the server's own `Last-Modified` gets 304 until a poll lands (§13.1.3).
    private func cached(_ request: HTTPRequest, now: UTCInstant, _ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        let lastRun = try readers.withReader { try $0.runs(source: nil, limit: 1, failuresFirst: false).first }
        var hasher = FNV1a()
        hasher.add(request.path)
        for (name, value) in request.query { hasher.add(name + "=" + (value ?? "")) }
        for header in ["Accept", "Accept-Encoding", "Authorization"] { hasher.add(request.header(header) ?? "") }
        let tag = "\"\(lastRun?.id ?? 0)-\(now.secondsSince1970 / 60)-\(String(hasher.value, radix: 36))\""
        let modified = lastRun.map { HTTPDate.format($0.finishedAt) }
        var headers: [(name: String, value: String)] = [("ETag", tag)]
        if let modified { headers.append(("Last-Modified", modified)) }
        let notModified: Bool
        if let match = request.header("If-None-Match") {
            notModified = match == "*" || match.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") == tag }
        } else if let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse), let last = lastRun?.finishedAt {
            notModified = last.secondsSince1970 <= since.secondsSince1970
        } else {
            notModified = false
        }
        if notModified { return HTTPResponse(status: 304, headers: headers, route: "") }
        var response = try body()
        if response.status == 200 { response.headers += headers }
        return response
    }

    /// CORS, caching policy, gzip and `HEAD` for every response.
    private func shared(_ response: HTTPResponse, _ request: HTTPRequest) -> HTTPResponse {
        var response = response
        if response.header("Cache-Control") == nil {  // an event stream says no-store itself
            response.headers.append(("Cache-Control", settings.token == nil ? "no-cache" : "private, no-cache"))
        }
        var vary = ["Accept", "Accept-Encoding"]
        if let origin = request.header("Origin"), settings.corsOrigins.contains("*") || settings.corsOrigins.contains(origin) {
            response.headers.append(("Access-Control-Allow-Origin", settings.corsOrigins.contains("*") ? "*" : origin))
            response.headers.append(("Access-Control-Expose-Headers", "ETag, Last-Modified, Link"))
            if request.method == "OPTIONS" {
                response.headers.append(("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"))
                response.headers.append(("Access-Control-Allow-Headers", "Authorization, If-None-Match, If-Modified-Since"))
                response.headers.append(("Access-Control-Max-Age", "600"))
            }
            vary.append("Origin")
        }
        response.headers.append(("Vary", vary.joined(separator: ", ")))
        if Self.acceptsGzip(request.header("Accept-Encoding")), response.status == 200 || response.status >= 400,
           response.header("Content-Encoding") == nil, !(response.header("Content-Type") ?? "").hasPrefix("image/") {
            response = Self.gzipped(response)
        }
        return response
    }

    /// Whether `Accept-Encoding` lists gzip (or `*`) without `q=0` (RFC 9110 §12.5.3).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        for element in header.lowercased().split(separator: ",") {
            let parts = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }

    /// The body gzip-compressed as it is written (``GzipDeflater``).
    static func gzipped(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(("Content-Encoding", "gzip"))
        let body = response.body
        response.body = .stream { writer in
            let deflater = try GzipDeflater()
            writer.transform = { bytes, end in try deflater.deflate(bytes, finish: end) }
            switch body {
            case .bytes(let bytes): try bytes.withUnsafeBytes { try writer.write(bytes: $0) }
            case .stream(let produce): try produce(writer)
            }
        }
        return response
    }

    /// An error as an RFC 9457 problem document (`application/problem+json`).
    func problem(_ error: any Error, _ request: HTTPRequest, route: Route) -> HTTPResponse {
        let problem: Problem
        switch error {
        case let error as Problem: problem = error
        case let error as UsageError: problem = Problem(400, error.message)
        case let error as QueryError: problem = Problem(400, error.message)
        case is ServerReaders.Busy:
            problem = Problem(503, "every database connection is busy; try again shortly", headers: [("Retry-After", "1")])
        default:
            logger.log(.error, "http.failed", ["route": route.rawValue, "error": ErrorText.describe(error)])
            problem = Problem(503, "the database could not be read; the server's log says why", headers: [("Retry-After", "5")])
        }
        var members: [(String, FieldValue)] = [
            ("type", .text("about:blank")), ("title", .text(HTTPStatus.phrase(problem.status))),
            ("status", .integer(Int64(problem.status))), ("detail", .text(problem.detail)),
        ]
        if route == .items || route == .stats { members.append(("instance", .text(String(request.path.prefix(200))))) }
        return HTTPResponse(status: problem.status, headers: [("Content-Type", "application/problem+json")] + problem.headers,
                            body: .bytes(Array((IncidentOutput.object(members) + "\n").utf8)), route: route.rawValue)
    }
}

/// A request the server refuses, with its status and what to say.
struct Problem: Error {
    var status: Int
    var detail: String
    var headers: [(name: String, value: String)] = []

    init(_ status: Int, _ detail: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.detail = detail
        self.headers = headers
    }
}

/// Reason phrases of the statuses the server sends (RFC 9110 §15).
enum HTTPStatus {
    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }
}

/// IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ instant: UTCInstant) -> String {
        let text = instant.rfc3339  // 2024-01-01T08:10:00Z
        let day = days[Int(((instant.secondsSince1970 / 86_400) % 7 + 7) % 7)]
        let month = months[(Int(text.dropFirst(5).prefix(2)) ?? 1) - 1]
        return "\(day), \(text.dropFirst(8).prefix(2)) \(month) \(text.prefix(4)) \(text.dropFirst(11).prefix(8)) GMT"
    }

    /// An IMF-fixdate; nil for anything else (the obsolete forms are not sent by today's clients).
    static func parse(_ text: String) -> UTCInstant? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let month = months.firstIndex(of: String(parts[2])) else { return nil }
        return UTCInstant(rfc3339: "\(parts[3])-\(String(format: "%02d", month + 1))-\(parts[1])T\(parts[4])Z")
    }
}

/// FNV-1a, 64 bits: the representation part of an ETag (not a security boundary).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 + [0] {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
    }
}

/// Requests by route and status, and their time, for `/metrics` (Prometheus text format 0.0.4).
final class RequestCounters: Sendable {
    private let counts = Mutex<[String: (requests: Int, seconds: Double)]>([:])

    func count(route: String, status: Int, seconds: Double) {
        counts.withLock { all in
            let key = "route=\"\(Metrics.escape(route))\",status=\"\(status)\""
            let old = all[key] ?? (0, 0)
            all[key] = (old.requests + 1, old.seconds + seconds)
        }
    }

    func render() -> String {
        let all = counts.withLock { $0 }.sorted { $0.key < $1.key }
        var text = "# HELP incidents_http_requests_total HTTP requests answered, by route and status.\n"
            + "# TYPE incidents_http_requests_total counter\n"
        for (labels, value) in all { text += "incidents_http_requests_total{\(labels)} \(value.requests)\n" }
        text += "# HELP incidents_http_request_seconds_total Time spent answering, by route and status (seconds).\n"
            + "# TYPE incidents_http_request_seconds_total counter\n"
        for (labels, value) in all { text += "incidents_http_request_seconds_total{\(labels)} \(value.seconds)\n" }
        return text
    }
}
