import Foundation
@testable import IncidentApp
import IncidentCore
import IncidentJSON
import IncidentSQLite
import TestSupport
import Testing

/// The row-by-row writers of `list` and `map`: the streaming table against the whole-table
/// fit, the spreadsheet CSV's formula guard, real geometries in GeoJSON and on the map, bars.
@Suite("Output writers")
struct OutputTests {
    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    static func stored(_ id: Int64, _ incident: Incident) -> StoredIncident {
        StoredIncident(id: id, incident: incident, firstSeenAt: t0, lastSeenAt: t0, clearedAt: nil, revision: 1)
    }

    /// Runs `write` with a buffer whose sink keeps the bytes in memory.
    static func collect(_ write: (OutputBuffer) throws -> Void) rethrows -> String {
        let sink = GrowingBuffer()
        try write(OutputBuffer(sink))
        return sink.text
    }

    static func rows(_ count: Int) -> [[String]] {
        (0..<count).map { ["\($0)", "경부고속도로", "(서울방향) 수원IC → 신갈JC", "[사고] 추돌 \($0)"] }
    }
    static let header = ["ID", "ROAD", "LOCATION", "DESCRIPTION"]

    static func table(_ rows: [[String]], width: Int) throws -> String {
        try collect { out in
            var table = StreamingTable(header: header, maxWidth: width, flexible: [3, 2], droppable: [2], uncut: [0], out: out)
            for row in rows { try table.add(row) }
            try table.finish()
        }
    }

    @Test("a table of at most the sample is exactly the whole-table fit", arguments: [1, 37, StreamingTable.sampleRows])
    func smallTable(count: Int) throws {
        for width in [30, 50, 80, 200] {
            #expect(try Self.table(Self.rows(count), width: width)
                    == TextTable.render([Self.header] + Self.rows(count), maxWidth: width, flexible: [3, 2], droppable: [2]))
        }
    }

    @Test("rows after the sample keep its widths: wider cells are cut with …, ids never; the last column takes what is left")
    func laterRows() throws {
        var rows = Self.rows(150)
        rows[120][1] = "수도권제1순환고속도로(판교-구리)"
        rows[130][3] = String(repeating: "가", count: 60)
        let out = try Self.table(rows, width: 62).split(separator: "\n").map(String.init)
        #expect(out.count == 151)
        for line in out { #expect(TextTable.displayWidth(line) <= 62, "\(line)") }
        // The sample fits 62 columns whole: ID 2, ROAD 12 (경부고속도로), LOCATION 26, DESCRIPTION 14.
        #expect(out[1] == "0   경부고속도로  (서울방향) 수원IC → 신갈JC  [사고] 추돌 0")
        #expect(out[100] == "99  경부고속도로  (서울방향) 수원IC → 신갈JC  [사고] 추돌 99")
        // A 3-digit id is written whole; the rest of its line moves one column right.
        #expect(out[101] == "100  경부고속도로  (서울방향) 수원IC → 신갈JC  [사고] 추돌 100")
        // The longer road is cut to 11 columns plus "…".
        #expect(out[121] == "120  수도권제1순…  (서울방향) 수원IC → 신갈JC  [사고] 추돌 120")
        // The description ends where the 62 columns end.
        #expect(out[131] == "130  경부고속도로  (서울방향) 수원IC → 신갈JC  " + String(repeating: "가", count: 7) + "…")
    }

    @Test("with an unlimited width nothing after the sample is cut")
    func unlimitedWidth() throws {
        var rows = Self.rows(101)
        rows[100][1] = "수도권제1순환고속도로(판교-구리)"
        let out = try Self.table(rows, width: Int.max).split(separator: "\n").map(String.init)
        #expect(out[101] == "100  수도권제1순환고속도로(판교-구리)  (서울방향) 수원IC → 신갈JC  [사고] 추돌 100")
    }

    static func csvExcel(_ incident: Incident) throws -> [String] {
        let text = try collect { out in
            var writer = CSVWriter(out, withDistance: false, spreadsheetZone: DisplayZone(fixedOffsetSeconds: 32_400))
            try writer.write(ListedIncident(stored(7, incident), query: IncidentQuery(now: t0)))
            try writer.finish()
        }
        #expect(text.hasPrefix("\u{FEFF}id,source,external_id,"))
        return text.components(separatedBy: "\r\n")
    }

    @Test("csv-excel: feed text starting with = + - @ TAB or CR gets a leading ', numbers and times do not",
          arguments: ["=1+1", "+82 10", "-2 lanes", "@SUM(A1)", "\tA", "\rB"])
    func formulaGuard(text: String) throws {
        let incident = Incident(source: "gits", externalID: "X", category: .other, description: text, road: "경부",
                                coordinate: Coordinate(latitude: -33.9, longitude: -73.9), startedAt: Self.t0)
        let lines = try Self.csvExcel(incident)
        let header = lines[0].dropFirst().components(separatedBy: ",")
        #expect(header.contains("started_at (+09:00)"))
        // Quoted when it holds CR; the ' comes first either way.
        let cell = text.contains("\r") ? "\"'\(text)\"" : "'\(text)"
        #expect(lines[1].contains(",\(cell),경부,"), "\(lines[1])")
        #expect(lines[1].contains(",-33.9,-73.9,"), "coordinates stay numbers")
        #expect(lines[1].contains(",2024-01-01T00:00:00Z,2024-01-01 09:00:00,"), "UTC, then local time")
    }

    @Test("GeoJSON writes the incident's own geometry (a work zone's LineString); the point otherwise")
    func geoJSONGeometry() throws {
        var zone = Incident(source: "wzdx", externalID: "W1", category: .roadwork, description: "lane closed")
        zone.setGeometry(.lineString([Coordinate(latitude: 37.20, longitude: 127.00)!, Coordinate(latitude: 37.30, longitude: 127.10)!]))
        let point = Incident(source: "gits", externalID: "P1", category: .accident, coordinate: Coordinate(latitude: 37.5, longitude: 127.0))
        let text = try Self.collect { out in
            var writer = GeoJSONWriter(out, withDistance: false)
            try writer.write(ListedIncident(Self.stored(1, zone), query: IncidentQuery(now: Self.t0)))
            try writer.write(ListedIncident(Self.stored(2, point), query: IncidentQuery(now: Self.t0)))
            try writer.finish()
        }
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        let line = try #require(features[0]["geometry"] as? [String: Any])
        #expect(line["type"] as? String == "LineString")
        #expect(line["coordinates"] as? [[Double]] == [[127.0, 37.2], [127.1, 37.3]])
        #expect((features[1]["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [127.0, 37.5])
        #expect((features[0]["properties"] as? [String: Any])?["latitude"] == nil)
    }

    @Test("the map draws a geometry that is not a point, in its category's colour, beside its marker")
    func mapGeometry() async throws {
        var zone = Incident(source: "wzdx", externalID: "W1", category: .roadwork, description: "lane closed")
        zone.setGeometry(.lineString([Coordinate(latitude: 37.20, longitude: 127.00)!, Coordinate(latitude: 37.30, longitude: 127.30)!]))
        let file = try TestPaths.temporaryDirectory("map").appendingPathComponent("zone.html")
        let html = try Self.collect { out in
            var writer = try MapWriter(out, assets: MapPage.Assets(directory: MapPage.defaultAssetDirectory),
                                       settings: MapPage.Settings(title: "zone", tiles: nil, attribution: ""), zone: .utc)
            try writer.write(ListedIncident(Self.stored(1, zone), query: IncidentQuery(now: Self.t0)))
            try writer.finish()
        }
        try html.write(to: file, atomically: true, encoding: .utf8)
        let dom = try await HeadlessBrowser.dom(of: file)
        #expect(dom.contains("data-markers=\"1\" data-shapes=\"1\" data-ready=\"true\""))
        let png = file.deletingLastPathComponent().appendingPathComponent("zone.png")
        try await HeadlessBrowser.screenshot(of: file, to: png)
        // The line: roadwork's e6ab02 at opacity 0.8 over the background e8ecef is e6b831.
        let counts = try await PNGColors.count(in: png, colors: ["e6b831"], tolerance: 3)
        #expect((counts["e6b831"] ?? 0) > 2_000, "\(counts)")
    }

    @Test("JSON embedded in the page cannot end its script element; it parses back to the same text")
    func scriptSafe() throws {
        let hostile = "</script><script>alert(1)</script> & \u{2028}\u{2029} <!--"
        let json = MapPage.scriptSafe("[" + JSONString.quoted(hostile) + "]")
        #expect(!json.contains("<") && !json.contains(">") && !json.contains("&") && !json.contains("\u{2028}"))
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] == [hostile])
        #expect(MapPage.htmlEscaped("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
    }

    @Test("bars: as long as the count relative to the largest, in eighths; every line fits the width")
    func bars() {
        let chart = BarChart.render([("00", 8), ("01", 1), ("02", 0), ("23", 3)], title: "HOUR (UTC)", width: 20)
        #expect(chart == """
            HOUR (UTC)
            00  ██████████████ 8
            01  █▊ 1
            02  0
            23  █████▎ 3

            """)
        for line in chart.split(separator: "\n") { #expect(TextTable.displayWidth(String(line)) <= 20) }
    }
}

/// The fast path of exports (issue 23): rows read in place from the SQLite statement, stored
/// texts written as their bytes, against the path that decodes every incident.
@Suite("Exports from rows read in place")
struct StoredTextExportTests {
    static let t0 = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    /// Incidents with every column set in some and absent in others: Hangul, quotes, commas,
    /// CR and LF, JSON escapes, a formula start, empty text, a line geometry, each status.
    static let incidents: [Incident] = {
        var all: [Incident] = []
        var full = Incident(source: "gits", externalID: "A,1", category: .accident, providerCategory: "사고 \"추돌\"",
                            description: "say \"hi\", 경부\r\nnext line", road: "경부고속도로", roadRef: "고속국도1호선",
                            location: "(서울방향) 수원IC → 신갈JC", direction: "서울방향", restriction: "1차로, 2차로",
                            coordinate: Coordinate(latitude: 37.2636, longitude: 127.0286), linkID: "1234567",
                            startedAt: t0.adding(seconds: -3600), confirmedAt: t0.adding(seconds: -1800),
                            expectedEndAt: t0.adding(seconds: 7200), endedAt: nil)
        full.validity = nil
        all.append(full)
        all.append(Incident(source: "gits", externalID: "B", category: .other))  // every content field absent
        var zone = Incident(source: "wzdx", externalID: "W\"1", category: .roadwork, description: "=1+1 back\\slash\ttab\u{01}",
                            road: "", startedAt: t0.adding(seconds: 86_400))
        zone.setGeometry(.lineString([Coordinate(latitude: 37.20, longitude: 127.00)!, Coordinate(latitude: 37.30, longitude: 127.10)!]))
        all.append(zone)
        var suspended = Incident(source: "datex2", externalID: "S", category: .closure, description: "@planned",
                                 coordinate: Coordinate(latitude: -33.9, longitude: -73.95), startedAt: t0.adding(seconds: -60))
        suspended.validity = .suspended
        all.append(suspended)
        all.append(Incident(source: "its", externalID: "E", category: .weather, description: "-ended", road: "강변북로",
                            coordinate: Coordinate(latitude: 37.5, longitude: 127.0), startedAt: t0.adding(seconds: -7200),
                            endedAt: t0.adding(seconds: -60)))
        return all
    }()

    /// A database of ``incidents`` (the last one cleared by a second complete poll of its
    /// source), then values only other writers leave: a category this version does not know, an
    /// RFC 3339 time with an offset, a coordinate with one NULL degree, GeoJSON spaced otherwise;
    /// then `more` with the store and a connection to its file.
    static func database(then more: (SQLiteStore, Database) throws -> Void = { _, _ in }) throws -> SQLiteStore {
        let path = try TestPaths.temporaryDirectory("stored-texts").appendingPathComponent("db.sqlite").path
        let store = try SQLiteStore(path: path, clock: .fixed(t0))
        for source in ["gits", "wzdx", "datex2", "its"] {
            _ = try store.ingest(PollContext(source: source, startedAt: t0)) { sink in
                for incident in incidents where incident.source == source { try sink.upsert(incident) }
                return .complete
            }
        }
        _ = try store.ingest(PollContext(source: "its", startedAt: t0.adding(seconds: 60))) { sink in
            try sink.upsert(Incident(source: "its", externalID: "F", category: .congestion))
            return .complete
        }
        let db = try Database(path: path)
        try db.execute("""
            UPDATE incidents SET category = 'no-such-category', started_at = '2024-01-01T09:00:00+09:00' WHERE external_id = 'B';
            UPDATE incidents SET latitude = NULL WHERE external_id = 'S';
            UPDATE incidents SET geometry = '{ "type" : "LineString", "coordinates" : [ [127.0, 37.2], [127.1, 37.3] ] }' WHERE source = 'wzdx';
            """)
        try more(store, db)
        return store
    }

    /// `format`'s output of `query` through the decoded path (`fast` false) or the fast one.
    static func export(_ store: SQLiteStore, _ format: IncidentOutput.Format, _ query: IncidentQuery, fast: Bool) throws -> [UInt8] {
        let sink = GrowingBuffer()
        let settings = IncidentOutput.Settings(width: 120, zone: DisplayZone(identifier: "Asia/Seoul")!, withDistance: query.near != nil)
        var writer = try #require(IncidentOutput.writer(format, to: OutputBuffer(sink), settings) as? any ListingRowWriter)
        if fast {
            try IncidentReads.listRows(store, query) { try writer.write($0, $1) }
        } else {
            try IncidentReads.list(store, query) { try writer.write($0) }
        }
        try writer.finish()
        return sink.bytes
    }

    /// Every row, then nearest first from a point far enough to reach them all.
    static var queries: [IncidentQuery] {
        var near = IncidentQuery(now: t0)
        near.near = Coordinate(latitude: 37.0, longitude: 127.0)
        near.radiusMeters = 20_000_000
        near.order = .distance
        return [IncidentQuery(now: t0), near]
    }

    @Test("csv, csv-excel, json, ndjson and geojson from rows read in place are byte for byte the decoded path's",
          arguments: [IncidentOutput.Format.csv, .csvExcel, .json, .ndjson, .geojson])
    func sameBytes(format: IncidentOutput.Format) throws {
        let store = try Self.database()
        for query in Self.queries {
            let decoded = try Self.export(store, format, query, fast: false)
            #expect(try Self.export(store, format, query, fast: true) == decoded)
            #expect(String(decoding: decoded, as: UTF8.self).contains("경부고속도로"))
        }
    }

    /// ``database()`` plus rows holding what only other writers (an older or newer version, a
    /// hand edit; checks off) leave, each a value the fast path reads itself: quotes, commas,
    /// CR, LF and non-ASCII text (emoji, Hangul), a lone quote, DEL and a control character,
    /// empty text beside absent text, an empty category, numbers in their shortest forms
    /// (`1e-05`, `-0.5`, `180.0`, an integer in a text column), a coordinate outside WGS84,
    /// times with an offset, a fraction, lower-case letters, a February 30 or no time at all,
    /// an unknown validity, a cleared time that is not one, GeoJSON that is not, a MultiPoint,
    /// and a second revision.
    static func trickyDatabase() throws -> SQLiteStore {
        try database { store, db in
            for (offset, description) in [(0, "x"), (30, "y")] {
                _ = try store.ingest(PollContext(source: "odd", startedAt: t0.adding(seconds: Int64(offset)))) { sink in
                    for n in 1...5 {
                        try sink.upsert(Incident(source: "odd", externalID: "O\(n)", category: .other, description: n == 1 ? description : "x"))
                    }
                    return .complete
                }
            }
            try db.execute("""
                PRAGMA ignore_check_constraints = ON;
                UPDATE incidents SET description = '"', road = '', location = ' , ', direction = '🚧 공사 "A", B' || char(13),
                  restriction = char(10), provider_category = char(127) || 'del' || char(31), link_id = 42, latitude = 1e-05,
                  longitude = 180, started_at = '2024-01-01T09:00:00.5+09:00', confirmed_at = 'soon',
                  expected_end_at = '2024-02-30T00:00:00Z', ended_at = '2024-01-02t00:00:00z', validity = 'maybe',
                  cleared_at = 'garbage' WHERE external_id = 'O1';
                UPDATE incidents SET category = '', latitude = -0.5, longitude = -179.25, validity = 'planned', started_at = NULL,
                  geometry = 'not json', road_ref = '' WHERE external_id = 'O2';
                UPDATE incidents SET latitude = NULL, longitude = 127, ended_at = '2023-12-31T23:59:59-00:30',
                  geometry = '{"type":"MultiPoint","coordinates":[[127,37],[127.5,37.5]]}' WHERE external_id = 'O3';
                UPDATE incidents SET external_id = '=cmd|'' /C calc''!A0', description = '-1', cleared_at = '2024-01-01T00:00:30Z',
                  validity = 'suspended', started_at = '2024-01-01T00:00:00.999999Z' WHERE external_id = 'O4';
                UPDATE incidents SET latitude = 91, longitude = 127, description = '"quoted, and' || char(13, 10) || 'on two lines"',
                  road = '경부선,"서울"' WHERE external_id = 'O5';
                """)
        }
    }

    @Test("tricky stored values: the fast path writes the reference encoder's bytes",
          arguments: [IncidentOutput.Format.csv, .csvExcel, .json, .ndjson, .geojson])
    func trickyValues(format: IncidentOutput.Format) throws {
        let store = try Self.trickyDatabase()
        for query in Self.queries {
            let reference = try Self.export(store, format, query, fast: false)
            #expect(try Self.export(store, format, query, fast: true) == reference)
            if query.near == nil {  // the odd rows have no bounding box within --radius
                let text = String(decoding: reference, as: UTF8.self)
                #expect(text.contains("🚧 공사") && text.contains("1e-05") && text.contains("-179.25"))
            }
        }
    }

    @Test("a CSV field is quoted when a comma, quote, CR or LF is at any position of its words or its tail, and only then")
    func csvQuoting() throws {
        // Bytes one away from the four (and UTF-8 lead and continuation bytes), which the word-wise test must not take for them.
        let near: [UInt8] = [0x2B, 0x2D, 0x21, 0x23, 0x0C, 0x0E, 0x09, 0x0B, 0xAC, 0xEA, 0xA2, 0x80, 0xFF, 0x00, 0x41]
        for length in 0...19 {
            let plain = (0..<length).map { near[$0 % near.count] }
            #expect(plain.withUnsafeBufferPointer(OutputBuffer.needsCSVQuotes) == false, "\(plain)")
            for position in 0..<length {
                for special: UInt8 in [0x2C, 0x22, 0x0D, 0x0A] {
                    var text = plain
                    text[position] = special
                    #expect(text.withUnsafeBufferPointer(OutputBuffer.needsCSVQuotes), "\(text)")
                }
            }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(text.withUnsafeBufferPointer(OutputBuffer.needsCSVQuotes) == text.contains { [0x2C, 0x22, 0x0D, 0x0A].contains($0) })
        }
    }

    @Test("JSON text is copied as it is exactly when no character of it is escaped, for every character up to U+FFFF")
    func jsonCopy() throws {
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a\(Character(scalar))b"
            var written = ""
            var out = OutputBuffer { written += $0 }
            try out.writeJSONString(text)
            try out.flush()
            #expect(written == JSONString.quoted(text), "U+\(String(value, radix: 16))")
            var copy = text
            #expect(copy.withUTF8 { JSONString.needsEscape(utf8: $0) } == (written != "\"" + text + "\""), "U+\(String(value, radix: 16))")
        }
    }

    @Test("the fast path's csv: quoting, absent values, normalized category, time and coordinates as the decoded path writes them")
    func csvValues() throws {
        let text = String(decoding: try Self.export(Self.database(), .csv, IncidentQuery(now: Self.t0, order: .source), fast: true), as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines[0] == "id,source,external_id,category,provider_category,description,road,location,direction,restriction,"
                + "latitude,longitude,link_id,started_at,confirmed_at,expected_end_at,ended_at,road_ref,geometry,validity,"
                + "first_seen_at,last_seen_at,cleared_at,revision,status")
        #expect(text.contains("1,gits,\"A,1\",accident,\"사고 \"\"추돌\"\"\",\"say \"\"hi\"\", 경부\r\nnext line\",경부고속도로,"
                              + "(서울방향) 수원IC → 신갈JC,서울방향,\"1차로, 2차로\",37.2636,127.0286,1234567,2023-12-31T23:00:00Z,"
                              + "2023-12-31T23:30:00Z,2024-01-01T02:00:00Z,,고속국도1호선,,,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,,1,active\r\n"))
        #expect(text.contains("\r\n2,gits,B,other,,,,,,,,,,2024-01-01T00:00:00Z,,,,,,,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,,1,active\r\n"))
        #expect(text.contains("\r\n4,datex2,S,closure,,@planned,,,,,,,,2023-12-31T23:59:00Z,,,,,,suspended,"))
        #expect(text.contains(",its,E,weather,,-ended,강변북로,,,,37.5,127.0,,2023-12-31T22:00:00Z,,,2023-12-31T23:59:00Z,,,,"
                              + "2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,2024-01-01T00:01:00Z,1,cleared\r\n"))
    }
}
