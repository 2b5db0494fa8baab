import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// Exports of every row (issue 13, point 1): 50,000 incidents written by `incidents list` as
/// the store yields them and read back row by row, every row checked. (Memory is measured by
/// Scripts/bench-export, not here.)
@Suite("End to end: exports of 50,000 rows, read back row by row", .serialized)
struct StreamingExportTests {
    static let count = 50_000
    static let base = UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!

    static func description(_ i: Int) -> String { "[사고] 경부고속도로 \(i)번 \"따옴표\", 쉼표\n둘째 줄" }

    static let database: String = {
        let path = (try? TestPaths.temporaryDirectory("stream"))!.appendingPathComponent("large.sqlite").path
        let incidents = (0..<count).map { (i: Int) -> Incident in
            let category: IncidentCategory = i % 2 == 0 ? .accident : .roadwork
            let latitude = 37 + Double(i % 1000) / 10_000
            return Incident(source: "gits", externalID: "S\(i)", category: category, description: description(i), road: "경부고속도로",
                            coordinate: Coordinate(latitude: latitude, longitude: 127), startedAt: base.adding(seconds: Int64(i) * 60))
        }
        let store = try? SQLiteStore(path: path, clock: .fixed(base.adding(seconds: 86_400 * 60)))
        _ = try? store?.ingest(PollContext(source: "gits", startedAt: base.adding(seconds: 86_400 * 60)),
                               QueryFixture.Producer(incidents: incidents).callAsFunction)
        return path
    }()

    static func list(_ format: String) async throws -> ProcessResult {
        try await run("incidents", ["list", "--database", database, "--format", format], environment: ["COLUMNS": "100"], timeout: 300)
    }

    @Test("ndjson: 50,000 lines, newest start first, every field of every row as stored")
    func ndjson() async throws {
        let result = try await Self.list("ndjson")
        #expect(result.status == 0, "\(result.stderr)")
        var expected = Self.count - 1
        var rows = 0
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "row \(rows)")
            guard row["external_id"] as? String == "S\(expected)",
                  row["description"] as? String == Self.description(expected),
                  row["category"] as? String == (expected % 2 == 0 ? "accident" : "roadwork"),
                  row["started_at"] as? String == Self.base.adding(seconds: Int64(expected) * 60).rfc3339,
                  (row["latitude"] as? NSNumber)?.doubleValue == 37 + Double(expected % 1000) / 10_000,
                  row["status"] as? String == "active" else {
                Issue.record("row \(rows) is not incident S\(expected): \(line.prefix(300))")
                return
            }
            expected -= 1
            rows += 1
        }
        #expect(rows == Self.count)
        #expect(result.stdout.hasSuffix("}\n"))
    }

    @Test("csv: 50,000 records read back by Python's csv module, every external id and description in order")
    func csv() async throws {
        let result = try await Self.list("csv")
        #expect(result.status == 0, "\(result.stderr)")
        let file = try TestPaths.temporaryDirectory("stream-csv").appendingPathComponent("all.csv")
        try result.stdout.write(to: file, atomically: true, encoding: .utf8)
        let check = """
            import csv, sys
            expected = \(Self.count) - 1
            with open(sys.argv[1], newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f):
                    want = f'[사고] 경부고속도로 {expected}번 "따옴표", 쉼표\\n둘째 줄'
                    if row["external_id"] != f"S{expected}" or row["description"] != want or row["status"] != "active":
                        sys.exit(f"row {\(Self.count) - 1 - expected}: {row}")
                    expected -= 1
            if expected != -1:
                sys.exit(f"{\(Self.count) - 1 - expected} rows")
            print("ok")
            """
        let python = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", check, file.path])
        while python.process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        let checked = python.wait()
        #expect(checked.status == 0 && checked.stdout == "ok\n", "\(checked.stderr)")
    }

    @Test("json: one array element per row; table: one line per row, none wider than the terminal")
    func wholeDocuments() async throws {
        let json = try await Self.list("json")
        #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.count == Self.count)
        let table = try await Self.list("table")
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == Self.count + 1)
        #expect(lines.allSatisfy { QueryCLITests.displayWidth(String($0)) <= 100 })
        // The id column is as wide as the sample's widest id (50000); the oldest incident, id 1, comes last.
        #expect(lines.last?.hasPrefix("1      active  gits    accident  2024-01-01 00:00  2024-03-01 00:00  경부고속도로  ") == true, "\(lines.last ?? "")")
    }
}
