import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// `incidents serve` (issue 21, step 2) as a process on loopback: OGC API – Features documents
/// and their links, keyset paging, `datetime`, the service's behaviour (problems, 304, gzip,
/// CORS, token, SIGTERM) and its access log.
@Suite("End to end: incidents serve", .serialized)
struct ServeEndToEndTests {
    static let ogcCore = "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"

    /// Each feature's geometry as WKT by its `external_id` property: GDAL turns the GeoJSON file
    /// into CSV (in C: about a second for 50,000 features, where JSONSerialization took 5–12 s
    /// per document in the suite). Both sides of the comparison go through the same reader and
    /// writer, so equal coordinates give equal text.
    static func geometries(_ geojson: URL) async throws -> [String: String] {
        let csv = geojson.deletingPathExtension().appendingPathExtension("csv")
        let converted = try await tool("ogr2ogr", ["-f", "CSV", csv.path, geojson.path, "-select", "external_id", "-lco", "GEOMETRY=AS_WKT"])
        #expect(converted.status == 0, "\(converted.stderr)")
        var byID: [String: String] = [:]
        var lines = 0
        for line in try String(contentsOf: csv, encoding: .utf8).split(whereSeparator: \.isNewline).dropFirst() {  // WKT,external_id
            let comma = try #require(line.lastIndex(of: ","))
            byID[String(line[line.index(after: comma)...])] = String(line[..<comma])
            lines += 1
        }
        #expect(byID.count == lines, "each external id once")
        return byID
    }

    /// The incidents of the GDAL test: 50,000, as the issue asks.
    static let gdalIncidents = 50_000
    /// Their SQLite database, built once for both stores (6–10 s in a debug build).
    static let gdalDatabase: String = {
        let directory = (try? TestPaths.temporaryDirectory("serve-gdal"))!
        return (try? ServeFixture.database(gdalIncidents, in: directory))!
    }()

    @Test("GDAL's OGC API – Features driver lists the collection and pages through every feature: the count of stats, the geometries of --format geojson",
          arguments: ServedStore.allCases)
    func gdal(store: ServedStore) async throws {
        try await store.with(Self.gdalDatabase) { database in
            let server = try await ServedProcess(database: database)
            let info = try await tool("ogrinfo", ["-ro", "OAPIF:\(server.base)/"])
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdout.contains("1: incidents"), "\(info.stdout)")
            let directory = try TestPaths.temporaryDirectory("serve-gdal-out")
            let output = directory.appendingPathComponent("walked.geojson")
            let copied = try await tool("ogr2ogr", ["-f", "GeoJSON", output.path, "OAPIF:\(server.base)/", "incidents", "-oo", "PAGE_SIZE=10000"])
            #expect(copied.status == 0, "\(copied.stderr)")
            let walked = try await Self.geometries(output)
            let stats = try await run("incidents", ["stats", "--database", database, "--format", "json"])
            let total = try #require((try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])?["total"] as? Int)
            #expect(total == Self.gdalIncidents)
            #expect(walked.count == total)
            let listed = try await run("incidents", ["list", "--database", database, "--format", "geojson"])
            let listedFile = directory.appendingPathComponent("listed.geojson")
            try Data(listed.stdout.utf8).write(to: listedFile)
            let expected = try await Self.geometries(listedFile)
            #expect(expected.count == total)
            let differing = expected.keys.filter { expected[$0] != walked[$0] }
            #expect(differing.isEmpty, "\(differing.count) geometries differ, e.g. \(differing.prefix(3).map { "\($0): \(expected[$0] ?? "") vs \(walked[$0] ?? "none")" })")
            #expect(expected.values.contains { $0.contains("LINESTRING") }, "lines are among them")
            let result = await server.stop()
            #expect(result.status == 0)
        }
    }

    @Test("landing page, conformance, API, collections: required links, absolute, with their media types")
    func documents() async throws {
        let server = try await ServedProcess(database: ServeFixture.shared)
        let landing = try await server.get("/")
        #expect(landing.status == 200)
        #expect(landing.headers["content-type"] == "application/json")
        let links = try landing.links()
        for (rel, type) in [("self", "application/json"), ("service-desc", "application/vnd.oai.openapi+json;version=3.0"),
                            ("conformance", "application/json"), ("data", "application/json"), ("alternate", "text/html")] {
            #expect(links[rel]?["type"] as? String == type, "landing \(rel)")
            #expect((links[rel]?["href"] as? String)?.hasPrefix(server.base + "/") == true, "landing \(rel) is absolute")
        }
        let conformance = try await server.get("/conformance")
        let classes = try #require(try conformance.json()["conformsTo"] as? [String])
        #expect(classes.contains(Self.ogcCore))
        #expect(classes.count == 4)
        let api = try await server.get("/api")
        #expect(api.headers["content-type"] == "application/vnd.oai.openapi+json;version=3.0")
        let paths = try #require(try api.json()["paths"] as? [String: Any])
        #expect(paths["/collections/incidents/items"] != nil)
        #expect(api.text.contains("\"maximum\": 10000"))
        for filter in ["road", "source", "category", "status", "search", "near", "radius", "seen-since"] {
            #expect(api.text.contains("\"name\": \"\(filter)\""), "the API names the filter \(filter)")
        }
        let collections = try await server.get("/collections")
        let list = try #require(try collections.json()["collections"] as? [[String: Any]])
        #expect(list.map { $0["id"] as? String } == ["incidents"])
        let collection = try await server.get("/collections/incidents")
        let items = try #require(try collection.json()["links"] as? [[String: Any]]).filter { $0["rel"] as? String == "items" }
        #expect(Set(items.compactMap { $0["type"] as? String }) == ["application/geo+json", "text/html"])
        #expect(items.allSatisfy { ($0["href"] as? String)?.hasPrefix(server.base + "/collections/incidents/items") == true })
        let html = try await server.get("/", headers: ["Accept": "text/html,application/xhtml+xml"])
        #expect(html.headers["content-type"] == "text/html; charset=utf-8")
        #expect(html.text.contains("rel=\"service-desc\""))
        let result = await server.stop()
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        #expect(result.stderr.contains("event=serve.stopped"))
        // One access-log line per request, with the route and status.
        let accessLines = result.stderr.split(separator: "\n").filter { $0.contains("event=http.request") }
        #expect(accessLines.count == 6)
        #expect(accessLines.contains { $0.contains("route=/collections/{collectionId}") && $0.contains("status=200") })
    }

    /// Every feature id of a walk through `next` links from `start`.
    static func walk(_ server: ServedProcess, _ start: String, between: (Int) async throws -> Void = { _ in }) async throws -> [Int] {
        var ids: [Int] = []
        var next: String? = server.base + start
        var page = 0
        while let url = next {
            let response = try await ServedProcess.get(URL(string: url)!)
            #expect(response.status == 200, "\(url): \(response.text.prefix(300))")
            #expect(response.headers["content-type"] == "application/geo+json")
            let document = try response.json()
            let features = try #require(document["features"] as? [[String: Any]])
            #expect(document["numberReturned"] as? Int == features.count)
            ids += features.compactMap { $0["id"] as? Int }
            next = try response.links()["next"]?["href"] as? String
            if let next { #expect(next.hasPrefix(server.base + "/collections/incidents/items?")) }
            page += 1
            try await between(page)
        }
        return ids
    }

    @Test("paging: next links walk every feature once in id order; prev goes back; limit is cut to 10,000",
          arguments: ServedStore.allCases)
    func paging(store: ServedStore) async throws {
      try await store.with(ServeFixture.shared) { database in
        let server = try await ServedProcess(database: database)
        let ids = try await Self.walk(server, "/collections/incidents/items?limit=300")
        #expect(ids == Array(1...2000))
        let third = try await server.get("/collections/incidents/items?limit=300&after=600")
        let previous = try #require(try third.links()["prev"]?["href"] as? String)
        #expect(previous.contains("before=601"))
        let back = try await ServedProcess.get(URL(string: previous)!)
        #expect(try (back.json()["features"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == Array(301...600))
        let huge = try await server.get("/collections/incidents/items?limit=10000000")
        #expect(huge.status == 200)
        #expect(try (huge.json()["features"] as? [[String: Any]])?.count == 2000)
        _ = await server.stop()
      }
    }

    @Test("paging while polls commit between pages: no id twice, none that matched throughout skipped")
    func pagingUnderPolls() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-polls")
        let database = try ServeFixture.database(1_000, in: directory)
        let server = try await ServedProcess(database: database)
        let before = Set(try await Self.walk(server, "/collections/incidents/items?limit=1000&category=accident"))
        var poll = ServeFixture.generated(1_000)
        var polls = 0
        let ids = try await Self.walk(server, "/collections/incidents/items?limit=40&category=accident") { page in
            // Each page: a poll drops the first 10 incidents still listed (cleared), changes 10
            // descriptions and adds 10 new ones.
            poll.removeFirst(10)
            for index in poll.indices.prefix(10) { poll[index].description = "changed on page \(page)" }
            poll += ServeFixture.generated(10, seed: UInt64(100 + page), idPrefix: "new\(page)-")
            polls += 1
            let store = try SQLiteStore(path: database, clock: .fixed(ServeFixture.t0.adding(seconds: Int64(60 * page))))
            _ = try store.ingest(PollContext(source: "gits", startedAt: ServeFixture.t0.adding(seconds: Int64(60 * page))),
                                 QueryFixture.Producer(incidents: poll).callAsFunction)
        }
        #expect(polls >= 5)
        #expect(Set(ids).count == ids.count, "no id twice")
        #expect(ids == ids.sorted())
        let after = Set(try await Self.walk(server, "/collections/incidents/items?limit=1000&category=accident"))
        #expect(before.intersection(after).isSubset(of: Set(ids)), "every id that matched before and after was seen")
        #expect(after.subtracting(before).count > 0, "the polls added incidents the walk could see")
        _ = await server.stop()
    }

    @Test("bad input: every parameter malformed, oversized, repeated or SQL-ish is a 400 problem; no SQL text",
          arguments: ServedStore.allCases)
    func badInput(store: ServedStore) async throws {
      try await store.with(ServeFixture.shared) { database in
        let server = try await ServedProcess(database: database)
        let long = String(repeating: "a", count: 2000)
        let cases = [
            "bbox=1,2,3", "bbox=a,b,c,d", "bbox=10,10,0,0", "bbox=0,0,1,1,2,2", "bbox=1,2,3,4&bbox=1,2,3,4", "bbox=nan,0,1,1",
            "bbox-crs=EPSG:4326&bbox=0,0,1,1", "datetime=yesterday", "datetime=2024-05-02T00:00:00Z/2024-05-01T00:00:00Z",
            "datetime=../..%2F..", "datetime=2024-13-01T00:00:00Z", "limit=0", "limit=-5", "limit=1e3", "limit=ten",
            "limit=1&limit=2", "after=-1", "after=1'%20OR%20'1'='1", "before=0", "after=1&before=5",
            "f=xml", "f=json&f=html", "road=", "road=\(long)", "road=a&road=b", "source=", "category=nonsense",
            "status=open", "search=%20", "search=%00", "near=91,0", "near=37,127&near=37,128", "radius=5km", "near=37,127&radius=-1km",
            "seen-since=never", "since=2024-05-01T00:00:00Z&since=2024-05-02T00:00:00Z", "since=2h&until=7d", "active=false", "active=1&active=1",
            "unknown=1", "%FF=1", "road=%FF", "order=id", "f", "sort=id;DROP%20TABLE%20incidents",
            "search='%20OR%201=1%20--", "source=x')%20UNION%20SELECT%20sql%20FROM%20sqlite_master--%20&source=y",
        ]
        for query in cases {
            let response = try await server.get("/collections/incidents/items?" + query)
            let expected = query.hasPrefix("source=x')") || query.hasPrefix("search='") ? 200 : 400
            #expect(response.status == expected, "\(query): \(response.status) \(response.text.prefix(200))")
            if expected == 400 {
                #expect(response.headers["content-type"] == "application/problem+json", "\(query)")
                let problem = try response.json()
                #expect(problem["status"] as? Int == 400)
                #expect(problem["title"] as? String == "Bad Request")
                #expect((problem["detail"] as? String)?.isEmpty == false)
            }
            for word in ["SELECT", "sqlite", "syntax error", "near \""] {
                #expect(!response.text.contains(word) || query.contains(word), "\(query) leaks \(word): \(response.text.prefix(200))")
            }
        }
        for path in ["/../../etc/passwd", "/collections/../../etc/passwd", "/map/..%2F..%2Fetc%2Fpasswd", "/collections/incidents/items/1/../../..",
                     "/collections/other/items", "/collections/incidents/items/abc", "/collections/incidents/items/99999999999999999999",
                     "/map/leaflet.js/../../../../etc/passwd"] {
            let response = try await server.get(path)
            #expect(response.status == 404 || response.status == 400, "\(path): \(response.status)")
            #expect(!response.text.contains("root:"), "\(path)")
        }
        let post = try await server.get("/collections/incidents/items", method: "POST")
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD, OPTIONS")
        let result = await server.stop()
        #expect(!result.stderr.contains("level=error"), "no bad input is a server error: \(result.stderr.suffix(400))")
      }
    }

    /// An instant means what `list --at` means (issue 22: "the server's datetime= instant uses the
    /// same meaning"); an interval, in force at some time of it.
    @Test("datetime against hand-computed sets: instants as list --at (first listing to clear or end), closed and open intervals in force (start or first sighting, end or clearing)",
          arguments: ServedStore.allCases)
    func datetime(store: ServedStore) async throws {
        let directory = try TestPaths.temporaryDirectory("serve-datetime")
        let path = directory.appendingPathComponent("d.sqlite").path
        func at(_ hour: Int) -> UTCInstant { ServeFixture.t0.adding(seconds: Int64(hour * 3600)) }
        func incident(_ id: String, start: Int?, end: Int?) -> Incident {
            Incident(source: "gits", externalID: id, category: .accident, coordinate: Coordinate(latitude: 37, longitude: 127),
                     startedAt: start.map(at), endedAt: end.map(at))
        }
        // a: 10h–20h; b: 30h–open; c: no start (first seen at poll 1, 5h), cleared at 40h; d: 50h–60h, but
        // cleared at 55h (not listed by the complete poll at 55h).
        let first = [incident("a", start: 10, end: 20), incident("b", start: 30, end: nil), incident("c", start: nil, end: nil),
                     incident("d", start: 50, end: 60)]
        for (hour, incidents) in [(5, first), (40, [first[0], first[1], first[3]]), (55, [first[0], first[1]])] {
            let store = try SQLiteStore(path: path, clock: .fixed(at(hour)))
            _ = try store.ingest(PollContext(source: "gits", startedAt: at(hour)), QueryFixture.Producer(incidents: incidents).callAsFunction)
        }
      try await store.with(path) { database in
        let server = try await ServedProcess(database: database)
        func ids(_ datetime: String) async throws -> Set<String> {
            let response = try await server.get("/collections/incidents/items?datetime=" + datetime)
            #expect(response.status == 200, "\(datetime): \(response.text.prefix(200))")
            let features = try #require(try response.json()["features"] as? [[String: Any]])
            return Set(features.compactMap { ($0["properties"] as? [String: Any])?["external_id"] as? String })
        }
        func t(_ hour: Int) -> String { at(hour).rfc3339 }
        // An instant: listed by the polls then, from the poll that first listed it (5h, b too though it
        // starts at 30h) to the complete poll that no longer did (c at 40h, d at 55h) or its provider's end (a at 20h).
        let instants: [(Int, Set<String>)] = [(4, []), (5, ["a", "b", "c", "d"]), (19, ["a", "b", "c", "d"]), (20, ["b", "c", "d"]),
                                              (39, ["b", "c", "d"]), (40, ["b", "d"]), (54, ["b", "d"]), (55, ["b"]), (100, ["b"])]
        for (hour, expected) in instants {
            #expect(try await ids(t(hour)) == expected, "at \(hour)h")
            // The same read as `incidents list --at`.
            let listed = try await run("incidents", ["list", "--at", t(hour), "--format", "json", "--database", database])
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stderr)")
            #expect(Set(rows.compactMap { $0["external_id"] as? String }) == expected, "list --at \(hour)h")
        }
        let states = try await server.get("/collections/incidents/items?status=active&datetime=" + t(15))
        #expect(states.status == 400 && states.text.contains("status and active are states now"), "\(states.text.prefix(300))")
        // An interval: in force at some time of it.
        #expect(try await ids(t(15) + "/" + t(15)) == ["a", "c"])
        #expect(try await ids(t(20) + "/" + t(20)) == ["a", "c"], "both ends are included")
        #expect(try await ids(t(45) + "/" + t(45)) == ["b"], "c was cleared at 40h")
        #expect(try await ids(t(56) + "/" + t(56)) == ["b"], "d was cleared at 55h, before its end")
        #expect(try await ids(t(21) + "/" + t(29)) == ["c"])
        #expect(try await ids(t(21) + "/" + t(30)) == ["b", "c"])
        #expect(try await ids("../" + t(9)) == ["c"])
        #expect(try await ids(t(41) + "/..") == ["b", "d"])
        #expect(try await ids(t(41) + "/") == ["b", "d"])
        #expect(try await ids("../..") == ["a", "b", "c", "d"])
        _ = await server.stop()
      }
    }

    @Test("/changes: pages of the change feed with an absolute next link and the cursor to resume; ndjson; bad parameters are 400; a server-sent-event stream sends a change as its poll commits, resumable by Last-Event-ID")
    func changes() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-changes")
        let database = try ServeFixture.database(50, in: directory)  // one poll: 50 `appeared`, cursors 1…50
        let server = try await ServedProcess(database: database)
        let first = try await server.get("/changes?limit=20")
        #expect(first.status == 200)
        let page = try first.json()
        let changes = try #require(page["changes"] as? [[String: Any]])
        #expect(changes.compactMap { $0["cursor"] as? Int } == Array(1...20))
        #expect(changes.allSatisfy { $0["kind"] as? String == "appeared" && ($0["incident"] as? [String: Any]) != nil })
        #expect(page["cursor"] as? Int == 20)
        let next = try #require((page["links"] as? [[String: Any]])?.first?["href"] as? String)
        #expect(next == server.base + "/changes?after=20&limit=20")
        let second = try await ServedProcess.get(try #require(URL(string: next))).json()
        #expect((second["changes"] as? [[String: Any]])?.compactMap { $0["cursor"] as? Int } == Array(21...40))
        let lines = try await server.get("/changes?after=40&f=ndjson").text.split(separator: "\n")
        #expect(lines.count == 10)
        let empty = try await server.get("/changes?after=50").json()
        #expect((empty["changes"] as? [Any])?.isEmpty == true && empty["cursor"] as? Int == 50, "nothing newer: the same cursor")
        let status = (changes.first?["incident"] as? [String: Any])?["status"] as? String
        #expect(status.flatMap(IncidentStatus.init(rawValue:)) != nil, "the incident as list --format json has it, status included: \(String(describing: status))")
        for bad in ["after=-1", "after=abc", "after=1&after=2", "limit=0", "limit=x", "f=xml", "since=1", "after=99999999999999999999",
                    "after=51", "after=999999&f=ndjson"] {
            let answer = try await server.get("/changes?" + bad)
            #expect(answer.status == 400 && answer.headers["content-type"] == "application/problem+json", "\(bad): \(answer.status)")
        }
        // A cursor this database never gave (another database's, or from before a restore) is
        // refused, by a page and by a stream, rather than waited on in silence.
        let future = try await server.get("/changes?after=51")
        #expect(future.text.contains("cursor 51 is past the change feed's last, 50"), "\(future.text)")
        let futureStream = try RunningProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
            "-sS", "--max-time", "8", "-H", "Accept: text/event-stream", "-H", "Last-Event-ID: 70", "-w", "%{http_code}", server.base + "/changes"])
        #expect(await futureStream.finished(timeout: 30).stdout.hasSuffix("400"))

        // A stream from cursor 50 (by Last-Event-ID), then a poll that adds one incident commits.
        // The URL's after=5 is what an EventSource built from a next link reconnects to: its
        // Last-Event-ID wins, or the stream would repeat 6…50.
        let stream = try RunningProcess(URL(fileURLWithPath: "/usr/bin/curl"), [
            "-sS", "-N", "--max-time", "8", "-H", "Accept: text/event-stream", "-H", "Last-Event-ID: 50", server.base + "/changes?after=5"])
        try await Task.sleep(for: .seconds(2))
        let store = try SQLiteStore(path: database, clock: .fixed(ServeFixture.t0.adding(seconds: 600)))
        _ = try store.ingest(PollContext(source: "gits", startedAt: ServeFixture.t0.adding(seconds: 600)),
                             QueryFixture.Producer(incidents: ServeFixture.generated(51)).callAsFunction)
        let received = await stream.finished(timeout: 30).stdout
        let events = received.components(separatedBy: "\n\n").filter { $0.hasPrefix("id: ") }
        #expect(events.count == 1, "one change after cursor 50: \(received.prefix(600))")
        #expect(events.first?.hasPrefix("id: 51\nevent: change\ndata: {\"cursor\": 51, \"kind\": \"appeared\"") == true, "\(received.prefix(600))")
        _ = await server.stop()
    }

    @Test("ETag and Last-Modified from the last committed poll: 304, and a new poll changes them")
    func conditional() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-etag")
        let database = try ServeFixture.database(50, in: directory)
        let server = try await ServedProcess(database: database)
        let first = try await server.get("/collections/incidents/items?limit=5")
        let tag = try #require(first.headers["etag"])
        #expect(first.headers["last-modified"] == "Wed, 01 May 2024 00:00:00 GMT")
        let again = try await server.get("/collections/incidents/items?limit=5", headers: ["If-None-Match": tag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let other = try await server.get("/collections/incidents/items?limit=6", headers: ["If-None-Match": tag])
        #expect(other.status == 200, "another representation has another tag")
        let store = try SQLiteStore(path: database, clock: .fixed(ServeFixture.t0.adding(seconds: 600)))
        _ = try store.ingest(PollContext(source: "gits", startedAt: ServeFixture.t0.adding(seconds: 600)),
                             QueryFixture.Producer(incidents: ServeFixture.generated(51)).callAsFunction)
        let changed = try await server.get("/collections/incidents/items?limit=5", headers: ["If-None-Match": tag])
        #expect(changed.status == 200)
        #expect(changed.headers["etag"] != tag)
        #expect(changed.headers["last-modified"] == "Wed, 01 May 2024 00:10:00 GMT")
        _ = await server.stop()
    }

    @Test("gzip when asked; CORS for the configured origin only; a bearer token when configured, never logged")
    func serviceBehaviour() async throws {
        let token = "s3cret-token-of-the-test-0123456789"
        let server = try await ServedProcess(database: ServeFixture.shared, ["--cors-origin", "https://app.example.org"],
                                             environment: ["INCIDENTS_SERVE_TOKEN": token])
        let bearer = ["Authorization": "Bearer " + token]
        let refused = try await server.get("/collections/incidents/items")
        #expect(refused.status == 401)
        #expect(refused.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        #expect(refused.headers["content-type"] == "application/problem+json")
        let wrong = try await server.get("/collections/incidents/items", headers: ["Authorization": "Bearer " + token.dropLast() + "x"])
        #expect(wrong.status == 401)
        let plain = try await server.get("/collections/incidents/items?limit=500", headers: bearer)
        #expect(plain.status == 200)
        let zipped = try await server.get("/collections/incidents/items?limit=500",
                                          headers: bearer.merging(["Accept-Encoding": "gzip", "Origin": "https://app.example.org"]) { $1 })
        #expect(zipped.headers["access-control-allow-origin"] == "https://app.example.org")
        // URLSession inflates a gzip body itself: the same JSON, sent compressed.
        #expect(zipped.headers["content-encoding"] == "gzip")
        #expect(try (zipped.json()["features"] as? [[String: Any]])?.count == 500)
        let foreign = try await server.get("/", headers: bearer.merging(["Origin": "https://evil.example"]) { $1 })
        #expect(foreign.headers["access-control-allow-origin"] == nil)
        let result = await server.stop()
        #expect(!result.stderr.contains(token))
        #expect(!result.stderr.contains(String(token.dropLast())))
    }

    @Test("1,000 concurrent clients are all answered; a client sending a byte a second blocks nobody")
    func concurrency() async throws {
        let server = try await ServedProcess(database: ServeFixture.shared)
        // Python's threads as clients: 1,000 connections at once, and one slow client that sends
        // its request a byte a second while the others are served.
        let program = #"""
        import socket, sys, threading, time
        port = int(sys.argv[1]); statuses = []; lock = threading.Lock()
        def slow():
            s = socket.create_connection(("127.0.0.1", port)); request = b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n"
            for byte in request[:12]:
                s.send(bytes([byte])); time.sleep(1)
        threading.Thread(target=slow, daemon=True).start()
        time.sleep(0.5)
        def client():
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=60)
                s.sendall(b"GET /collections/incidents/items?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                status = data.split(b" ", 2)[1].decode()
            except Exception as e:
                status = type(e).__name__
            with lock: statuses.append(status)
        threads = [threading.Thread(target=client) for _ in range(1000)]
        start = time.time()
        for t in threads: t.start()
        for t in threads: t.join()
        print(len([s for s in statuses if s == "200"]), sorted(set(statuses)), round(time.time() - start, 2))
        """#
        let clients = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", program, String(server.port)])
        let result = await clients.finished(timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("1000 ['200']"), "\(result.stdout)")
        let seconds = Double(result.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99
        #expect(seconds < 10, "the slow client held up the others: \(result.stdout)")
        // SIGTERM while a client sends half a request and another never reads its large body:
        // the server cuts both off and ends by itself.
        let stuck = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", #"""
            import socket, sys, time
            port = int(sys.argv[1])
            half = socket.create_connection(("127.0.0.1", port)); half.send(b"GET /sta")
            idle = socket.create_connection(("127.0.0.1", port))
            # An event stream, which never ends by itself: a page of items (1.4 MB) can sit whole
            # in the kernel's socket buffers and be complete before SIGTERM.
            idle.send(b"GET /changes HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            print("connected", flush=True); time.sleep(60)
            """#, String(server.port)])
        while !stuck.stdoutSoFar.contains("connected") && stuck.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(500))
        let stopped = await server.stop()
        stuck.send(SIGKILL)
        #expect(stopped.status == 0, "\(stopped.stderr.suffix(300))")
        #expect(stopped.stderr.contains("complete=false"), "the body cut off is logged as incomplete")
        #expect(stopped.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("ts=") }, "every line is logfmt")
    }

    @Test("the live map in headless Chromium: markers and lines of the visible area appear; a poll lands and its incident appears without a reload")
    func liveMap() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-map")
        let database = try ServeFixture.database(50, in: directory)
        let server = try await ServedProcess(database: database)
        let profile = try TestPaths.temporaryDirectory("chromium")
        // A window that shows every incident of the fixture at the map's first view. Virtual time: the page's one-second refreshes run as fast as the server answers them,
        // for 600 virtual seconds; the poll lands (in real time) while they run.
        let browser = try RunningProcess(HeadlessBrowser.executable, [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile.path)",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--virtual-time-budget=600000", "--window-size=1600,1200", "--dump-dom",
            server.base + "/map?refresh=1",
        ])
        let deadline = Date().addingTimeInterval(60)
        while !server.process.stderrSoFar.contains("status=304") && Date() < deadline && browser.process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(server.process.stderrSoFar.contains("status=304"), "the page asked again with the ETag before the poll")
        var incidents = ServeFixture.generated(50)
        var new = Incident(source: "gits", externalID: "new-after-load", category: .accident, description: "<b>landed</b>",
                           coordinate: Coordinate(latitude: 36.5, longitude: 127.8), startedAt: ServeFixture.t0)
        new.startedAt = ServeFixture.t0
        incidents.append(new)
        let store = try SQLiteStore(path: database, clock: .fixed(ServeFixture.t0.adding(seconds: 60)))
        _ = try store.ingest(PollContext(source: "gits", startedAt: ServeFixture.t0.adding(seconds: 60)),
                             QueryFixture.Producer(incidents: incidents).callAsFunction)
        let result = await browser.finished(timeout: 120)
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        let dom = result.stdout
        #expect(MapCLITests.attribute("data-features", in: dom) == "51", "the new incident was loaded: \(dom.prefix(300))")
        #expect(MapCLITests.attribute("data-ids", in: dom)?.split(separator: ",").last == "51")
        // Each feature is an SVG path: 40 points as circle markers, 10 LineStrings as lines, and the new point.
        #expect(dom.components(separatedBy: "class=\"incident-point").count - 1 == 41)
        #expect(dom.components(separatedBy: "class=\"incident-line").count - 1 == 10)
        #expect(!dom.contains("<b>landed</b>"), "feed text stays text")
        let log = await server.stop().stderr
        let refreshes = log.split(separator: "\n").filter { $0.contains("path=/collections/incidents/items") }
        #expect(refreshes.filter { $0.contains("status=304") }.count >= 2)
        #expect(refreshes.filter { $0.contains("status=200") }.count >= 2, "loaded, then loaded again once the poll landed")
    }

    @Test("/status is incident-scheduler status --format json over the configured sources, read for each request: 200 when it exits 0, 503 when it exits 3; stale-after; a configuration it cannot read is a 503 problem (status exits 78)")
    func status() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-status")
        let database = directory.appendingPathComponent("status.sqlite").path
        // A poll now, so that gits is fresh (interval 5 min, stale after 3 intervals).
        let now = UTCInstant(secondsSince1970: Int64(Date().timeIntervalSince1970))
        let store = try SQLiteStore(path: database, clock: .fixed(now))
        _ = try store.ingest(PollContext(source: "gits", startedAt: now), QueryFixture.Producer(incidents: ServeFixture.generated(20)).callAsFunction)
        let configuration = directory.appendingPathComponent("config.json")
        func configure(_ sources: [String]) throws {
            let list = sources.map { "{\"name\": \"\($0)\", \"provider\": \"gits\", \"keyEnv\": \"SERVE_STATUS_KEY\", \"interval\": \"5m\"}" }
            try Data("{\"sources\": [\(list.joined(separator: ", "))]}".utf8).write(to: configuration)
        }
        try configure(["gits"])
        let server = try await ServedProcess(database: database, ["--config", configuration.path])
        /// `/status` + `query` against `status --format json` + `options`: the same body, and the HTTP status of the exit status.
        func same(_ query: String = "", _ options: [String] = [], http: Int, exit: Int32) async throws {
            let served = try await server.get("/status" + query)
            let cli = try await run("incident-scheduler", ["status", "--config", configuration.path, "--database", database, "--format", "json"] + options)
            #expect(cli.status == exit, "\(cli.stderr)")
            #expect(served.status == http, "\(query): \(served.text.prefix(300))")
            #expect(served.headers["content-type"] == "application/json")
            #expect(served.text == cli.stdout, "/status\(query) is status --format json \(options)")
        }
        try await same(http: 200, exit: 0)
        let freshBody = try await server.get("/status").body
        let fresh = try #require(try JSONSerialization.jsonObject(with: freshBody) as? [[String: Any]])
        #expect(fresh.map { $0["health"] as? String } == ["ok"])
        #expect(fresh.first?["active_incidents"] as? Int ?? 0 > 0)
        #expect(fresh.first?["stale_runs"] as? Int == 0)
        // A source added to the configuration, never polled: stale, read without a restart.
        try configure(["gits", "never-polled"])
        try await same(http: 503, exit: 3)
        try await same("?stale-after=7", ["--stale-after", "7"], http: 503, exit: 3)
        let staleBody = try await server.get("/status?stale-after=7").body
        let stale = try #require(try JSONSerialization.jsonObject(with: staleBody) as? [[String: Any]])
        #expect(stale.map { $0["health"] as? String } == ["ok", "stale"])
        #expect(stale.first?["stale_after_seconds"] as? Int == 7 * 300)
        for bad in ["stale-after=0", "stale-after=x", "stale-after=2&stale-after=3", "f=html", "active"] {
            let answer = try await server.get("/status?" + bad)
            #expect(answer.status == 400 && answer.headers["content-type"] == "application/problem+json", "\(bad): \(answer.status)")
        }
        try Data("{\"sources\": [".utf8).write(to: configuration)
        let broken = try await server.get("/status")
        #expect(broken.status == 503)
        #expect(broken.headers["content-type"] == "application/problem+json")
        #expect((try broken.json()["detail"] as? String)?.hasPrefix("no sources to judge: ") == true, "\(broken.text)")
        let cli = try await run("incident-scheduler", ["status", "--config", configuration.path, "--database", database])
        #expect(cli.status == 78)
        _ = await server.stop()
    }

    @Test("one incident, /runs, /stats (as incidents stats --format json) and /metrics (requests by route and status)")
    func otherEndpoints() async throws {
        let server = try await ServedProcess(database: ServeFixture.shared)
        let feature = try await server.get("/collections/incidents/items/7")
        #expect(feature.headers["content-type"] == "application/geo+json")
        let document = try feature.json()
        #expect(document["type"] as? String == "Feature")
        #expect(document["id"] as? Int == 7)
        #expect((document["properties"] as? [String: Any])?["external_id"] as? String == "g6")
        #expect(try feature.links()["collection"]?["href"] as? String == server.base + "/collections/incidents")
        let missing = try await server.get("/collections/incidents/items/99999")
        #expect(missing.status == 404)
        #expect(missing.headers["content-type"] == "application/problem+json")
        let runs = try await server.get("/runs?limit=5")
        let runList = try #require(try JSONSerialization.jsonObject(with: runs.body) as? [[String: Any]])
        #expect(runList.map { $0["source"] as? String } == ["gits"])
        #expect(runList.first?["inserted"] as? Int == 2000)
        let stats = try await server.get("/stats?category=accident")
        let cli = try await run("incidents", ["stats", "--database", ServeFixture.shared, "--category", "accident", "--format", "json"])
        #expect(stats.text == cli.stdout, "/stats is incidents stats --format json")
        let metrics = try await server.get("/metrics")
        #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        for line in ["incidents_http_requests_total{route=\"/collections/{collectionId}/items/{featureId}\",status=\"200\"} 1",
                     "incidents_http_requests_total{route=\"/collections/{collectionId}/items/{featureId}\",status=\"404\"} 1",
                     "incidents_http_requests_total{route=\"/runs\",status=\"200\"} 1", "incidents_http_requests_total{route=\"/stats\",status=\"200\"} 1"] {
            #expect(metrics.text.contains(line + "\n"), "\(line) in \(metrics.text)")
        }
        _ = await server.stop()
    }
}
