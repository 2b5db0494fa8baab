import Foundation
import TestSupport
import Testing

/// `ingest --file` replays and backfills, and `--tz` with a zone that has daylight saving time.
@Suite("End to end: replays and time zones", .serialized)
struct ReplayEndToEndTests {
    static let three = TestPaths.fixture("gits/incidents_3.xml").path
    static let later = TestPaths.fixture("gits/incidents_2_later.xml").path

    static func ingest(_ ws: Workspace, _ file: String, _ extra: [String] = []) async throws -> ProcessResult {
        try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", file, "--database", ws.database] + extra)
    }

    static func runsJSON(_ ws: Workspace) async throws -> [[String: Any]] {
        let result = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    }

    /// A response "fetched" in the future would make every later poll look older than what it
    /// stored (nothing would update or clear until then); an instant a century away cannot be
    /// written. Both are usage errors (64) that store nothing.
    @Test("--as-of in the future, or a duration ago longer than 100 years, is refused and stores nothing", arguments: [
        ("2099-01-01", "is in the future: give the time the response was fetched"), ("1000000d", "'1000000d' is too long: at most 36500d (100 years)"),
    ])
    func asOfOutOfRange(asOf: String, message: String) async throws {
        let ws = try Workspace()
        let result = try await Self.ingest(ws, Self.three, ["--as-of", asOf])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        if FileManager.default.fileExists(atPath: ws.database) {
            #expect(try await ws.listJSON().isEmpty)
        }
    }

    @Test("--as-of half a minute ahead of this host's clock is refused too (walk finding 23: a minute was allowed)")
    func asOfJustAhead() async throws {
        let ws = try Workspace()
        let ahead = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30))
        let result = try await Self.ingest(ws, Self.three, ["--as-of", ahead])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--as-of \(ahead) is in the future"), "\(result.stderr)")
    }

    @Test("a replay adds history and clears nothing; --as-of is when the response was fetched; runs shows the file")
    func replayClearsNothing() async throws {
        let ws = try Workspace()
        let first = try await Self.ingest(ws, Self.three, ["--as-of", "2024-01-01 09:10", "--tz", "KST"])
        #expect(first.status == 0, "\(first.stderr)")
        // The later answer no longer lists 202312310777; as a replay it must not clear it.
        let second = try await Self.ingest(ws, Self.later, ["--as-of", "2024-01-01T01:00:00Z"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("fetched=2 inserted=0 updated=1 unchanged=1 reopened=0 cleared=0"))
        let rows = try await ws.listJSON(["--order", "source"])
        #expect(rows.map { $0.text("external_id") } == ["202312310777", "202401010001", "202401010002"])
        #expect(rows.allSatisfy { $0["cleared_at"] is NSNull })
        #expect(rows.map { $0.text("first_seen_at") } == Array(repeating: "2024-01-01T00:10:00Z", count: 3))
        #expect(rows.map { $0.text("last_seen_at") } == ["2024-01-01T00:10:00Z", "2024-01-01T01:00:00Z", "2024-01-01T01:00:00Z"])

        let runs = try await Self.runsJSON(ws)
        #expect(runs.map { $0["origin"] as? String } == ["file", "file"])
        #expect(runs.map { $0["file"] as? String } == [Self.later, Self.three])
        #expect(runs.map { $0["observed_at"] as? String } == ["2024-01-01T01:00:00Z", "2024-01-01T00:10:00Z"])
        let host = ProcessInfo.processInfo.environment["HOSTNAME"] ?? (try? String(contentsOfFile: "/etc/hostname", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(runs.allSatisfy { ($0["host"] as? String) == host }, "the host that ran each replay: \(runs.map { $0["host"] ?? "-" })")
        let table = try await run("incidents", ["runs", "--database", ws.database], environment: ["COLUMNS": "200"]).stdout
        #expect(table.split(separator: "\n").dropFirst().allSatisfy { $0.contains(" succeeded  incidents_") }, "\(table)")
        #expect(table.contains("incidents_2_later.xml") && table.contains("incidents_3.xml"))

        // With --complete, the same file is a complete answer of its time: it clears.
        let complete = try await Self.ingest(ws, Self.later, ["--as-of", "2024-01-01T01:05:00Z", "--complete"])
        #expect(complete.stderr.contains("cleared=1"), "\(complete.stderr)")
        #expect(try await ws.listJSON(["--active"]).compactMap { $0.text("external_id") }.sorted() == ["202401010001", "202401010002"])
    }

    @Test("an older --complete replay says why it clears less: the summary line, runs and runs --format json (walk finding 24)")
    func olderCompleteReplay() async throws {
        let ws = try Workspace()
        #expect(try await Self.ingest(ws, Self.three, ["--as-of", "2024-01-01T02:00:00Z", "--complete"]).status == 0)
        // The answer of 01:00 no longer lists 202312310777, but the poll of 02:00 did: it stays active.
        let older = try await Self.ingest(ws, Self.later, ["--as-of", "2024-01-01T01:00:00Z", "--complete"])
        #expect(older.status == 0, "\(older.stderr)")
        let note = "older than the newest poll that listed them (2024-01-01T02:00:00Z): 1 incident(s) it does not list stay active, as a later poll listed them; an older answer adds history at its own time without rewriting the present"
        #expect(older.stderr.contains("event=ingest.finished source=gits provider=gits status=succeeded fetched=2 inserted=0 updated=0 unchanged=1 reopened=0 cleared=0"),
                "\(older.stderr)")
        #expect(older.stderr.contains(note), "\(older.stderr)")
        let runs = try await Self.runsJSON(ws)
        #expect(runs.first?["status"] as? String == "succeeded")
        #expect(runs.first?["warnings"] as? [String] == [
            "1 record(s) were older than the stored state of their incident (observed 2024-01-01T01:00:00Z); only their first-seen time was used", note,
        ])
        #expect(runs.last?["warnings"] as? [String] == [])
        let table = try await run("incidents", ["runs", "--database", ws.database, "--wide"]).stdout
        #expect(table.contains("; " + note), "\(table)")
        let rows = try await ws.listJSON(["--order", "source"])
        #expect(rows.map { $0.text("external_id") } == ["202312310777", "202401010001", "202401010002"])
        #expect(rows.allSatisfy { $0["cleared_at"] is NSNull }, "none cleared: \(rows.map { $0["cleared_at"] ?? "-" })")
    }

    @Test("without --as-of, the response was fetched when the file was last modified")
    func modificationTime() async throws {
        let ws = try Workspace()
        let copy = ws.directory.appendingPathComponent("saved.xml").path
        try FileManager.default.copyItem(atPath: Self.three, toPath: copy)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_704_070_800)], ofItemAtPath: copy)
        #expect(try await Self.ingest(ws, copy).status == 0)
        #expect(try await ws.listJSON().map { $0.text("first_seen_at") } == Array(repeating: "2024-01-01T01:00:00Z", count: 3))
        #expect(try await Self.runsJSON(ws).first?["observed_at"] as? String == "2024-01-01T01:00:00Z")
    }

    @Test("--as-of that is not an instant is a usage error naming the option")
    func badAsOf() async throws {
        let ws = try Workspace()
        let result = try await Self.ingest(ws, Self.three, ["--as-of", "last tuesday"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: --as-of: 'last tuesday' is not an instant"))
    }

    /// One incident that started in July (EDT in New York), one in January (EST), both at
    /// 13:00 Korea time = 04:00 UTC.
    static let summerAndWinter = """
        <?xml version="1.0" encoding="UTF-8"?><ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>ok</headerMsg>\
        <itemCount>2</itemCount></msgHeader><msgBody>\
        <itemList><regSeq>SUMMER</regSeq><startDate>2024-07-01 13:00:00</startDate><inciDesc>[공사] 여름</inciDesc><inciPlace1>A</inciPlace1></itemList>\
        <itemList><regSeq>WINTER</regSeq><startDate>2024-01-15 13:00:00</startDate><inciDesc>[공사] 겨울</inciDesc><inciPlace1>B</inciPlace1></itemList>\
        </msgBody></ServiceResult>
        """

    @Test("--tz America/New_York: each start at its own offset in the table, in --since/--until and in the hours of stats")
    func daylightSavingTime() async throws {
        let ws = try Workspace()
        #expect(try await Self.ingest(ws, try ws.write("dst.xml", Self.summerAndWinter)).status == 0)
        let tz = ["--tz", "America/New_York", "--database", ws.database]
        let table = try await run("incidents", ["list", "--order", "source"] + tz, environment: ["COLUMNS": "120"]).stdout
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("STARTED (America/New_York)") == true, "\(table)")
        #expect(lines.contains { $0.contains("2024-07-01 00:00") && $0.contains("여름") }, "EDT, -04:00: \(table)")
        #expect(lines.contains { $0.contains("2024-01-14 23:00") && $0.contains("겨울") }, "EST, -05:00: \(table)")

        func ids(_ filter: [String]) async throws -> [String] {
            let result = try await run("incidents", ["list", "--format", "json", "--order", "source"] + filter + tz)
            #expect(result.status == 0, "\(result.stderr)")
            let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
            return rows.compactMap { $0["external_id"] as? String }
        }
        #expect(try await ids(["--since", "2024-07-01 00:00"]) == ["SUMMER"])
        #expect(try await ids(["--since", "2024-07-01 00:01"]) == [])
        #expect(try await ids(["--until", "2024-01-14 23:00"]) == [])
        #expect(try await ids(["--until", "2024-01-14 23:01"]) == ["WINTER"])

        let stats = try await run("incidents", ["stats", "--format", "json"] + tz)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(object["by_hour"] as? [String: Int] == ["00": 1, "23": 1], "\(stats.stdout)")
    }
}
