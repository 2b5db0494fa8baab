import Foundation
import TestSupport
import Testing

/// The time order of a source's documents and lists that move while they are paged, over a
/// real HTTP server on loopback and through `ingest --file`, with the built executables and a
/// temporary SQLite file (docs/providers.md, "When a poll clears").
@Suite("End to end: stale copies, lists that move between pages, twins", .serialized)
struct TimeOrderEndToEndTests {
    // MARK: WZDx: a replica serves an older copy

    static func wzdx(published: String, _ events: [(id: String, text: String)]) -> ResponseSpec {
        let features = events.map { event in
            #"{"id": "\#(event.id)", "type": "Feature", "properties": {"core_details": {"event_type": "work-zone", "data_source_id": "1", "road_names": ["I-80"], "direction": "westbound", "description": "\#(event.text)"}, "start_date": "2024-05-01T08:00:00Z", "end_date": "2024-06-01T00:00:00Z", "is_start_date_verified": false, "is_end_date_verified": false, "vehicle_impact": "some-lanes-closed", "lanes": []}, "geometry": {"type": "LineString", "coordinates": [[-93.6, 41.6], [-93.5, 41.6]]}}"#
        }
        return ResponseSpec(status: 200, headers: ["Content-Type": "application/geo+json"], body: """
            {"feed_info": {"publisher": "TestDOT", "version": "4.2", "update_date": "\(published)"}, "type": "FeatureCollection", "features": [\(features.joined(separator: ","))]}
            """)
    }

    static func rows(_ ws: Workspace) async throws -> [String: [String: Any]] {
        Dictionary(uniqueKeysWithValues: try await ws.listJSON(["--limit", "100"]).map { ($0.text("external_id") ?? "", $0) })
    }

    static func runsJSON(_ ws: Workspace) async throws -> [[String: Any]] {
        let result = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    }

    @Test("a live WZDx poll of an older copy is stale: no text put back, nothing reopened or cleared; a warning, the run and a metric say so")
    func staleWZDxPoll() async throws {
        let server = try await LoopbackServer.start()
        try await server.script("/wzdx", [
            Self.wzdx(published: "2024-05-01T10:00:00Z", [("A", "one lane closed"), ("B", "shoulder closed"), ("C", "night work")]),
            Self.wzdx(published: "2024-05-01T10:05:00Z", [("A", "two lanes closed"), ("C", "night work")]),
            Self.wzdx(published: "2024-05-01T09:55:00Z", [("A", "one lane closed"), ("B", "shoulder closed"), ("C", "night work")]),
        ])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "wzdx", "provider": "wzdx", "baseURL": "\(server.url("/wzdx").absoluteString)"}]}
            """)
        let metrics = ws.directory.appendingPathComponent("metrics.prom").path
        let once = ["run", "--once", "--config", config, "--metrics-file", metrics]
        #expect(try await run("incident-scheduler", once).status == 0)
        try await Task.sleep(for: .seconds(1.05))  // B is cleared only by a later second
        let second = try await run("incident-scheduler", once)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("status=succeeded fetched=2 inserted=0 updated=1 unchanged=1 reopened=0 cleared=1 rejected=0 duplicates=0 published_at=2024-05-01T10:05:00Z"), "\(second.stderr)")

        let stale = try await run("incident-scheduler", once)
        #expect(stale.status == 3, "\(stale.stderr)")
        #expect(stale.stderr.contains("level=warning event=ingest.stale source=wzdx provider=wzdx status=stale fetched=3 inserted=0 updated=0 unchanged=1 reopened=0 cleared=0 rejected=0 duplicates=0 published_at=2024-05-01T09:55:00Z observed_at=2024-05-01T09:55:00Z"), "\(stale.stderr)")
        #expect(stale.stderr.contains("before 2024-05-01T10:05:00Z, the newest already applied for this source"), "\(stale.stderr)")
        let rows = try await Self.rows(ws)
        #expect(rows.count == 3)
        #expect(rows["A"]?.text("description") == "two lanes closed")
        #expect(rows["A"]?["cleared_at"] is NSNull)
        #expect(rows["B"]?.text("cleared_at") != nil, "B stays cleared")
        #expect(rows["C"]?["cleared_at"] is NSNull)
        let runs = try await Self.runsJSON(ws)
        #expect(runs.map { $0["status"] as? String } == ["stale", "succeeded", "succeeded"])
        #expect(runs.map { $0["published_at"] as? String } == ["2024-05-01T09:55:00Z", "2024-05-01T10:05:00Z", "2024-05-01T10:00:00Z"])
        #expect(runs.first?["observed_at"] as? String == "2024-05-01T09:55:00Z")
        let prom = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prom.contains("trafficincidents_stale_runs{source=\"wzdx\"} 1\n"), "\(prom)")
        #expect(prom.contains("trafficincidents_last_run_status{source=\"wzdx\",status=\"stale\"} 1\n"), "\(prom)")
        server.stop()
    }

    @Test("ingest --file --complete of an older WZDx copy after a newer one: stale, nothing cleared, exit 0")
    func staleWZDxFile() async throws {
        let ws = try Workspace()
        let newer = try ws.write("newer.json", Self.wzdx(published: "2024-05-01T10:05:00Z", [("A", "two lanes closed")]).body ?? "")
        let older = try ws.write("older.json", Self.wzdx(published: "2024-05-01T10:00:00Z", [("A", "one lane closed"), ("B", "x")]).body ?? "")
        func ingest(_ file: String, _ asOf: String) async throws -> ProcessResult {
            try await run("incident-scheduler", ["ingest", "--source", "wzdx", "--file", file, "--complete", "--as-of", asOf, "--database", ws.database])
        }
        #expect(try await ingest(newer, "2024-05-01T10:06:00Z").status == 0)
        let result = try await ingest(older, "2024-05-01T10:20:00Z")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("status=stale fetched=2 inserted=1 updated=0 unchanged=0 reopened=0 cleared=0 rejected=0 duplicates=0 published_at=2024-05-01T10:00:00Z observed_at=2024-05-01T10:00:00Z"), "\(result.stderr)")
        let rows = try await Self.rows(ws)
        #expect(rows["A"]?.text("description") == "two lanes closed")
        #expect(rows["B"]?.text("first_seen_at") == "2024-05-01T10:00:00Z")
        #expect(rows.values.allSatisfy { $0["cleared_at"] is NSNull })
    }

    @Test("DATEX II: NDW's snapshot of 2 April replayed after its push of 5 April is stale, though --complete: the pushed record is not cleared")
    func staleDATEX2File() async throws {
        let ws = try Workspace()
        func ingest(_ path: String, _ asOf: String) async throws -> ProcessResult {
            try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", TestPaths.sharedFeed(path).path, "--complete",
                                                 "--as-of", asOf, "--database", ws.database])
        }
        let push = try await ingest("datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml", "2026-04-05T14:05:00Z")
        #expect(push.status == 0, "\(push.stderr)")
        let snapshot = try await ingest("datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml", "2026-04-05T14:06:00Z")
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(snapshot.stderr.contains("status=stale fetched=20 inserted=20 updated=0 unchanged=0 reopened=0 cleared=0 rejected=0 duplicates=0 published_at=2026-04-02T12:03:00Z observed_at=2026-04-02T12:03:00Z"), "\(snapshot.stderr)")
        let rows = try await ws.listJSON(["--limit", "100"])
        #expect(rows.count == 21)
        #expect(rows.allSatisfy { $0["cleared_at"] is NSNull })
    }

    // MARK: Open511: a list that moves while it is paged

    static let path = "/events"

    static func page(_ ids: [Int], next: Int?) -> ResponseSpec {
        let events = ids.map { id in
            #"{"id": "test.org/\#(id)", "status": "ACTIVE", "headline": "Event \#(id)", "event_type": "INCIDENT", "event_subtypes": ["ACCIDENT"], "severity": "MINOR", "created": "2024-03-01T10:00Z", "updated": "2024-03-01T10:00Z", "geography": {"type": "Point", "coordinates": [-122.4, 37.8]}, "schedule": {"intervals": ["2024-03-01T10:00Z/"]}}"#
        }
        let pagination = next.map { #"{"offset": 0, "next_url": "/events?offset=\#($0)"}"# } ?? #"{"offset": 0}"#
        return ResponseSpec(status: 200, headers: ["Content-Type": "application/json"],
                            body: #"{"events": [\#(events.joined(separator: ","))], "pagination": \#(pagination), "meta": {"version": "v1"}}"#)
    }

    static func open511Config(_ ws: Workspace, _ server: LoopbackServer) throws -> String {
        try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "o511", "provider": "open511", "baseURL": "\(server.url(Self.path).absoluteString)"}]}
            """)
    }

    static func active(_ ws: Workspace) async throws -> [String] {
        try await ws.listJSON(["--active", "--limit", "100"]).compactMap { $0.text("external_id") }.sorted()
    }

    @Test("the list shrinks between page requests (event 4 moves from page 2 to page 1, unseen): nothing is cleared and the run says why; a stable list clears after a second poll agrees")
    func shrinkingList() async throws {
        let server = try await LoopbackServer.start()
        // Each request takes the next answer: poll 1 reads a stable list of 5 in two pages; in
        // poll 2, event 2 ends after page 1 was read, so page 2 (offset 3) starts at event 5.
        try await server.script(Self.path, [
            Self.page([1, 2, 3], next: 3), Self.page([4, 5], next: nil),
            Self.page([1, 2, 3], next: 3), Self.page([5], next: nil),
            Self.page([1, 3, 4], next: 3), Self.page([5], next: nil),
            Self.page([1, 3, 4], next: 3), Self.page([5], next: nil),
        ])
        let ws = try Workspace()
        let config = try Self.open511Config(ws, server)
        let once = ["run", "--once", "--config", config]
        // Each poll in a second of its own: polls are timed to the second, and a poll clears
        // only what the previous complete poll, fetched earlier, did not list.
        func poll() async throws -> ProcessResult {
            try await Task.sleep(for: .seconds(1.05))
            return try await run("incident-scheduler", once)
        }
        #expect(try await run("incident-scheduler", once).status == 0)
        let moved = try await poll()
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stderr.contains("status=succeeded fetched=4 inserted=0 updated=0 unchanged=4 reopened=0 cleared=0"), "\(moved.stderr)")
        #expect(moved.stderr.contains("1 incident(s) it does not list but the previous complete poll"), "\(moved.stderr)")
        #expect(try await Self.active(ws) == (1...5).map { "test.org/\($0)" })
        var runs = try await Self.runsJSON(ws)
        #expect((runs.first?["warnings"] as? [String])?.first?.contains("a list paged by offset can move between page requests") == true)

        // The list is stable again without event 2: kept once more (the previous poll listed
        // it), event 4 is listed again and was never cleared nor reopened.
        let third = try await poll()
        #expect(third.stderr.contains("fetched=4 inserted=0 updated=0 unchanged=4 reopened=0 cleared=0"), "\(third.stderr)")
        #expect(try await Self.active(ws) == (1...5).map { "test.org/\($0)" })
        // A second complete poll agrees: event 2 is cleared, at the first poll that missed it.
        let fourth = try await poll()
        #expect(fourth.stderr.contains("fetched=4 inserted=0 updated=0 unchanged=4 reopened=0 cleared=1"), "\(fourth.stderr)")
        #expect(try await Self.active(ws) == [1, 3, 4, 5].map { "test.org/\($0)" })
        runs = try await Self.runsJSON(ws)
        #expect(runs.map { $0["reopened"] as? Int } == [0, 0, 0, 0])
        let cleared = try #require(try await ws.listJSON(["--limit", "100"]).first { $0.text("external_id") == "test.org/2" })
        #expect(cleared.text("cleared_at") == runs[1]["observed_at"] as? String)
        #expect(try await server.requests(path: Self.path).count == 8)
        server.stop()
    }

    @Test("the list grows between page requests (event 3 on pages 1 and 2): counted once, the poll is incomplete and clears nothing")
    func eventOnTwoPages() async throws {
        let server = try await LoopbackServer.start()
        try await server.script(Self.path, [
            Self.page([1, 2, 3], next: 3), Self.page([4, 5], next: nil),
            Self.page([1, 2, 3], next: 3), Self.page([3, 4], next: nil),
        ])
        let ws = try Workspace()
        let config = try Self.open511Config(ws, server)
        let once = ["run", "--once", "--config", config]
        #expect(try await run("incident-scheduler", once).status == 0)
        let grown = try await run("incident-scheduler", once)
        #expect(grown.status == 3, "\(grown.stderr)")
        #expect(grown.stderr.contains("level=warning event=ingest.incomplete source=o511 provider=open511 status=incomplete fetched=5 inserted=0 updated=0 unchanged=4 reopened=0 cleared=0 rejected=0 duplicates=1"), "\(grown.stderr)")
        #expect(grown.stderr.contains("1 id(s) were listed on two pages (test.org/3 on pages 1 and 2): the server's list moved while it was paged"), "\(grown.stderr)")
        #expect(try await Self.active(ws) == (1...5).map { "test.org/\($0)" })
        let runs = try await Self.runsJSON(ws)
        #expect(runs.first?["status"] as? String == "incomplete")
        #expect(runs.first?["duplicates"] as? Int == 1)
        server.stop()
    }

    // MARK: Twins

    @Test("twins over HTTP (WZDx) and in a replayed GITS file: the first kept, the second set aside with its reason, shown by show and counted by runs")
    func twins() async throws {
        let server = try await LoopbackServer.start()
        try await server.script("/wzdx", [Self.wzdx(published: "2024-05-01T10:00:00Z", [("A", "one lane closed"), ("B", "x"), ("A", "two lanes closed")])])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "wzdx", "provider": "wzdx", "baseURL": "\(server.url("/wzdx").absoluteString)"}]}
            """)
        let live = try await run("incident-scheduler", ["run", "--once", "--config", config])
        #expect(live.status == 0, "\(live.stderr)")
        #expect(live.stderr.contains("status=succeeded fetched=3 inserted=2 updated=0 unchanged=0 reopened=0 cleared=0 rejected=1 duplicates=0"), "\(live.stderr)")

        let item = { (description: String) in
            "<itemList><routeId></routeId><linkId>1000012345</linkId><spotId></spotId><regSeq>202401010001</regSeq><confirmDate>2024-01-01 00:05:00</confirmDate><startDate>2024-01-01 00:02:00</startDate><estEndDate></estEndDate><endDate></endDate><restrictType>1차로</restrictType><inciDesc>\(description)</inciDesc><inciPlace1>경부고속도로</inciPlace1><inciPlace2>(서울방향) 수원IC → 신갈JC</inciPlace2><coord_x>127.1</coord_x><coord_y>37.27</coord_y></itemList>"
        }
        let file = try ws.write("twins.xml", """
            <?xml version="1.0" encoding="UTF-8"?><ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>OK</headerMsg><itemCount>2</itemCount></msgHeader>\
            <msgBody>\(item("[사고] 1차로 통제"))\(item("[사고] 2차로 통제"))</msgBody></ServiceResult>
            """)
        let replay = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", file, "--complete", "--as-of", "2024-01-01T00:10:00Z",
                                                          "--database", ws.database])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("source=gits provider=gits status=succeeded fetched=2 inserted=1 updated=0 unchanged=0 reopened=0 cleared=0 rejected=1 duplicates=0"), "\(replay.stderr)")
        let gits = try #require(try await ws.listJSON().first { $0.text("source") == "gits" })
        #expect(gits.text("description") == "[사고] 1차로 통제")
        let id = try #require(gits["id"] as? Int)
        let shown = try await run("incidents", ["show", String(id), "--database", ws.database])
        #expect(shown.stdout.contains("record 2 of the response: twins: the id was listed earlier in this response with different content; the first was kept"), "\(shown.stdout)")
        #expect(shown.stdout.contains("description=[사고] 2차로 통제"), "\(shown.stdout)")
        let runs = try await Self.runsJSON(ws)
        #expect(runs.map { $0["rejected"] as? Int } == [1, 1])
        server.stop()
    }
}
