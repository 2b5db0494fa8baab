import Foundation
import TestSupport
import Testing

/// The analyst's views (issue 14, points 8, 9, 11): `show`'s history of field changes and its
/// quarantined records, every time in `--tz`; `list`'s STATUS and DISTANCE; `stats` totals that
/// add up, `--by FIELD --per day|hour` and `--chart`; spreadsheet CSV.
@Suite("End to end: the analyst's views", .serialized)
struct AnalystCLITests {
    static func incidents(_ arguments: [String], database: String = AnalystFixture.database,
                          columns: Int = 100) async throws -> ProcessResult {
        try await run("incidents", arguments + ["--database", database], environment: ["COLUMNS": String(columns)])
    }

    /// Compares with `Tests/Fixtures/golden/NAME`; writes `/tmp/NAME.actual` when it differs.
    static func expectGolden(_ result: ProcessResult, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, sourceLocation: sourceLocation)
        let expected = try? String(contentsOf: TestPaths.fixture("golden/\(name)"), encoding: .utf8)
        #expect(result.stdout == expected, "differs from Tests/Fixtures/golden/\(name)", sourceLocation: sourceLocation)
        if result.stdout != expected { try? result.stdout.write(toFile: "/tmp/\(name).actual", atomically: true, encoding: .utf8) }
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    // MARK: show

    @Test("show: each revision's changed fields, old → new in full (description, location, coordinates, expected and provider end, cleared), every time in --tz")
    func showHistory() async throws {
        try Self.expectGolden(try await Self.incidents(["show", "1", "--tz", "KST"]), "show.history.kst.txt")
    }

    @Test("show --format json: the changes per revision as field, old, new (UTC), and the quarantined records")
    func showHistoryJSON() async throws {
        let result = try await Self.incidents(["show", "1", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try Self.json(result.stdout) as? [String: Any])
        #expect(object["status"] as? String == "ended")
        let changes = try #require(object["changes"] as? [[String: Any]])
        // Revision 2 changed at t1, was cleared at t2 (a state, not a revision), reopened as 3 at t3.
        #expect(changes.map { $0["revision"] as? Int } == [2, 3])
        #expect(changes.map { $0["from"] as? String } == ["2024-03-01T01:00:00Z", "2024-03-01T03:00:00Z"])
        #expect(changes.map { $0["reopened"] as? Bool } == [false, true])
        func fields(_ index: Int) -> [String] { (changes[index]["fields"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String } }
        #expect(fields(0) == ["description", "location", "latitude", "longitude", "expected_end_at"])
        #expect(fields(1) == ["restriction", "ended_at"])
        let expectedEnd = try #require((changes[0]["fields"] as? [[String: Any]])?.first { $0["field"] as? String == "expected_end_at" })
        #expect(expectedEnd["old"] as? String == "2024-03-01T02:00:00Z")
        #expect(expectedEnd["new"] as? String == "2024-03-01T03:00:00Z")
        let latitude = try #require((changes[0]["fields"] as? [[String: Any]])?.first { $0["field"] as? String == "latitude" })
        #expect(latitude["old"] as? Double == 37.2)
        #expect(latitude["new"] as? Double == 37.15)
        let ended = try #require((changes[1]["fields"] as? [[String: Any]])?.first { $0["field"] as? String == "ended_at" })
        #expect(ended["old"] is NSNull)
        #expect(ended["new"] as? String == "2024-03-01T02:50:00Z")
        let revisions = try #require(object["revisions"] as? [[String: Any]])
        #expect(revisions.map { $0["cleared_at"] as? String } == [nil, "2024-03-01T02:00:00Z"])
        let rejections = try #require(object["rejections"] as? [[String: Any]])
        #expect(rejections.count == 1)
        #expect(rejections.first?["reason"] as? String == "coord_x is not a number")
        #expect(rejections.first?["external_id"] as? String == "202403010001")
        #expect(rejections.first?["excerpt"] as? String == "<coord_x>12\u{1B}[31m7.1</coord_x>")
    }

    // MARK: list

    @Test("list --near: a DISTANCE column, nearest first (STATUS: golden list.table.txt has all three)")
    func distanceColumn() async throws {
        try Self.expectGolden(try await QueryCLITests.incidents(["list", "--near", "37.2636,127.0286", "--radius", "40km"]), "list.near.txt")
    }

    /// Great-circle distances from 37.2636,127.0286 on a sphere of 6,371,008.8 m, computed by
    /// Python's math module (haversine), rounded to the meter.
    static let distances: [String: Int] = [
        "202401010001": 0, "1100123400:20240101001500:추돌사고": 6_731, "202401010002": 13_405, "202401010003": 29_710,
    ]

    @Test("list --near: distance_m in json, ndjson, csv and geojson", arguments: ["json", "ndjson", "csv", "geojson"])
    func distanceField(format: String) async throws {
        let result = try await QueryCLITests.incidents(["list", "--near", "37.2636,127.0286", "--radius", "40km", "--format", format])
        #expect(result.status == 0, "\(result.stderr)")
        var found: [String: Int] = [:]
        switch format {
        case "json":
            for row in try #require(try Self.json(result.stdout) as? [[String: Any]]) {
                found[row["external_id"] as? String ?? ""] = row["distance_m"] as? Int
            }
        case "ndjson":
            for line in result.stdout.split(separator: "\n") {
                let row = try #require(try Self.json(String(line)) as? [String: Any])
                found[row["external_id"] as? String ?? ""] = row["distance_m"] as? Int
            }
        case "csv":
            let rows = try #require(try await QueryCLITests.python("csv", result.stdout) as? [[String: String]])
            for row in rows { found[row["external_id"] ?? ""] = Int(row["distance_m"] ?? "") }
        default:
            let collection = try #require(try Self.json(result.stdout) as? [String: Any])
            for feature in collection["features"] as? [[String: Any]] ?? [] {
                let properties = feature["properties"] as? [String: Any] ?? [:]
                found[properties["external_id"] as? String ?? ""] = properties["distance_m"] as? Int
            }
        }
        #expect(found == Self.distances)
    }

    // MARK: stats

    @Test("stats: active + ended + cleared = total, for every filter", arguments: [
        [String](), ["--source", "gits"], ["--since", "2023-12-31T15:00:00Z"], ["--category", "weather"], ["--active"],
    ])
    func totalsAddUp(filter: [String]) async throws {
        for database in [QueryCLITests.database, AnalystFixture.database] {
            let result = try await Self.incidents(["stats", "--format", "json"] + filter, database: database)
            let stats = try #require(try Self.json(result.stdout) as? [String: Any])
            let (total, active, ended, cleared) = (stats["total"] as? Int, stats["active"] as? Int, stats["ended"] as? Int, stats["cleared"] as? Int)
            #expect(total == (active ?? -1) + (ended ?? -1) + (cleared ?? -1), "\(filter): \(stats)")
            // Each count is the number of rows `list` shows with that STATUS.
            let listed = try await Self.incidents(["list", "--format", "json"] + filter, database: database)
            let statuses = (try Self.json(listed.stdout) as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            #expect(statuses.count == total)
            #expect(statuses.filter { $0 == "ended" }.count == ended)
            #expect(statuses.filter { $0 == "cleared" }.count == cleared)
        }
    }

    @Test("stats --by FIELD [--per day|hour] and --chart, in --tz", arguments: [
        (["stats", "--by", "road", "--per", "day", "--tz", "KST"], "stats.road.day.txt"),
        (["stats", "--by", "status", "--per", "hour"], "stats.status.hour.txt"),
        (["stats", "--by", "category", "--format", "json"], "stats.category.json"),
        (["stats", "--by", "hour", "--chart", "--tz", "KST"], "stats.hour.chart.txt"),
        (["stats", "--by", "day", "--chart"], "stats.day.chart.txt"),
        (["stats", "--chart", "--tz", "KST"], "stats.chart.txt"),
    ])
    func grouped(arguments: [String], file: String) async throws {
        try Self.expectGolden(try await Self.incidents(arguments, database: QueryCLITests.database, columns: 60), file)
    }

    @Test("the chart fits the terminal: every line of it at most COLUMNS wide", arguments: [21, 40, 60, 120])
    func chartWidth(columns: Int) async throws {
        let result = try await Self.incidents(["stats", "--by", "road", "--chart"], database: QueryCLITests.database, columns: columns)
        #expect(result.status == 0, "\(result.stderr)")
        let chart = try #require(result.stdout.components(separatedBy: "\n\n").last)  // after the totals line
        #expect(chart.hasPrefix("ROAD\n") && chart.contains("█"))
        for line in chart.split(separator: "\n") {
            #expect(QueryCLITests.displayWidth(String(line)) <= columns, "\(line)")
        }
    }

    @Test("stats: --per without a field, and --chart with json, are usage errors", arguments: [
        ["stats", "--per", "day"], ["stats", "--by", "hour", "--per", "day"], ["stats", "--by", "road", "--chart", "--format", "json"],
        ["stats", "--by", "weekday"],
    ])
    func groupingUsage(arguments: [String]) async throws {
        let result = try await Self.incidents(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("stats on more roads than it lists: the road table says 'top 20 of M', JSON gives distinct_roads")
    func topRoadsOfMany() async throws {
        let ws = try Workspace()
        // 25 roads: road N has N incidents, so the 20 listed are roads 25 down to 6.
        var items = ""
        var count = 0
        for road in 1...25 {
            for index in 1...road {
                count += 1
                items += """
                    <itemList><linkId></linkId><regSeq>R\(road)-\(index)</regSeq><startDate>2024-01-01 09:00:00</startDate>
                    <inciDesc>[사고] 도로\(road) 사고</inciDesc><inciPlace1>도로\(road)</inciPlace1><coord_x>127.0</coord_x><coord_y>37.0</coord_y></itemList>

                    """
            }
        }
        let feed = try ws.write("roads.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>ok</headerMsg><itemCount>\(count)</itemCount></msgHeader>
            <msgBody>\(items)</msgBody></ServiceResult>
            """)
        let ingest = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", feed, "--database", ws.database])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let text = try await run("incidents", ["stats", "--database", ws.database], environment: ["COLUMNS": "100"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex { $0.hasPrefix("ROAD (top 20 of 25)") }, "\(text.stdout)")
        #expect(lines[heading + 1].split(separator: " ", omittingEmptySubsequences: true) == ["도로25", "25"])
        #expect(lines[heading + 20].split(separator: " ", omittingEmptySubsequences: true) == ["도로6", "6"])
        let json = try await run("incidents", ["stats", "--database", ws.database, "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["total"] as? Int == 325)
        #expect(object["distinct_roads"] as? Int == 25)
        #expect((object["by_road"] as? [String: Int])?.count == 20)
    }

    @Test("stats: no road and a road named '-' are two groups; no road is '-' in a table, null in JSON, empty in csv (walk finding 25)")
    func noRoad() async throws {
        let ws = try Workspace()
        func item(_ id: String, _ place: String) -> String {
            """
            <itemList><linkId></linkId><regSeq>\(id)</regSeq><startDate>2024-01-01 09:00:00</startDate>
            <inciDesc>[사고] 사고</inciDesc><inciPlace1>\(place)</inciPlace1><coord_x>127.0</coord_x><coord_y>37.0</coord_y></itemList>
            """
        }
        let feed = try ws.write("roads.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>ok</headerMsg><itemCount>3</itemCount></msgHeader>
            <msgBody>\(item("N1", ""))\(item("N2", ""))\(item("D1", "-"))</msgBody></ServiceResult>
            """)
        let ingest = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", feed, "--database", ws.database])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let json = try await run("incidents", ["stats", "--by", "road", "--format", "json", "--database", ws.database])
        #expect(json.status == 0, "\(json.stderr)")
        let groups = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["groups"] as? [[String: Any]])
        #expect(groups.map { "\($0["road"] is NSNull ? "null" : $0["road"] as? String ?? "?") \($0["count"] as? Int ?? 0)" } == ["null 2", "- 1"], "\(json.stdout)")
        let csv = try await run("incidents", ["stats", "--by", "road", "--format", "csv", "--database", ws.database])
        #expect(csv.stdout == "road,count\r\n,2\r\n-,1\r\n", "\(csv.stdout)")
        let table = try await run("incidents", ["stats", "--by", "road", "--database", ws.database])
        let rows = table.stdout.split(separator: "\n").suffix(2).map { $0.split(separator: " ").map(String.init) }
        #expect(rows == [["-", "2"], ["-", "1"]], "\(table.stdout)")
        let summary = try await run("incidents", ["stats", "--format", "json", "--database", ws.database])
        let byRoad = (try JSONSerialization.jsonObject(with: Data(summary.stdout.utf8)) as? [String: Any])?["by_road"] as? [String: Int]
        #expect(byRoad == ["": 2, "-": 1], "\(summary.stdout)")
        // The timeline's groups alike: its last hour holds both (until a minute from now: a
        // window ending in the second the poll was observed holds none of it).
        let until = ISO8601DateFormatter().string(from: Date().addingTimeInterval(60))
        let timeline = try await run("incidents", ["timeline", "--by", "road", "--until", until, "--format", "json", "--database", ws.database])
        let buckets = try #require(try JSONSerialization.jsonObject(with: Data(timeline.stdout.utf8)) as? [[String: Any]], "\(timeline.stderr)")
        let last = buckets.filter { $0["bucket"] as? String == buckets.last?["bucket"] as? String }
        #expect(last.map { "\($0["road"] is NSNull ? "null" : $0["road"] as? String ?? "?") \($0["active"] as? Int ?? 0)" }.sorted() == ["- 1", "null 2"],
                "\(timeline.stdout.suffix(400))")
    }
}
