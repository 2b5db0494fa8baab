import Foundation
import TestSupport
import Testing

/// What real servers send, end to end with the built executables: one huge record, WZDx 3.x,
/// DATEX II as a gzip file and under other namespace URIs, Open511 geometry collections and
/// GML 3; over a real HTTP server on loopback and with `ingest --file`, asserting what is stored.
@Suite("End to end: huge records and the forms real servers send", .serialized)
struct FeedFormsEndToEndTests {
    static let path = "/feed"

    static func config(_ ws: Workspace, _ server: LoopbackServer, provider: String) throws -> String {
        try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "feed", "provider": "\(provider)",
              "baseURL": "\(server.url(Self.path).absoluteString)", "retry": {"maxRetries": 0}}]}
            """)
    }

    static func runOnce(_ config: String) async throws -> ProcessResult {
        try await run("incident-scheduler", ["run", "--once", "--config", config])
    }

    /// A WZDx 4.2 feed of `features` (id, number of positions), each id after its geometry.
    static func wzdx(_ features: [(String, Int)]) -> String {
        let items = features.map { id, count in
            let line = (0..<count).map { "[-105.\(String(100_000 + $0 % 900_000).suffix(6)),39.\(String(100_000 + $0 % 900_000).suffix(6))]" }
                .joined(separator: ",")
            return #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[\#(line)]},"properties":{"core_details":{"event_type":"work-zone","data_source_id":"1","road_names":["I-25"],"direction":"northbound","description":"Zone \#(id)"},"start_date":"2024-05-01T00:00:00Z","end_date":"2024-12-01T00:00:00Z","vehicle_impact":"some-lanes-closed"},"id":"\#(id)"}"#
        }
        return #"{"feed_info":{"update_date":"2024-05-02T00:00:00Z","version":"4.2","publisher":"TestDOT"},"type":"FeatureCollection","features":[\#(items.joined(separator: ","))]}"#
    }

    @Test("WZDx over HTTP: a 100,000-position work zone is stored; a feature over the limit is quarantined by id, neither stored nor cleared; the poll still clears what is gone")
    func hugeWZDxFeature() async throws {
        let server = try await LoopbackServer.start()
        let ws = try Workspace()
        let first = try ws.write("first.json", Self.wzdx([("a", 2), ("b", 2), ("gone", 2)]))
        let second = try ws.write("second.json", Self.wzdx([("a", 2), ("b", 300_000), ("long", 100_000)]))
        try await server.script(Self.path, [ResponseSpec(headers: ["Content-Type": "application/geo+json"], bodyFile: first),
                                            ResponseSpec(headers: ["Content-Type": "application/geo+json"], bodyFile: second)])
        let config = try Self.config(ws, server, provider: "wzdx")
        let polled = try await Self.runOnce(config)
        #expect(polled.status == 0, "\(polled.stderr)")
        // Times are stored to the second, and a poll clears only what was last seen before
        // the second it fetched in (PollWriter): the next poll comes a second later.
        try await Task.sleep(for: .milliseconds(1100))
        let result = try await Self.runOnce(config)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("malformed"), "\(result.stderr)")
        #expect(result.stderr.contains("status=succeeded"), "\(result.stderr)")
        let rows = try await ws.listJSON(["--order", "source"])
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.text("external_id") ?? "", $0) })
        #expect(Set(byID.keys) == ["a", "b", "gone", "long"])
        #expect(byID["a"]?["cleared_at"] is NSNull)
        #expect(byID["b"]?["cleared_at"] is NSNull, "quarantined by id: not cleared")
        #expect(byID["b"]?.text("description") == "Zone b", "its stored content is kept")
        #expect(byID["long"]?["cleared_at"] is NSNull)
        #expect(byID["gone"]?["cleared_at"] is String, "the poll was complete: what is gone is cleared \(result.stderr)")
        let geojson = try await run("incidents", ["list", "--database", ws.database, "--format", "geojson"])
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        let long = features.first { ($0["properties"] as? [String: Any])?["external_id"] as? String == "long" }
        #expect(((long?["geometry"] as? [String: Any])?["coordinates"] as? [Any])?.count == 100_000)
        let bID = try #require(byID["b"]?["id"] as? Int)
        let quarantined = try await run("incidents", ["show", "--database", ws.database, "--format", "json", String(bID)])
        #expect(quarantined.stdout.contains("the record is larger than the limit of 33554432 bytes per record"), "\(quarantined.stdout.prefix(2000))")
        server.stop()
    }

    @Test("WZDx 3.0 by ingest --file: names, lanes and string restrictions kept; the cancelled and completed events are ended")
    func wzdx30() async throws {
        let ws = try Workspace()
        let file = TestPaths.fixture("wzdx/v3_0_feed.json").path
        let result = try await run("incident-scheduler", ["ingest", "--source", "wzdx", "--file", file, "--complete", "--database", ws.database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("status=succeeded fetched=3 inserted=3"), "\(result.stderr)")
        let rows = try await ws.listJSON()
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.text("external_id") ?? "", $0) })
        #expect(byID["EX-0042"]?.text("road") == "Main Street; US-20")
        #expect(byID["EX-0042"]?.text("restriction") == "some-lanes-closed; lanes: 1 left-lane open, 2 right-lane closed; no-trucks; reduced-width; speed limit 25")
        #expect(byID["EX-0042"]?["ended_at"] is NSNull)
        #expect(byID["EX-0043"]?.text("ended_at") == "2021-03-02T09:30:00Z")
        #expect(byID["EX-0040"]?.text("ended_at") == "2021-02-28T17:00:00Z")
        let active = try await ws.listJSON(["--active"])
        #expect(!active.contains { $0.text("external_id") == "EX-0043" }, "a cancelled event is not active")
    }

    /// `bytes` gzip-compressed by Debian's gzip, in the workspace as `name`.
    static func gzip(_ bytes: Data, _ ws: Workspace, _ name: String) throws -> String {
        let path = ws.directory.appendingPathComponent(name).path
        try bytes.write(to: URL(fileURLWithPath: path))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-n", path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return path + ".gz"
    }

    @Test("DATEX II as a gzip file: over HTTP as application/gzip and application/octet-stream without Content-Encoding, and by ingest --file")
    func datex2Gzip() async throws {
        let ws = try Workspace()
        let sample = try Data(contentsOf: TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml"))
        let gz = try Self.gzip(sample, ws, "brugdata.xml")
        let replay = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", gz, "--complete", "--database", ws.database])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("status=succeeded fetched=20 inserted=20"), "\(replay.stderr)")

        let server = try await LoopbackServer.start()
        let web = try Workspace()
        try await server.script(Self.path, [ResponseSpec(headers: ["Content-Type": "application/gzip"], bodyFile: gz),
                                            ResponseSpec(headers: ["Content-Type": "application/octet-stream"], bodyFile: gz)])
        let config = try Self.config(web, server, provider: "datex2")
        let first = try await Self.runOnce(config)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("status=succeeded fetched=20 inserted=20"), "\(first.stderr)")
        let second = try await Self.runOnce(config)
        #expect(second.stderr.contains("status=succeeded fetched=20 inserted=0"), "\(second.stderr)")
        let rows = try await web.listJSON(["--limit", "100"])
        #expect(rows.count == 20)
        #expect(rows.allSatisfy { $0["cleared_at"] is NSNull })
        #expect(Set(rows.compactMap { $0.text("external_id") }) == Set(try await ws.listJSON(["--limit", "100"]).compactMap { $0.text("external_id") }))

        // A corrupt gzip body fails the poll without its bytes in the stored error.
        var corrupt = try Data(contentsOf: URL(fileURLWithPath: gz))
        for i in 1000..<1100 { corrupt[i] ^= 0x5A }
        try await server.script(Self.path, [ResponseSpec(headers: ["Content-Type": "application/gzip"], bodyData: corrupt)])
        let failed = try await Self.runOnce(config)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("the gzip-compressed body is corrupt (zlib: "), "\(failed.stderr)")
        #expect(try await web.listJSON(["--limit", "100"]).count == 20)
        server.stop()
    }

    @Test("DATEX II 3 under Spain's DGT namespace URIs by ingest --file; a document in another namespace names it")
    func datex2OtherNamespaces() async throws {
        let ws = try Workspace()
        let text = try String(contentsOf: TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml"), encoding: .utf8)
        let dgt = try ws.write("dgt.xml", text.replacingOccurrences(of: "http://datex2.eu/schema/3/", with: "http://levelC/schema/3/"))
        let result = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", dgt, "--complete", "--database", ws.database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("status=succeeded"), "\(result.stderr)")
        let plain = try Workspace()
        let original = TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml").path
        #expect(try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", original, "--complete", "--database", plain.database]).status == 0)
        let strip: ([[String: Any]]) -> [String] = { rows in
            rows.map { row in row.filter { !["id", "first_seen_at", "last_seen_at"].contains($0.key) }.sorted { $0.key < $1.key }.map { "\($0)" }.joined() }
        }
        let stored = try await ws.listJSON()
        #expect(!stored.isEmpty)
        #expect(strip(stored) == strip(try await plain.listJSON()))

        let other = try ws.write("other.xml", text.replacingOccurrences(of: "http://datex2.eu/schema/3/", with: "http://example.org/traffic/"))
        let refused = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", other, "--complete", "--database", ws.database])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("its namespace http://example.org/traffic/d2Payload is not a DATEX II namespace"), "\(refused.stderr)")
    }

    @Test("Open511 over HTTP: a GeometryCollection geography is stored; GML 3 by ingest --file")
    func open511Geometry() async throws {
        let server = try await LoopbackServer.start()
        let ws = try Workspace()
        let body = #"{"events":[{"id":"o/1","status":"ACTIVE","event_type":"INCIDENT","headline":"Crash","severity":"MAJOR","created":"2024-03-01T10:00Z","geography":{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[-122.41,37.77]},{"type":"LineString","coordinates":[[-122.40,37.78],[-122.39,37.79]]}]}}],"pagination":{"offset":0},"meta":{"version":"v1"}}"#
        try await server.script(Self.path, [ResponseSpec(headers: ["Content-Type": "application/json"], body: body)])
        let result = try await Self.runOnce(try Self.config(ws, server, provider: "open511"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("status=succeeded fetched=1 inserted=1"), "\(result.stderr)")
        let near = try await ws.listJSON(["--near", "37.77,-122.41", "--radius", "100m"])
        #expect(near.map { $0.text("external_id") } == ["o/1"], "the collection's point is found by --near")
        server.stop()

        let file = TestPaths.fixture("open511/events_gml3.xml").path
        let xml = try Workspace()
        let replay = try await run("incident-scheduler", ["ingest", "--source", "open511", "--file", file, "--database", xml.database])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("fetched=5 inserted=4"), "\(replay.stderr)")
        let row = try #require(try await xml.listJSON().first { $0.text("external_id") == "gml3.example/2" })
        // Latitude first under the EPSG URN: the point halfway along lies between the ends.
        #expect((45.5001...45.5020).contains(row.number("latitude") ?? 0), "\(row)")
        #expect((-73.6025 ... -73.6001).contains(row.number("longitude") ?? 0), "\(row)")
    }
}
