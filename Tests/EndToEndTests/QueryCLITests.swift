import Foundation
import TestSupport
import Testing

/// `incidents` on a fixed database: golden output for each format, each filter, and the
/// formats read back by independent parsers (Python's json and csv modules).
@Suite("End to end: the query CLI", .serialized)
struct QueryCLITests {
    static let database: String = {
        let path = (try? TestPaths.temporaryDirectory("query"))!.appendingPathComponent("fixture.sqlite").path
        try? QueryFixture.build(at: path)
        return path
    }()

    /// Runs `incidents ARGS --database fixture` with a fixed terminal width and "now".
    static func incidents(_ arguments: [String]) async throws -> ProcessResult {
        try await run("incidents", arguments + ["--database", database], environment: ["COLUMNS": "110"])
    }

    static func golden(_ name: String) async throws -> String {
        try String(contentsOf: TestPaths.fixture("golden/\(name)"), encoding: .utf8)
    }

    /// `incidents` arguments and the golden file of their output.
    static let goldenCases: [([String], String)] = [
        (["list"], "list.table.txt"), (["list", "--format", "json"], "list.json"), (["list", "--format", "ndjson"], "list.ndjson"),
        (["list", "--format", "csv"], "list.csv"), (["list", "--format", "geojson"], "list.geojson"),
        (["list", "--tz", "KST", "--order", "source"], "list.kst.txt"),
        (["show", "1"], "show.1.txt"), (["show", "1", "--format", "json"], "show.1.json"),
        (["stats", "--tz", "KST"], "stats.txt"), (["stats", "--format", "json"], "stats.json"),
        (["runs"], "runs.txt"), (["runs", "--failures-first", "--format", "json"], "runs.failures.json"),
    ]

    @Test("golden output of each format", arguments: goldenCases)
    func goldenOutput(arguments: [String], file: String) async throws {
        let result = try await Self.incidents(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let expected = try await Self.golden(file)
        #expect(result.stdout == expected, "incidents \(arguments.joined(separator: " ")) differs from Tests/Fixtures/golden/\(file)")
        if result.stdout != expected {
            try? result.stdout.write(toFile: "/tmp/\(file).actual", atomically: true, encoding: .utf8)
        }
    }

    /// The same golden files from PostgreSQL: the fixture copied into a new database of the
    /// throwaway server (`INCIDENTS_TEST_POSTGRES`, started by Scripts/test) with
    /// `incident-scheduler copy`, then queried through a read-only session.
    @Test("golden output of each format from PostgreSQL, after incident-scheduler copy")
    func goldenOutputFromPostgres() async throws {
        let server = try #require(ProcessInfo.processInfo.environment["INCIDENTS_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 },
                                  "INCIDENTS_TEST_POSTGRES is not set: run the tests with Scripts/test, which starts a throwaway PostgreSQL")
        let name = "query_golden_\(UInt32.random(in: 0...UInt32.max))"
        let psql = URL(fileURLWithPath: "/usr/bin/psql")
        let created = await (try RunningProcess(psql, [server, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(name)"])).finished(timeout: 60)
        #expect(created.status == 0, "\(created.stderr)")
        var target = try #require(URLComponents(string: server))
        target.path = "/" + name
        let uri = try #require(target.string)
        let copied = try await run("incident-scheduler", ["copy", "--from", Self.database, "--to", uri])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout.hasPrefix("copied 6 incidents, 1 revisions, 5 runs, 1 rejected records, 0 quota states from \(Self.database) into postgresql://postgres@127.0.0.1:"), "\(copied.stdout)")
        // A second copy into the now full database is refused and changes nothing.
        let again = try await run("incident-scheduler", ["copy", "--from", Self.database, "--to", uri])
        #expect(again.status == 1)
        #expect(again.stderr.contains("the PostgreSQL database is not empty"), "\(again.stderr)")
        for (arguments, file) in Self.goldenCases {
            let result = try await run("incidents", arguments + ["--database", uri], environment: ["COLUMNS": "110"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == (try await Self.golden(file)),
                    "incidents \(arguments.joined(separator: " ")) from PostgreSQL differs from Tests/Fixtures/golden/\(file)")
        }
        _ = await (try RunningProcess(psql, [server, "-qc", "DROP DATABASE \(name) WITH (FORCE)"])).finished(timeout: 60)
    }

    /// The external ids `incidents list ARGS --format json` returns, in order.
    static func ids(_ arguments: [String]) async throws -> [String] {
        let result = try await incidents(["list", "--format", "json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        return rows.compactMap { $0["external_id"] as? String }
    }

    static let accident = "202401010001", roadwork = "202401010002", breakdown = "202401010003", other = "202401010004"
    static let itsAccident = "1100123400:20240101001500:추돌사고", itsWeather = "128.152,37.662:20231231233000:결빙"

    @Test("each filter", arguments: [
        ([String](), [accident, itsAccident, itsWeather, roadwork, breakdown, other]),
        (["--active"], [accident, itsAccident, roadwork, other]),
        (["--source", "its-seoul"], [itsAccident, itsWeather]),
        (["--source", "gits", "--source", "its-seoul", "--limit", "2"], [accident, itsAccident]),
        (["--category", "accident"], [accident, itsAccident]),
        (["--category", "weather", "--category", "breakdown"], [itsWeather, breakdown]),
        (["--since", "2023-12-31T15:00:00Z"], [accident, itsAccident]),
        (["--since", "2024-01-01", "--tz", "KST"], [accident, itsAccident]),
        (["--since", "2023-12-31 23:00", "--tz", "KST"], [accident, itsAccident, itsWeather, roadwork]),
        (["--until", "2023-12-31 14:00", "--tz", "+09:00"], [other]),
        (["--seen-since", "2024-01-01T00:30:00Z"], [accident, roadwork, other]),
        (["--road", "경부"], [accident, itsAccident]),
        (["--road", "고속도로"], [accident, roadwork]),
        // Decomposed Hangul (NFD, as some clipboards give it) finds what it looks like.
        (["--road", "경부".decomposedStringWithCanonicalMapping], [accident, itsAccident]),
        (["--search", "추돌사고".decomposedStringWithCanonicalMapping], [accident, itsAccident]),
        (["--search", "신갈JC 추돌사고".decomposedStringWithCanonicalMapping], [accident]),
        (["--bbox", "127.0,37.2,127.1,37.3"], [accident, itsAccident]),
        (["--near", "37.2636,127.0286", "--radius", "10km"], [accident, itsAccident]),
        (["--near", "37.2636,127.0286", "--radius", "500m"], [accident]),
        (["--near", "37.5,127.0", "--radius", "40km", "--order", "started"], [accident, itsAccident, roadwork, breakdown]),
        (["--near", "37.5,127.0", "--radius", "40km"], [breakdown, accident, roadwork, itsAccident]),
        (["--search", "잠실"], [breakdown]),
        (["--search", "추돌사고"], [accident, itsAccident]),
        (["--search", "통제 신갈"], [accident]),
        (["--search", "방음벽"], [roadwork]),
        (["--search", "\"방음벽\" 보수"], [roadwork]),
        (["--search", "100%"], []),
        (["--search", "ic"], [accident, roadwork]),
        (["--search", "신갈JC 추돌사고"], [accident]),
        (["--search", "확인"], [other]),
        (["--active", "--road", "경부", "--near", "37.2636,127.0286", "--radius", "10km"], [accident, itsAccident]),
        (["--order", "started-asc", "--limit", "2"], [other, breakdown]),
        (["--order", "source"], [accident, roadwork, breakdown, other, itsAccident, itsWeather]),
    ])
    func filters(arguments: [String], expected: [String]) async throws {
        #expect(try await Self.ids(arguments) == expected, "incidents list \(arguments.joined(separator: " "))")
    }

    /// Parses `text` with Python's `kind` module (csv or json) and returns it as JSON.
    static func python(_ kind: String, _ text: String) async throws -> Any {
        let program = kind == "csv"
            ? "import csv,io,json,sys; print(json.dumps(list(csv.DictReader(io.StringIO(sys.stdin.read(), newline='')))))"
            : "import json,sys; print(json.dumps(json.load(sys.stdin)))"
        let input = try TestPaths.temporaryDirectory("py").appendingPathComponent("input")
        try text.write(to: input, atomically: true, encoding: .utf8)
        let result = await (try RunningProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "python3 -c \"$0\" < \"$1\"", program, input.path]))
            .finished()
        #expect(result.status == 0, "\(result.stderr)")
        let data = Data(result.stdout.utf8)
        return try JSONSerialization.jsonObject(with: data)
    }

    @Test("CSV read back by Python's csv module: every value, Korean text, quotes and commas intact (RFC 4180)")
    func csvRoundTrip() async throws {
        let csv = try await Self.incidents(["list", "--format", "csv", "--order", "source"]).stdout
        #expect(csv.hasSuffix("\r\n"))
        let rows = try #require(try await Self.python("csv", csv) as? [[String: String]])
        let listed = try await Self.incidents(["list", "--format", "json", "--order", "source"]).stdout
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        #expect(rows.count == json.count)
        for (row, object) in zip(rows, json) {
            for (key, value) in object {
                let expected: String = switch value {
                case is NSNull: ""
                case let number as NSNumber: "\(number)"
                default: "\(value)"
                }
                if key == "latitude" || key == "longitude" {
                    #expect(Double(row[key] ?? "") == (value as? NSNumber)?.doubleValue, "\(key)")
                } else {
                    #expect(row[key] == expected, "\(key) of \(object["external_id"] ?? "")")
                }
            }
        }
        #expect(rows.first { $0["external_id"] == Self.roadwork }?["description"] == "[공사] 영동고속도로 (강릉방향) 마성IC → 용인IC  갓길 통제, \"방음벽\" 보수")
    }

    @Test("GeoJSON read back by Python's json module: a FeatureCollection of lon/lat Points (RFC 7946)")
    func geoJSONRoundTrip() async throws {
        let text = try await Self.incidents(["list", "--format", "geojson", "--order", "source"]).stdout
        let collection = try #require(try await Self.python("json", text) as? [String: Any])
        #expect(collection["type"] as? String == "FeatureCollection")
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect(features.count == 6)
        let jamsil = try #require(features.first { ($0["properties"] as? [String: Any])?["external_id"] as? String == Self.breakdown })
        let geometry = try #require(jamsil["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "Point")
        #expect(geometry["coordinates"] as? [Double] == [127.08203126, 37.52739696162846])
        let properties = try #require(jamsil["properties"] as? [String: Any])
        #expect(properties["road"] as? String == "강변북로")
        #expect(properties["cleared_at"] as? String == "2024-01-01T01:00:00Z")
        #expect(properties["latitude"] == nil)
        let noPosition = try #require(features.first { ($0["properties"] as? [String: Any])?["external_id"] as? String == Self.other })
        #expect(noPosition["geometry"] is NSNull)
        for feature in features {
            #expect(feature["type"] as? String == "Feature")
            if let point = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] {
                #expect((124...132).contains(point[0]) && (33...39).contains(point[1]), "longitude first, then latitude")
            }
        }
    }

    @Test("Korean text survives every format", arguments: ["table", "json", "ndjson", "csv", "geojson"])
    func korean(format: String) async throws {
        // --wide: every column in full (at 110 columns a table leaves LOCATION out for LAST SEEN).
        let out = try await Self.incidents(["list", "--format", format, "--source", "its-seoul"] + (format == "table" ? ["--wide"] : [])).stdout
        #expect(out.contains("노면 결빙 주의"))
        #expect(out.contains("시점방향"))
    }

    @Test("the table fits the terminal width and aligns Korean (wide) characters")
    func tableWidth() async throws {
        for width in ["60", "80", "110"] {
            let out = try await run("incidents", ["list", "--database", Self.database], environment: ["COLUMNS": width]).stdout
            for line in out.split(separator: "\n") {
                #expect(Self.displayWidth(String(line)) <= Int(width)!, "\(line)")
            }
        }
    }

    /// Columns as a terminal shows them: East Asian wide characters take two.
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { sum, scalar in
            let v = scalar.value
            let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v)
            return sum + (wide ? 2 : 1)
        }
    }

    @Test("usage errors name the problem, give a hint and exit 64", arguments: [
        ["list", "--format", "xml"], ["list", "--since", "yesterday"], ["list", "--bbox", "1,2,3"], ["list", "--near", "95,127"],
        ["list", "--radius", "5km"], ["list", "--order", "distance"], ["list", "--category", "crash"], ["list", "--limit", "0"],
        ["list", "--tz", "Mars/Olympus"], ["show"], ["show", "abc"], ["runs", "--limit", "-1"], ["stats", "--near", "37,127,1"],
        ["list", "--until", "2024-13-01"], ["list", "--seen-since"],
    ])
    func usage(arguments: [String]) async throws {
        let result = try await Self.incidents(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: "))
        #expect(result.stderr.contains("hint: see 'incidents "))
        #expect(result.stdout.isEmpty)
    }

    @Test("show of an unknown id says so and exits 1")
    func unknownID() async throws {
        let result = try await Self.incidents(["show", "999"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no incident with id 999"))
    }

    // MARK: Issue 20, points 13 and 14: terminal manners, freshness, empty answers

    @Test("in a terminal, list shows a page and says how many more; a pipe or --limit gets what it asks for")
    func terminalPage() async throws {
        // A real terminal: script(1) runs the command on a pseudo-terminal of unknown height
        // ($LINES 9: a page of 5 rows).
        let command = [Executables.url("incidents").path, "list", "--database", Self.database].map(shellQuoted).joined(separator: " ")
        let tty = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
                                             environment: ["LINES": "9", "COLUMNS": "110"])).finished(timeout: 60)
        #expect(tty.status == 0, "\(tty.stderr)")
        let lines = tty.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        #expect(lines.count == 7, "header, 5 rows, the footer: \(tty.stdout)")
        #expect(lines.last == "1 more; use --limit or a pipe (| less) to see them")
        let piped = try await Self.incidents(["list"])
        #expect(piped.stdout.split(separator: "\n").count == 7 && !piped.stdout.contains("more;"), "a pipe gets every row: \(piped.stdout)")
        for arguments in [["list"], ["list", "--limit", "6"], ["list", "--format", "csv"]] {
            let result = try await run("incidents", arguments + ["--database", Self.database],
                                       environment: ["INCIDENTS_INTERACTIVE": arguments == ["list"] ? "0" : "1", "LINES": "9"])
            #expect(!result.stdout.contains("more;"), "\(arguments): \(result.stdout)")
        }
    }

    @Test("the table says when each incident was last seen")
    func lastSeenColumn() async throws {
        let result = try await Self.incidents(["list", "--tz", "KST", "--wide"])
        #expect(result.status == 0, "\(result.stderr)")
        let header = try #require(result.stdout.split(separator: "\n").first)
        #expect(header.contains("STARTED (+09:00)  LAST SEEN"), "\(header)")
    }

    @Test("an empty answer names the filter that emptied it and its neighbour", arguments: [
        (["--since", "2024-06-01"], "note: no incident matches; without --since 2024-06-01, 6 would (--since filters by start time; --seen-since 2024-06-01 keeps those a poll saw since then)"),
        (["--seen-since", "2030-01-01"], "note: no incident matches; without --seen-since 2030-01-01, 6 would (--seen-since filters by when a poll last saw them; --since 2030-01-01 keeps those that started since then)"),
        (["--road", "없는길"], "note: no incident matches; without --road 없는길, 6 would"),
        (["--road", "없는길", "--search", "없는말"], "note: no incident matches these filters, nor with any one of them left out"),
    ])
    func emptyAnswer(arguments: [String], note: String) async throws {
        for format in ["table", "json"] {
            let result = try await Self.incidents(["list", "--format", format] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr == note + "\n", "\(arguments) \(format)")
            if format == "json" { #expect(result.stdout == "[]\n") }
        }
        let stats = try await Self.incidents(["stats"] + arguments)
        #expect(stats.status == 0 && stats.stderr == note + "\n", "stats \(arguments): \(stats.stderr)")
    }
}
