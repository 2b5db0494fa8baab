import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// `incidents changes` (issue 22): the change feed from a cursor, as one JSON object per line
/// or one array, and `--follow` printing a poll committed while it waits.
@Suite("End to end: history and changes", .serialized)
struct HistoryCLITests {
    static func instant(_ text: String) -> UTCInstant { UTCInstant(rfc3339: "2024-03-01T\(text):00Z")! }

    static func poll(_ path: String, _ time: String, _ ids: [String]) throws {
        let store = try SQLiteStore(path: path, clock: .fixed(instant(time)))
        let incidents = ids.map { Incident(source: "gits", externalID: $0, category: .accident, description: "사고 \($0)",
                                           road: "경부고속도로", startedAt: instant("00:00")) }
        _ = try store.ingest(PollContext(source: "gits", startedAt: instant(time)),
                             QueryFixture.Producer(incidents: incidents, rejected: []).callAsFunction)
    }

    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    static func summary(_ objects: [[String: Any]]) -> [String] {
        objects.map { "\($0["cursor"] as? Int ?? -1) \($0["kind"] as? String ?? "?") \($0["external_id"] as? String ?? "-")" }
    }

    @Test("changes --after: each transition once, in order, with its cursor, the incident now and its run; --format json is the same as an array")
    func fromCursor() throws {
        let path = try TestPaths.temporaryDirectory("changes").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A", "B"])
        try Self.poll(path, "02:00", ["A"])
        try Self.poll(path, "03:00", ["A", "B", "C"])
        let all = try run("incidents", ["changes", "--database", path])
        #expect(all.status == 0, "\(all.stderr)")
        let objects = try Self.lines(all.stdout)
        #expect(Self.summary(objects) == ["1 appeared A", "2 appeared B", "3 cleared B", "4 reopened B", "5 appeared C"])
        let cleared = objects[2]
        #expect(cleared["at"] as? String == "2024-03-01T02:00:00Z")
        #expect((cleared["run"] as? [String: Any])?["status"] as? String == "succeeded")
        #expect((cleared["run"] as? [String: Any])?["started_at"] as? String == "2024-03-01T02:00:00Z")
        // The incident as it is now: B was reopened.
        #expect((cleared["incident"] as? [String: Any])?["cleared_at"] is NSNull)
        #expect((cleared["incident"] as? [String: Any])?["description"] as? String == "사고 B")

        let rest = try run("incidents", ["changes", "--after", "3", "--database", path])
        #expect(Self.summary(try Self.lines(rest.stdout)) == ["4 reopened B", "5 appeared C"])
        let array = try run("incidents", ["changes", "--after", "3", "--format", "json", "--database", path])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(array.stdout.utf8)) as? [[String: Any]])
        #expect(Self.summary(parsed) == ["4 reopened B", "5 appeared C"])
        let bad = try run("incidents", ["changes", "--after", "-1", "--database", path])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--after: '-1' is not a cursor"))
    }

    @Test("list --at: what was listed then, with each source's last poll before it; other filters and formats combine")
    func listAt() throws {
        let path = try TestPaths.temporaryDirectory("list-at").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A", "B"])
        try Self.poll(path, "02:00", ["A"])
        try Self.poll(path, "03:00", ["A", "C"])
        let table = try run("incidents", ["list", "--at", "2024-03-01T01:30:00Z", "--database", path], environment: ["COLUMNS": "120"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.hasPrefix("as of 2024-03-01 01:30: gits last polled 2024-03-01 01:00 (succeeded)\n\n"))
        let json = try run("incidents", ["list", "--at", "2024-03-01T02:30:00Z", "--format", "json", "--database", path])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(listed.map { $0["external_id"] as? String } == ["A"])
        #expect(json.stderr == "as of 2024-03-01 02:30: gits last polled 2024-03-01 02:00 (succeeded)\n")
        let searched = try run("incidents", ["list", "--at", "2024-03-01T01:30:00Z", "--search", "B", "--format", "json", "--database", path])
        #expect(try (JSONSerialization.jsonObject(with: Data(searched.stdout.utf8)) as? [[String: Any]])?.map { $0["external_id"] as? String } == ["B"])
        let refused = try run("incidents", ["list", "--at", "1h", "--active", "--database", path])
        #expect(refused.status == 64)
    }

    @Test("list --at after a replayed file: the as-of line is the replay's observation (--as-of), not when it was ingested; an empty answer names --at, not a filter")
    func listAtReplay() async throws {
        let path = try TestPaths.temporaryDirectory("list-at-replay").appendingPathComponent("incidents.sqlite").path
        let ingested = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                            "--as-of", "2023-03-21T06:00:00Z", "--complete", "--database", path])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let table = try await run("incidents", ["list", "--at", "2023-03-21T06:30:00Z", "--database", path], environment: ["COLUMNS": "200"])
        #expect(table.status == 0, "\(table.stderr)")
        let first = table.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("as of 2023-03-21 06:30: gits last polled 2023-03-21 06:00 (succeeded, replayed from a file at "), "\(table.stdout)")
        #expect(table.stdout.split(separator: "\n").count == 1 + 1 + 3, "the line, the header and 3 rows (split leaves out the blank): \(table.stdout)")
        let before = try await run("incidents", ["list", "--at", "2023-03-21T05:00:00Z", "--format", "json", "--database", path])
        #expect(before.stdout == "[]\n" || before.stdout == "[\n]\n", "\(before.stdout)")
        #expect(before.stderr.contains("as of 2023-03-21 05:00: gits not polled yet"), "\(before.stderr)")
        #expect(before.stderr.contains("note: no incident was listed as active at 2023-03-21 05:00 by any source"), "\(before.stderr)")
        let road = try await run("incidents", ["list", "--at", "2023-03-21T06:30:00Z", "--road", "없는도로", "--database", path])
        #expect(road.stderr.contains("note: no incident listed as active at 2023-03-21 06:30 matches these filters"), "\(road.stderr)")
        #expect(!road.stderr.contains("database holds no incidents"))
    }

    @Test("timeline --per hour as a table, csv, json and a chart; --by source")
    func timeline() throws {
        let path = try TestPaths.temporaryDirectory("timeline").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A", "B"])
        try Self.poll(path, "02:30", ["A"])
        let window = ["--since", "2024-03-01T00:00:00Z", "--until", "2024-03-01T04:00:00Z", "--database", path]
        let table = try run("incidents", ["timeline", "--per", "hour"] + window, environment: ["COLUMNS": "80"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout == """
            HOUR (UTC)     ACTIVE
            2024-03-01 00  0
            2024-03-01 01  2
            2024-03-01 02  2
            2024-03-01 03  1

            """)
        let csv = try run("incidents", ["timeline", "--per", "hour", "--by", "source", "--format", "csv"] + window)
        #expect(csv.stdout == "start,source,active\r\n2024-03-01T01:00:00Z,gits,2\r\n2024-03-01T02:00:00Z,gits,2\r\n2024-03-01T03:00:00Z,gits,1\r\n")
        let json = try run("incidents", ["timeline", "--per", "day", "--format", "json"] + window)
        let days = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(days.map { $0["bucket"] as? String } == ["2024-03-01"])
        #expect(days.map { $0["active"] as? Int } == [2])
        let chart = try run("incidents", ["timeline", "--per", "hour", "--format", "chart"] + window, environment: ["COLUMNS": "40"])
        #expect(chart.stdout.split(separator: "\n").count == 5)
        #expect(chart.stdout.contains("2024-03-01 01  ") && chart.stdout.hasSuffix(" 1\n"))
    }

    @Test("timeline --since bounds the buckets, not the incidents' start: an incident that started before it counts while active")
    func timelineSinceAfterStart() throws {
        let path = try TestPaths.temporaryDirectory("timeline-since").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A", "B"])  // both started at 00:00
        try Self.poll(path, "02:30", ["A"])
        for (since, expected) in [("2024-03-01T02:00:00Z", "2024-03-01T02:00:00Z,2\r\n2024-03-01T03:00:00Z,1\r\n"),
                                  ("2024-03-01T03:00:00Z", "2024-03-01T03:00:00Z,1\r\n")] {
            let csv = try run("incidents", ["timeline", "--per", "hour", "--since", since, "--until", "2024-03-01T04:00:00Z",
                                            "--format", "csv", "--database", path])
            #expect(csv.status == 0, "\(csv.stderr)")
            #expect(csv.stdout == "start,active\r\n" + expected, "--since \(since)")
        }
    }

    @Test("timeline in a zone with daylight saving time: days of 23 and 25 hours from local midnight, and the skipped hour",
          arguments: [
              // America/New_York: clocks go forward on 10 March 2024 (EST -5 to EDT -4), back on 3 November.
              (["--per", "day", "--since", "2024-03-09T12:00:00Z", "--until", "2024-03-12T00:00:00Z"],
               ["2024-03-09T05:00:00Z", "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z"], ["2024-03-09", "2024-03-10", "2024-03-11"]),
              (["--per", "day", "--since", "2024-11-02T12:00:00Z", "--until", "2024-11-05T00:00:00Z"],
               ["2024-11-02T04:00:00Z", "2024-11-03T04:00:00Z", "2024-11-04T05:00:00Z"], ["2024-11-02", "2024-11-03", "2024-11-04"]),
              (["--per", "hour", "--since", "2024-03-10T06:00:00Z", "--until", "2024-03-10T08:00:00Z"],
               ["2024-03-10T06:00:00Z", "2024-03-10T07:00:00Z"], ["2024-03-10 01", "2024-03-10 03"]),
              (["--per", "hour", "--since", "2024-11-03T05:00:00Z", "--until", "2024-11-03T07:00:00Z"],
               ["2024-11-03T05:00:00Z", "2024-11-03T06:00:00Z"], ["2024-11-03 01", "2024-11-03 01"]),
          ])
    func timelineAcrossDaylightSaving(window: [String], starts: [String], buckets: [String]) throws {
        let path = try TestPaths.temporaryDirectory("timeline-dst").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A"])
        let json = try run("incidents", ["timeline", "--tz", "America/New_York", "--format", "json", "--database", path] + window)
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["start"] as? String } == starts)
        #expect(rows.map { $0["bucket"] as? String } == buckets)
    }

    @Test("changes: a cursor past the log's last is refused (exit 64), not waited on; the incident carries its status")
    func changesCursorPastTheEnd() throws {
        let path = try TestPaths.temporaryDirectory("changes-future").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A", "B"])
        for arguments in [["--after", "3"], ["--after", "999999", "--follow"]] {
            let result = try run("incidents", ["changes", "--database", path] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("cursor \(arguments[1]) is past the change feed's last, 2"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let last = try run("incidents", ["changes", "--after", "2", "--database", path])
        #expect(last.status == 0 && last.stdout.isEmpty, "the last cursor itself is where a reader waits: \(last.stderr)")
        let first = try Self.lines(try run("incidents", ["changes", "--after", "0", "--database", path]).stdout)
        #expect(first.map { ($0["incident"] as? [String: Any])?["status"] as? String } == ["active", "active"])
    }

    @Test("changes --follow stops at the first SIGINT or SIGTERM (130, 143): a reader has nothing to roll back", arguments: [SIGINT, SIGTERM])
    func followStops(signal: Int32) async throws {
        let path = try TestPaths.temporaryDirectory("changes-stop").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A"])
        let follower = try RunningProcess(Executables.url("incidents"), ["changes", "--after", "0", "--follow", "--interval", "30s", "--database", path])
        #expect(try await eventually { follower.stdoutSoFar.contains("\n") })
        follower.send(signal)
        let result = await follower.finished(timeout: 20)
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(Self.summary(try Self.lines(result.stdout)) == ["1 appeared A"])
    }

    @Test("changes --follow prints a poll committed while it waits, once, then keeps waiting")
    func follow() async throws {
        let path = try TestPaths.temporaryDirectory("changes-follow").appendingPathComponent("incidents.sqlite").path
        try Self.poll(path, "01:00", ["A"])
        let follower = try RunningProcess(Executables.url("incidents"),
                                          ["changes", "--after", "1", "--follow", "--interval", "1s", "--database", path])
        try await Task.sleep(for: .milliseconds(300))
        try Self.poll(path, "02:00", ["A", "B"])
        #expect(try await eventually { follower.stdoutSoFar.contains("\n") })
        try await Task.sleep(for: .milliseconds(1500))
        #expect(Self.summary(try Self.lines(follower.stdoutSoFar)) == ["2 appeared B"])
        follower.send(SIGTERM)
        _ = follower.wait(timeout: 10)
    }
}
