import Foundation
import TestSupport
import Testing

/// `incident-scheduler run --loop` against the loopback server, and its metrics file.
@Suite("End to end: run --loop and metrics", .serialized)
struct LoopEndToEndTests {
    static func config(_ ws: Workspace, _ server: LoopbackServer, gitsInterval: String, itsInterval: String) async throws -> String {
        try ws.write("config.json", """
            {"sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/gits/").absoluteString)", "interval": "\(gitsInterval)"},
              {"name": "its", "provider": "its", "keyEnv": "LOOP_KEY", "baseURL": "\(server.url("/its/").absoluteString)", "interval": "\(itsInterval)"}
            ]}
            """)
    }

    /// The real process, signals and server: spacing and jitter themselves are checked exactly
    /// on a virtual clock (SchedulerServiceTests); here only what needs the real thing.
    @Test("two sources on their own intervals; SIGHUP picks up a new interval; SIGTERM cuts an hour-long wait short and exits 0, no run left open")
    func loop() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/gits/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.fixture("gits/incidents_3.xml").path, delay: 0.3)],
            "/its/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_envelope_2items.json").path, delay: 0.3)],
        ])
        let ws = try Workspace()
        let config = try await Self.config(ws, server, gitsInterval: "1s", itsInterval: "1h")
        let metrics = ws.directory.appendingPathComponent("incidents.prom").path
        let process = try RunningProcess(Executables.url("incident-scheduler"),
                                         ["run", "--loop", "--config", config, "--database", ws.database,
                                          "--metrics-file", metrics, "--heartbeat", "1s"],
                                         environment: ["LOOP_KEY": "loop+key/secret="])
        let gitsPolled = try await eventually { try await server.requests(path: "/gits/getIncidentInfo").count >= 3 }
        #expect(gitsPolled, "gits (every 1 s) was not polled 3 times in 20 s")
        #expect(try await server.requests(path: "/its/eventInfo").count == 1, "its (every hour) is polled once at the start")

        // SIGHUP with ITS now every 1 s: without the reload it would wait an hour.
        _ = try await Self.config(ws, server, gitsInterval: "1s", itsInterval: "1s")
        process.send(SIGHUP)
        let itsPolled = try await eventually { try await server.requests(path: "/its/eventInfo").count >= 3 }
        #expect(itsPolled, "its (every 1 s after the reload) was not polled 3 times in 20 s")
        // A source never overlaps itself: on the server's clock, each request comes after the
        // server began to answer the one before (each answer waits 0.3 s first, so a poll begun
        // beside another would show). Gaps between requests say nothing: a turn delayed on a
        // busy machine is followed at once by the next, due an interval after the delayed one began.
        for path in ["/gits/getIncidentInfo", "/its/eventInfo"] {
            let requests = try await server.requests(path: path)
            for (earlier, later) in zip(requests, requests.dropFirst()) {
                let responded = try #require(earlier.responded, "\(path): a request was never answered: \(requests.map(\.time))")
                #expect(later.time >= responded, "\(path): asked at \(later.time), before the answer to the one before began at \(responded)")
            }
        }

        // SIGTERM must cut the wait for the next turn short, not wait it out: with both
        // sources reloaded to an hour, the loop is asleep for an hour when the signal comes, so
        // any exit within 20 s (process teardown on a machine at load 14 took 5.4 s) shows the
        // interruption; a loop that finished its sleep would take an hour.
        _ = try await Self.config(ws, server, gitsInterval: "1h", itsInterval: "1h")
        process.send(SIGHUP)
        let reloadedTwice = try await eventually {
            process.stderrSoFar.components(separatedBy: "event=config.reloaded").count - 1 >= 2
        }
        #expect(reloadedTwice, "the second reload was not logged")
        let stopping = Date()
        process.send(SIGTERM)
        let result = await process.finished(timeout: 60)
        #expect(Date().timeIntervalSince(stopping) < 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("event=config.reloaded sources=2"))
        #expect(result.stderr.contains("event=scheduler.heartbeat"))
        #expect(result.stderr.contains("event=scheduler.stopped"))
        let runs = try JSONSerialization.jsonObject(with: Data(try await run("incidents", ["runs", "--database", ws.database, "--limit", "1000",
                                                                                       "--format", "json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(runs.count >= 6)
        #expect(runs.allSatisfy { ["succeeded", "cancelled"].contains($0["status"] as? String) }, "no run left open or failed")
        #expect(try await ws.listJSON().count == 5)
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
            let result = try await run("incident-scheduler", ["run", "--once", "--config", config, "--database", ws.database, "--metrics-file", metrics],
                                 environment: ["LOOP_KEY": "k"])
            #expect(result.status == 1)
        }
        // Parsed by the Prometheus project's own parser (prometheus_client), as JSON samples.
        let parsed = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = []
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    out.append({"name": s.name, "labels": s.labels, "value": s.value, "type": family.type})
            print(json.dumps(out))
            """, metrics])).finished()
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: Any]])
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            samples.first { $0["name"] as? String == name && ($0["labels"] as? [String: String]) == labels }?["value"] as? Double
        }
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(try await run("incidents", ["runs", "--database", ws.database,
                                                                                                   "--format", "json"]).stdout.utf8)) as? [[String: Any]])
        let lastGits = try #require(runs.first { $0["source"] as? String == "gits" })
        let finished = try #require(ISO8601DateFormatter().date(from: lastGits["finished_at"] as? String ?? ""))
        #expect(value("trafficincidents_last_success_timestamp_seconds", ["source": "gits"]) == finished.timeIntervalSince1970.rounded())
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "fetched"]) == 3)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "unchanged"]) == 3)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "inserted"]) == 0)
        #expect(value("trafficincidents_last_run_success", ["source": "gits"]) == 1)
        #expect(value("trafficincidents_last_run_success", ["source": "its"]) == 0)
        #expect(value("trafficincidents_last_run_complete", ["source": "gits"]) == 1)
        #expect(value("trafficincidents_last_run_complete", ["source": "its"]) == 0)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "rejected"]) == 0)
        #expect(value("trafficincidents_last_run_records", ["source": "gits", "kind": "duplicates"]) == 0)
        #expect(value("trafficincidents_consecutive_failures", ["source": "its"]) == 2)
        #expect(value("trafficincidents_consecutive_failures", ["source": "gits"]) == 0)
        #expect(value("trafficincidents_last_success_timestamp_seconds", ["source": "its"]) == 0, "never: 0")
        #expect(samples.allSatisfy { $0["type"] as? String == "gauge" })
    }
}
