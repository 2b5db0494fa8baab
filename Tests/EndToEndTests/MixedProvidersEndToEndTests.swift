import Foundation
import TestSupport
import Testing

/// The five providers in one configuration (issue 16): a GITS, an ITS, a DATEX II, an Open511
/// and a WZDx source, each answered on loopback HTTP with a recorded real response from
/// `../shared/feeds`, polled by one `incident-scheduler run --once`, then read back through
/// every `incidents list` format and `incidents map`.
@Suite("End to end: the five providers in one configuration", .serialized)
struct MixedProvidersEndToEndTests {
    static let gitsKey = "SECRET+mixgits/Key=="
    static let itsKey = "SECRET+mixits/Key=="
    static let itsItems = TestPaths.sharedFeed("its_national/eventInfo_json_items_only_20221220.json")
    static let wzdxFeed = TestPaths.sharedFeed("wzdx/wzdx_v4_2_cdot_production_20230522_linestring.json")

    /// Incidents stored per source: the records of each recorded response.
    static let expectedCounts = ["gits": 4, "its": 11, "fintraffic": 1, "drivebc": 5, "cdot": 87]
    static var total: Int { expectedCounts.values.reduce(0, +) }

    /// The ITS answer: the recorded items exactly as recorded, or (`enveloped`) inside the
    /// `header`/`body` envelope a live eventInfo answer has, with `resultCode` the number 0 as in
    /// the recorded full trafficInfo answer of the same host
    /// (`its_national/trafficInfo_json_full_envelope_44items_20260918.json`). The recorded
    /// eventInfo sample is only the `body.items` array; alone it cannot say it is complete.
    static func itsAnswer(enveloped: Bool) throws -> ResponseSpec {
        let items = try Data(contentsOf: Self.itsItems)
        let body = enveloped
            ? Data(#"{"header":{"resultCode":0,"resultMsg":"SUCCESS"},"body":{"totalCount":11,"items":"#.utf8) + items + Data("}}".utf8)
            : items
        return ResponseSpec(status: 200, headers: ["Content-Type": "application/json;charset=UTF-8"], bodyData: body)
    }

    /// A loopback server answering each of the five sources with its recorded response.
    static func server(its: ResponseSpec) async throws -> LoopbackServer {
        func recorded(_ path: String, _ type: String) -> [ResponseSpec] {
            [ResponseSpec(status: 200, headers: ["Content-Type": type], bodyFile: TestPaths.sharedFeed(path).path)]
        }
        return try await LoopbackServer.start(routes: [
            "/api/rest/getIncidentInfo": recorded("gg_gits/getIncidentInfo_20230321.xml", "text/xml;charset=UTF-8"),
            "/its/eventInfo": [its],
            "/fintraffic/messages.datex2": recorded("datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml", "application/xml"),
            "/drivebc/events": recorded("open511/drivebc_events_page_5events_2023-06.json", "application/json"),
            "/cdot/wzdx": recorded("wzdx/wzdx_v4_2_cdot_production_20230522_linestring.json", "application/geo+json"),
        ])
    }

    static func config(_ ws: Workspace, _ server: LoopbackServer) throws -> String {
        func url(_ path: String) -> String { server.url(path).absoluteString }
        return try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY", "baseURL": "\(url("/api/rest/"))"},
              {"name": "its", "provider": "its", "keyEnv": "ITS_API_KEY", "baseURL": "\(url("/its/"))",
               "bbox": [126.9, 36.0, 127.8, 36.8], "eventType": "all", "format": "json"},
              {"name": "fintraffic", "provider": "datex2", "language": "fi", "baseURL": "\(url("/fintraffic/messages.datex2"))"},
              {"name": "drivebc", "provider": "open511", "timeZone": "America/Vancouver", "baseURL": "\(url("/drivebc/events"))"},
              {"name": "cdot", "provider": "wzdx", "baseURL": "\(url("/cdot/wzdx"))"}]}
            """)
    }

    /// Serves the five recorded answers and polls them with one `run --once` into a fresh database.
    static func pollOnce(itsEnveloped: Bool) async throws -> (Workspace, ProcessResult) {
        let server = try await Self.server(its: try Self.itsAnswer(enveloped: itsEnveloped))
        defer { server.stop() }
        let ws = try Workspace()
        let result = try await run("incident-scheduler", ["run", "--once", "--config", try Self.config(ws, server)],
                                   environment: ["GITS_SERVICE_KEY": Self.gitsKey, "ITS_API_KEY": Self.itsKey])
        return (ws, result)
    }

    /// `incidents stats --format json`'s count per source.
    static func countsBySource(_ ws: Workspace) async throws -> [String: Int] {
        let stats = try await run("incidents", ["stats", "--database", ws.database, "--format", "json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let object = try #require(try Self.json(stats.stdout) as? [String: Any])
        #expect(object["total"] as? Int == (object["by_source"] as? [String: Int])?.values.reduce(0, +))
        return try #require(object["by_source"] as? [String: Int])
    }

    /// `incidents runs --format json`, parsed.
    static func runs(_ ws: Workspace) async throws -> [[String: Any]] {
        let runs = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"])
        #expect(runs.status == 0, "\(runs.stderr)")
        return try #require(try Self.json(runs.stdout) as? [[String: Any]])
    }

    static func list(_ ws: Workspace, _ format: String) async throws -> ProcessResult {
        try await run("incidents", ["list", "--database", ws.database, "--format", format, "--limit", "1000"])
    }

    static func json(_ text: some StringProtocol) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// `[external_id, description]` of every record of a CSV text, read by Python's csv module
    /// (quoted newlines and a byte order mark handled as a spreadsheet or program would).
    static func csvRecords(_ text: String) async throws -> [[String]] {
        let file = try TestPaths.temporaryDirectory("mixed-csv").appendingPathComponent("list.csv")
        try Data(text.utf8).write(to: file)
        let script = """
            import csv, json, sys
            with open(sys.argv[1], newline="", encoding="utf-8-sig") as f:
                print(json.dumps([[r["external_id"], r["description"]] for r in csv.DictReader(f)]))
            """
        let result = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, file.path])).finished()
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try Self.json(result.stdout) as? [[String]])
    }

    /// The data block `incidents map` embeds, parsed: `<script type="application/json" id="NAME">`.
    static func mapData(_ html: String, _ name: String) throws -> Any {
        let open = #"<script type="application/json" id="\#(name)">"#
        let start = try #require(html.range(of: open), "no \(name) block in the page")
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        return try Self.json(html[start.upperBound..<end.lowerBound])
    }

    /// The recorded first WZDx feature's LineString (CDOT's work zone on I-70 at Rifle).
    static func recordedWZDxLine() throws -> [[Double]] {
        let feed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.wzdxFeed)) as? [String: Any])
        let first = try #require((feed["features"] as? [[String: Any]])?.first)
        #expect(first["id"] as? String == "098bd70a-4e9e-5a78-8bb5-c62cbabd485a")
        return try #require((first["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
    }

    /// One incident per provider, by external id: category, provider category, started_at (UTC),
    /// and the geometry type of its GeoJSON feature (nil: no position, as the DATEX II record
    /// locates itself by ALERT-C only).
    static let samples: [(id: String, category: String, providerCategory: String, startedAt: String, geometry: String?)] = [
        ("202303216347", "breakdown", "차량고장", "2023-03-21T05:13:00Z", "Point"),
        ("1870199600:20221220093317:작업", "roadwork", "작업", "2022-12-20T00:33:17Z", "Point"),
        ("GUID50456943/GUID5046133001", "other", "TransitInformation", "2025-11-27T07:20:00Z", nil),
        ("drivebc.ca/DBC-53145", "roadwork", "CONSTRUCTION/ROAD_MAINTENANCE", "2023-06-05T16:00:00Z", "LineString"),
        ("098bd70a-4e9e-5a78-8bb5-c62cbabd485a", "roadwork", "work-zone/some-lanes-closed", "2023-05-22T06:00:00Z", "LineString"),
    ]

    /// Text that must survive every format unchanged: Korean (GITS road, ITS message) and Finnish (DATEX II comment).
    static let korean = ["강변북로", "(갓길)방초매트설치작업중"]
    static let finnish = "Lauttaliikenne keskeytetään puutavaran uiton vuoksi."

    @Test("one run --once stores all five providers; every list format and the map carry every incident")
    func fiveProviders() async throws {
        let (ws, result) = try await Self.pollOnce(itsEnveloped: true)
        #expect(result.status == 0, "\(result.stderr)")
        for (source, provider) in [("gits", "gits"), ("its", "its"), ("fintraffic", "datex2"), ("drivebc", "open511"), ("cdot", "wzdx")] {
            let count = try #require(Self.expectedCounts[source])
            #expect(result.stderr.contains("source=\(source) provider=\(provider) status=succeeded fetched=\(count) inserted=\(count) "), "\(result.stderr)")
        }

        // Per-source counts, from stats and from runs.
        #expect(try await Self.countsBySource(ws) == Self.expectedCounts)
        let runRows = try await Self.runs(ws)
        #expect(runRows.count == 5)
        for row in runRows {
            let source = try #require(row.text("source"))
            #expect(row.text("status") == "succeeded", "\(source): \(row)")
            #expect(row["fetched"] as? Int == Self.expectedCounts[source] && row["inserted"] as? Int == Self.expectedCounts[source], "\(source): \(row)")
        }

        // json: the reference the other formats are compared with.
        let jsonOut = try await Self.list(ws, "json")
        #expect(jsonOut.status == 0, "\(jsonOut.stderr)")
        let rows = try #require(try Self.json(jsonOut.stdout) as? [[String: Any]])
        #expect(rows.count == Self.total)
        let byID = Dictionary(rows.map { ($0.text("external_id") ?? "", $0) }) { first, _ in first }
        #expect(byID.count == Self.total, "external ids are distinct across the five sources")
        for sample in Self.samples {
            let row = try #require(byID[sample.id], "\(sample.id) stored")
            #expect(row.text("category") == sample.category, "\(sample.id)")
            #expect(row.text("provider_category") == sample.providerCategory, "\(sample.id)")
            #expect(row.text("started_at") == sample.startedAt, "\(sample.id)")
        }
        #expect(byID["202303216347"]?.text("road") == "강변북로")
        #expect(byID["1870199600:20221220093317:작업"]?.text("description") == "(갓길)방초매트설치작업중")
        #expect(byID["GUID50456943/GUID5046133001"]?.text("description")?.contains("\n\n" + Self.finnish + "s\n\n") == true)
        let descriptions = Dictionary(uniqueKeysWithValues: byID.map { ($0.key, $0.value.text("description") ?? "") })

        // ndjson: one object per line, the same rows.
        let ndjson = try await Self.list(ws, "ndjson")
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        let lines = ndjson.stdout.split(separator: "\n")
        #expect(lines.count == Self.total)
        let ndRows = try lines.map { try #require(try Self.json($0) as? [String: Any]) }
        #expect(Dictionary(uniqueKeysWithValues: ndRows.map { ($0.text("external_id") ?? "", $0.text("description") ?? "") }) == descriptions)

        // csv and csv-excel: every record (descriptions hold newlines), every description exact.
        for format in ["csv", "csv-excel"] {
            let csv = try await Self.list(ws, format)
            #expect(csv.status == 0, "\(format): \(csv.stderr)")
            let records = try await Self.csvRecords(csv.stdout)
            #expect(records.count == Self.total, "\(format)")
            #expect(Dictionary(records.map { ($0[0], $0[1]) }) { first, _ in first } == descriptions, "\(format)")
        }

        // table: a header and one line per incident (newlines in a cell become spaces).
        let table = try await Self.list(ws, "table")
        #expect(table.status == 0, "\(table.stderr)")
        let tableLines = table.stdout.split(separator: "\n")
        #expect(tableLines.count == Self.total + 1)
        #expect(tableLines.first?.hasPrefix("ID ") == true)
        for text in Self.korean + [Self.finnish] {
            #expect(tableLines.filter { $0.contains(text) }.count == 1, "\(text) in the table")
        }

        // geojson: one feature per incident; each sample's geometry type; WZDx's recorded LineString.
        let geojson = try await Self.list(ws, "geojson")
        #expect(geojson.status == 0, "\(geojson.stderr)")
        let collection = try #require(try Self.json(geojson.stdout) as? [String: Any])
        #expect(collection["type"] as? String == "FeatureCollection")
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect(features.count == Self.total)
        let featureByID = Dictionary(features.map { (($0["properties"] as? [String: Any])?.text("external_id") ?? "", $0) }) { first, _ in first }
        #expect(Dictionary(uniqueKeysWithValues: featureByID.map { ($0.key, ($0.value["properties"] as? [String: Any])?.text("description") ?? "") })
                == descriptions)
        for sample in Self.samples {
            let feature = try #require(featureByID[sample.id])
            #expect((feature["geometry"] as? [String: Any])?.text("type") == sample.geometry, "\(sample.id): \(feature["geometry"] ?? "none")")
        }
        let recordedLine = try Self.recordedWZDxLine()
        #expect(recordedLine.count == 5)
        #expect(recordedLine.first == [-107.83899603099997, 39.52052304500006])
        let wzdxGeometry = try #require(featureByID["098bd70a-4e9e-5a78-8bb5-c62cbabd485a"]?["geometry"] as? [String: Any])
        #expect(wzdxGeometry["coordinates"] as? [[Double]] == recordedLine)
        let gitsGeometry = try #require(featureByID["202303216347"]?["geometry"] as? [String: Any])
        #expect(gitsGeometry["coordinates"] as? [Double] == [127.08203126, 37.52739696162846])

        // map: every incident with a position is in the page's data; the one without is counted.
        let mapFile = ws.directory.appendingPathComponent("map.html")
        let map = try await run("incidents", ["map", "--database", ws.database, "--output", mapFile.path])
        #expect(map.status == 0, "\(map.stderr)")
        let html = try String(contentsOf: mapFile, encoding: .utf8)
        let placed = try #require(try Self.mapData(html, "incidents") as? [[String: Any]])
        let unplaced = rows.filter { $0["latitude"] is NSNull }
        #expect(unplaced.compactMap { $0.text("external_id") } == ["GUID50456943/GUID5046133001"])
        #expect(Set(placed.compactMap { $0["id"] as? Int }) == Set(rows.compactMap { $0["latitude"] is NSNull ? nil : $0["id"] as? Int }))
        #expect(placed.count == Self.total - 1)
        #expect((try Self.mapData(html, "totals") as? [String: Int]) == ["unplaced": 1])
        let wzdxID = try #require(byID["098bd70a-4e9e-5a78-8bb5-c62cbabd485a"]?["id"] as? Int)
        let wzdxMarker = try #require(placed.first { $0["id"] as? Int == wzdxID })
        #expect((wzdxMarker["geometry"] as? [String: Any])?["coordinates"] as? [[Double]] == recordedLine)

        expectNoKey(Self.gitsKey, in: [result.stdout, result.stderr, jsonOut.stdout, html], database: ws.databaseBytes())
        expectNoKey(Self.itsKey, in: [result.stdout, result.stderr, jsonOut.stdout, html], database: ws.databaseBytes())
    }

    @Test("ITS's recorded items served bare: all stored, but that source is incomplete (exit 3); the other four succeed")
    func bareITSItems() async throws {
        let (ws, result) = try await Self.pollOnce(itsEnveloped: false)
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("source=its provider=its status=incomplete fetched=11 inserted=11 "), "\(result.stderr)")
        #expect(result.stderr.contains("the response does not say it succeeded (no resultCode)"), "\(result.stderr)")
        let statuses = try await Self.runs(ws).map { [$0.text("source"), $0.text("status")] }
        #expect(Set(statuses) == [["gits", "succeeded"], ["its", "incomplete"], ["fintraffic", "succeeded"], ["drivebc", "succeeded"],
                                  ["cdot", "succeeded"]])
        #expect(try await Self.countsBySource(ws) == Self.expectedCounts)
    }
}
