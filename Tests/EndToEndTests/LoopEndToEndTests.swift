import Foundation
import TestSupport
import Testing

/// `incident-scheduler run --loop` against the loopback server, and its metrics file.
@Suite("End to end: run --loop and metrics", .serialized)
struct LoopEndToEndTests {
    static func config(_ ws: Workspace, _ server: LoopbackServer, gitsInterval: String, itsInterval: String) throws -> String {
        try ws.write("config.json", """
            {"sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/gits/").absoluteString)", "interval": "\(gitsInterval)"},
              {"name": "its", "provider": "its", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/its/").absoluteString)", "interval": "\(itsInterval)"}
            ]}
            """)
    }

    @Test("two sources at 1 s and 3 s for 10 s; SIGHUP picks up a new interval; SIGTERM exits 0 within 5 s, no run left open")
    func loop() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)],
            "/its/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_envelope_2items.json").path)],
        ])
        let ws = try Workspace()
        let config = try Self.config(ws, server, gitsInterval: "1s", itsInterval: "3s")
        let metrics = ws.directory.appendingPathComponent("incidents.prom").path
        let process = try RunningProcess(Executables.url("incident-scheduler"),
                                         ["run", "--loop", "--config", config, "--database", ws.database,
                                          "--metrics-file", metrics, "--heartbeat", "4s"],
                                         environment: ["LOOP_KEY": "loop+key/secret="])
        try await Task.sleep(nanoseconds: 10_000_000_000)
        let gitsBefore = try await server.requests(path: "/gits/getIncidentInfo").map(\.time)
        let itsBefore = try await server.requests(path: "/its/eventInfo").map(\.time)
        // Judged on the server's clock, from the gaps between polls, so a slow test machine
        // cannot skew it: a source is polled every interval plus up to 10 % jitter, never sooner
        // (never overlapping itself), and not much later.
        Self.expectSpacing(gitsBefore, interval: 1, "gits")
        Self.expectSpacing(itsBefore, interval: 3, "its")
        #expect(gitsBefore.count >= 6 && itsBefore.count >= 2, "polls in 10 s: gits \(gitsBefore.count), its \(itsBefore.count)")

        // SIGHUP with ITS now every 1 s.
        _ = try Self.config(ws, server, gitsInterval: "1s", itsInterval: "1s")
        process.send(SIGHUP)
        try await Task.sleep(nanoseconds: 5_000_000_000)
        let itsAfter = Array(try await server.requests(path: "/its/eventInfo").map(\.time).dropFirst(itsBefore.count))
        #expect(itsAfter.count >= 3, "its polled \(itsAfter.count) times in 5 s after the reload to 1 s")
        Self.expectSpacing(Array(itsAfter.dropFirst()), interval: 1, "its after the reload")

        let stopping = Date()
        process.send(SIGTERM)
        let result = process.wait(timeout: 30)
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("event=config.reloaded sources=2"))
        #expect(result.stderr.contains("event=scheduler.heartbeat"))
        #expect(result.stderr.contains("event=scheduler.stopped"))
        let runs = try JSONSerialization.jsonObject(with: Data(try run("incidents", ["runs", "--database", ws.database, "--limit", "1000",
                                                                                       "--format", "json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(runs.count >= gitsBefore.count + itsBefore.count)
        #expect(runs.allSatisfy { ["succeeded", "cancelled"].contains($0["status"] as? String) }, "no run left open or failed")
        #expect(try ws.listJSON().count == 5)
    }

    /// Every gap between consecutive polls is at least the interval (less 50 ms of timer slack)
    /// and their median at most the interval plus 10 % jitter plus 0.4 s of poll time.
    static func expectSpacing(_ times: [Double], interval: Double, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        guard !gaps.isEmpty else { return }
        #expect(gaps.first! >= interval - 0.05, "\(name): a poll came \(gaps.first!) s after the previous one", sourceLocation: sourceLocation)
        let median = gaps[gaps.count / 2]
        #expect(median <= interval * 1.1 + 0.4, "\(name): median gap \(median) s for a \(interval) s interval", sourceLocation: sourceLocation)
    }

    @Test("the metrics file parses as Prometheus text format and its values match ingest_runs")
    func metrics() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path)],
            "/its/eventInfo": [ResponseSpec(status: 503, body: "down")],
        ])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/gits/").absoluteString)"},
              {"name": "its", "provider": "its", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/its/").absoluteString)", "retry": {"maxRetries": 0}}
            ]}
            """)
        let metrics = ws.directory.appendingPathComponent("incidents.prom").path
        for _ in 0..<2 {
            let result = try run("incident-scheduler", ["run", "--once", "--config", config, "--database", ws.database, "--metrics-file", metrics],
                                 environment: ["LOOP_KEY": "k"])
            #expect(result.status == 1)
        }
        // Parsed by the Prometheus project's own parser (prometheus_client), as JSON samples.
        let parsed = try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = []
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    out.append({"name": s.name, "labels": s.labels, "value": s.value, "type": family.type})
            print(json.dumps(out))
            """, metrics]).wait()
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: Any]])
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            samples.first { $0["name"] as? String == name && ($0["labels"] as? [String: String]) == labels }?["value"] as? Double
        }
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(try run("incidents", ["runs", "--database", ws.database,
                                                                                                   "--format", "json"]).stdout.utf8)) as? [[String: Any]])
        let lastGits = try #require(runs.first { $0["source"] as? String == "gits" })
        let finished = try #require(ISO8601DateFormatter().date(from: lastGits["finished_at"] as? String ?? ""))
        #expect(value("trafficincidents_last_success_timestamp_seconds", ["source": "gits"]) == finished.timeIntervalSince1970.rounded())
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "fetched"]) == 3)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "unchanged"]) == 3)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "inserted"]) == 0)
        #expect(value("trafficincidents_last_run_success", ["source": "gits"]) == 1)
        #expect(value("trafficincidents_last_run_success", ["source": "its"]) == 0)
        #expect(value("trafficincidents_consecutive_failures", ["source": "its"]) == 2)
        #expect(value("trafficincidents_consecutive_failures", ["source": "gits"]) == 0)
        #expect(value("trafficincidents_last_success_timestamp_seconds", ["source": "its"]) == nil)
        #expect(samples.allSatisfy { $0["type"] as? String == "gauge" })
    }
}
