import Foundation
import TestSupport
import Testing

/// Open511 pages over a real HTTP server on loopback, and the international providers through
/// `ingest --file`, with the built executables and a temporary SQLite file.
@Suite("End to end: Open511 pagination and international files", .serialized)
struct InternationalEndToEndTests {
    static let key = "SECRET+o511/Key=="
    static let encodedKey = "SECRET%2Bo511%2FKey%3D%3D"
    static let path = "/traffic/events"

    /// One Open511 page of `ids`, linking to `next` (a JSON value: a quoted URL, or nil for none).
    static func page(_ ids: [String], next: String?) -> ResponseSpec {
        let events = ids.map { id in
            #"{"id": "test.org/\#(id)", "status": "ACTIVE", "headline": "Event \#(id)", "event_type": "INCIDENT", "event_subtypes": ["ACCIDENT"], "severity": "MINOR", "created": "2024-03-01T10:00Z", "updated": "2024-03-01T10:00Z", "geography": {"type": "Point", "coordinates": [-122.4, 37.8]}, "schedule": {"intervals": ["2024-03-01T10:00Z/"]}}"#
        }
        let pagination = next.map { #"{"offset": 0, "next_url": \#($0)}"# } ?? #"{"offset": 0}"#
        return ResponseSpec(status: 200, headers: ["Content-Type": "application/json"],
                            body: #"{"events": [\#(events.joined(separator: ","))], "pagination": \#(pagination), "meta": {"version": "v1"}}"#)
    }

    static func config(_ ws: Workspace, _ server: LoopbackServer) throws -> String {
        try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "sf511", "provider": "open511", "keyEnv": "O511_KEY",
              "baseURL": "\(server.url(Self.path).absoluteString)", "retry": {"maxRetries": 0}}]}
            """)
    }

    static func runOnce(_ config: String) async throws -> ProcessResult {
        try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["O511_KEY": Self.key])
    }

    static func runsJSON(_ ws: Workspace) async throws -> [[String: Any]] {
        let result = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    }

    /// Three pages: the first links on relatively with the key echoed in another encoding,
    /// the second absolutely without the key, the third ends.
    static func threePages(_ server: LoopbackServer, firstIDs: [String] = ["1", "2"]) -> [ResponseSpec] {
        [Self.page(firstIDs, next: #""/traffic/events?api_key=SECRET+o511/Key==&offset=2""#),
         Self.page(["3", "4"], next: #""\#(server.url(Self.path).absoluteString)?offset=4""#),
         Self.page(["5"], next: nil)]
    }

    @Test("three pages are read as one poll; every request carries exactly one key, encoded once; no key in any output")
    func threePages() async throws {
        let server = try await LoopbackServer.start()
        try await server.script(Self.path, Self.threePages(server))
        let ws = try Workspace()
        let result = try await Self.runOnce(try Self.config(ws, server))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source=sf511 provider=open511 status=succeeded fetched=5 inserted=5"), "\(result.stderr)")
        let requests = try await server.requests(path: Self.path)
        #expect(requests.count == 3)
        #expect(requests.map { $0.queryValues("api_key") } == Array(repeating: [Self.encodedKey], count: 3))
        #expect(requests.map { $0.queryValues("offset") } == [[], ["2"], ["4"]])
        #expect(requests.first?.queryValues("format") == ["json"])
        let rows = try await ws.listJSON(["--order", "source"])
        #expect(rows.compactMap { $0.text("external_id") }.sorted() == (1...5).map { "test.org/\($0)" })
        #expect(rows.allSatisfy { $0.text("category") == "accident" && $0.text("started_at") == "2024-03-01T10:00:00Z" })
        expectNoKey(Self.key, in: [result.stdout, result.stderr], database: ws.databaseBytes())
        server.stop()
    }

    @Test("a failing second page: the run fails naming the page, nothing is stored, nothing is cleared")
    func failingSecondPage() async throws {
        let server = try await LoopbackServer.start()
        try await server.script(Self.path, Self.threePages(server))
        let ws = try Workspace()
        let config = try Self.config(ws, server)
        #expect(try await Self.runOnce(config).status == 0)
        let before = try await ws.listJSON()
        #expect(before.count == 5)

        // The next answer's first page lists only event 1: read alone, it would clear 2 to 5.
        try await server.script(Self.path, [Self.page(["1"], next: #""/traffic/events?offset=1""#), .status(500, body: "internal error")])
        let failed = try await Self.runOnce(config)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("sf511 page 2: HTTP 500 Internal Server Error"), "\(failed.stderr)")
        #expect(failed.stderr.contains("HTTP 500"), "\(failed.stderr)")
        let after = try await ws.listJSON()
        #expect(after.count == 5)
        #expect(after.allSatisfy { $0["cleared_at"] is NSNull })
        #expect(after.map { $0.text("last_seen_at") } == before.map { $0.text("last_seen_at") })
        let runs = try await Self.runsJSON(ws)
        #expect(runs.first?["status"] as? String == "failed")
        #expect((runs.first?["error"] as? String)?.contains("sf511 page 2") == true)
        #expect(runs.first?["fetched"] as? Int == 0)
        expectNoKey(Self.key, in: [failed.stdout, failed.stderr], database: ws.databaseBytes())
        server.stop()
    }

    @Test("a next_url that loops back is refused: nothing stored")
    func loop() async throws {
        let server = try await LoopbackServer.start()
        let second = #""\#(server.url(Self.path).absoluteString)?offset=2""#
        try await server.script(Self.path, [Self.page(["1"], next: second), Self.page(["2"], next: second)])
        let ws = try Workspace()
        let result = try await Self.runOnce(try Self.config(ws, server))
        #expect(result.status == 1)
        #expect(result.stderr.contains("page 2 links back to a page already read"), "\(result.stderr)")
        #expect(try await server.requests(path: Self.path).count == 2)
        #expect(try await ws.listJSON().isEmpty)
        expectNoKey(Self.key, in: [result.stdout, result.stderr], database: ws.databaseBytes())
        server.stop()
    }

    @Test("a next_url to another host is refused before any request: the key is not sent there")
    func otherHost() async throws {
        let server = try await LoopbackServer.start()
        try await server.script(Self.path, [Self.page(["1"], next: #""http://localhost:\#(server.port)/traffic/events?offset=1""#)])
        let ws = try Workspace()
        let result = try await Self.runOnce(try Self.config(ws, server))
        #expect(result.status == 1)
        #expect(result.stderr.contains("page 1 links to another server (http://localhost:\(server.port)/traffic/events?offset=1)"), "\(result.stderr)")
        #expect(try await server.requests().count == 1)
        #expect(try await ws.listJSON().isEmpty)
        expectNoKey(Self.key, in: [result.stdout, result.stderr], database: ws.databaseBytes())
        server.stop()
    }

    @Test("check-config: an Open511 source needs no key but a baseURL; a GITS source still needs its key")
    func checkConfig() async throws {
        let ws = try Workspace()
        let good = try ws.write("good.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "drivebc", "provider": "open511", "baseURL": "https://api.open511.gov.bc.ca/events", "timeZone": "America/Vancouver"},
              {"name": "cdot", "provider": "wzdx", "keyEnv": "CDOT_KEY", "baseURL": "https://data.cotrip.org/api/v1/wzdx"}]}
            """)
        let ok = try await run("incident-scheduler", ["check-config", "--config", good], environment: ["CDOT_KEY": "cdot-secret-1", "COLUMNS": "200"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("drivebc  none            https://api.open511.gov.bc.ca/events?format=json"), "\(ok.stdout)")
        #expect(ok.stdout.contains("https://data.cotrip.org/api/v1/wzdx?apiKey=REDACTED"), "\(ok.stdout)")
        expectNoKey("cdot-secret-1", in: [ok.stdout, ok.stderr])
        let bad = try ws.write("bad.json", """
            {"sources": [{"name": "nourl", "provider": "wzdx"}, {"name": "gits", "provider": "gits"}]}
            """)
        let refused = try await run("incident-scheduler", ["check-config", "--config", bad])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("sources[1] (gits): no keyEnv or keyFile"), "\(refused.stderr)")
        let noURL = try ws.write("nourl.json", #"{"sources": [{"name": "nourl", "provider": "wzdx"}]}"#)
        let refusedURL = try await run("incident-scheduler", ["check-config", "--config", noURL])
        #expect(refusedURL.status == 78)
        #expect(refusedURL.stderr.contains("wzdx: source 'nourl' has no baseURL: give the WZDx feed's URL"), "\(refusedURL.stderr)")
    }

    @Test("ingest --file with a configured source: its timeZone reads DriveBC's recurring schedule")
    func configuredReplay() async throws {
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "drivebc", "provider": "open511",
              "baseURL": "https://api.open511.gov.bc.ca/events", "timeZone": "America/Vancouver"}]}
            """)
        let file = TestPaths.sharedFeed("open511/drivebc_events_page_5events_2023-06.json").path
        let result = try await run("incident-scheduler", ["ingest", "--config", config, "--source", "drivebc", "--file", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source=drivebc provider=open511 status=succeeded fetched=5 inserted=5"), "\(result.stderr)")
        let row = try #require(try await ws.listJSON().first { $0.text("external_id") == "drivebc.ca/DBC-53145" })
        #expect(row.text("started_at") == "2023-06-05T16:00:00Z")
        #expect(row.text("expected_end_at") == "2023-07-28T22:00:00Z")
        #expect(row.text("category") == "roadwork")
        #expect(row.text("provider_category") == "CONSTRUCTION/ROAD_MAINTENANCE")
    }

    @Test("ingest --file --complete of a saved Open511 page that links on: stored, recorded incomplete, nothing cleared")
    func savedPageReplay() async throws {
        let ws = try Workspace()
        let file = TestPaths.sharedFeed("open511/sf511_traffic_events_page.json").path
        let result = try await run("incident-scheduler", ["ingest", "--source", "open511", "--file", file, "--complete", "--database", ws.database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("status=incomplete fetched=1 inserted=1"), "\(result.stderr)")
        #expect(result.stderr.contains("links to a next page that was not read"), "\(result.stderr)")
    }

    @Test("ingest --file of CDOT's WZDx feed: 279 work zones stored with their fields")
    func wzdxReplay() async throws {
        let ws = try Workspace()
        let file = TestPaths.sharedFeed("wzdx/wzdx_v4_2_cdot_production_20250813_linestring_multipoint.json").path
        let result = try await run("incident-scheduler", ["ingest", "--source", "wzdx", "--file", file, "--complete", "--database", ws.database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source=wzdx provider=wzdx status=succeeded fetched=279 inserted=279"), "\(result.stderr)")
        let rows = try await ws.listJSON(["--limit", "1000"])
        #expect(rows.count == 279)
        let row = try #require(rows.first { $0.text("external_id") == "d1743e64-f414-5630-b013-ba4c9782a8e4" })
        #expect(row.text("category") == "roadwork")
        #expect(row.text("provider_category") == "work-zone/alternating-one-way")
        #expect(row.text("road") == "I-76")
        #expect(row.text("direction") == "westbound")
        #expect(row.number("longitude") == -102.802362)
        #expect(row.number("latitude") == 40.824391)
        #expect(row.text("started_at") == "2025-08-11T13:00:00Z")
        #expect(row.text("expected_end_at") == "2025-08-15T23:00:00Z")
    }
}
