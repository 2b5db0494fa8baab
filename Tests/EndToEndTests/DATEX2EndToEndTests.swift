import Foundation
import TestSupport
import Testing

/// DATEX II sources through the built executables: a real HTTP server on loopback (gzip and
/// chunked, as Digitraffic answers), a key in the parameter the configuration names, a push
/// message replayed as a file.
@Suite("End to end: DATEX II", .serialized)
struct DATEX2EndToEndTests {
    static let fintraffic = TestPaths.sharedFeed("datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml").path
    static let ndwSnapshot = TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml").path
    static let ndwPush = TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml").path
    static let key = "SECRET+datex/Key=="

    @Test("run --once polls two DATEX II sources over loopback HTTP; the key goes where keyParameter says and nowhere else")
    func runOnce() async throws {
        let server = try LoopbackServer(routes: [
            "/api/traffic-message/v1/messages.datex2": [ResponseSpec(status: 200, headers: ["Content-Type": "application/xml;charset=UTF-8"],
                                                                     bodyFile: Self.fintraffic, chunkSize: 300, chunked: true, gzip: true)],
            "/ndw/brugopeningen.xml": [ResponseSpec(status: 200, headers: ["Content-Type": "text/xml"], bodyFile: Self.ndwSnapshot)],
        ])
        let ws = try Workspace()
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "fintraffic", "provider": "datex2", "language": "fi",
               "baseURL": "\(server.url("/api/traffic-message/v1/messages.datex2").absoluteString)"},
              {"name": "ndw", "provider": "datex2", "keyEnv": "NDW_KEY", "keyParameter": "apikey", "timeZone": "Europe/Amsterdam",
               "baseURL": "\(server.url("/ndw/brugopeningen.xml").absoluteString)?format=xml"}]}
            """)
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config], environment: ["NDW_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source=fintraffic provider=datex2 status=succeeded fetched=3 inserted=3"))
        #expect(result.stderr.contains("source=ndw provider=datex2 status=succeeded fetched=20 inserted=20"))
        #expect(try await server.requests(path: "/api/traffic-message/v1/messages.datex2").first?.query == "")
        #expect(try await server.requests(path: "/ndw/brugopeningen.xml").first?.query == "format=xml&apikey=SECRET%2Bdatex%2FKey%3D%3D")

        let rows = try await ws.listJSON(["--order", "source"])
        #expect(rows.count == 23)
        let accident = try #require(rows.first { $0.text("external_id") == "GUID50013339/GUID5001357701" })
        #expect(accident.text("category") == "accident")
        #expect(accident.text("provider_category") == "Accident")
        #expect(accident.text("started_at") == "2017-08-10T12:49:10Z")
        #expect(accident.text("location") == "ALERT-C 6/17 v1.11.33: 992 → 993")
        #expect(accident.text("description")?.hasPrefix("Tie 3, eli Tampereen Läntinen Kehätie, Pirkkala.") == true)
        #expect(accident["latitude"] is NSNull)
        let bridge = try #require(rows.first { $0.text("external_id") == "BMS01_NLZAA002360561800012_117118075/BMS01_NLZAA002360561800012_117118075_01" })
        #expect(bridge.text("category") == "closure")
        #expect(bridge.number("latitude") == 52.42779)
        #expect(bridge.number("longitude") == 4.834402)
        #expect(bridge.text("expected_end_at") == "2026-04-03T06:15:00Z")

        let check = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["NDW_KEY": Self.key, "COLUMNS": "250"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("fintraffic  none "), "\(check.stdout)")
        #expect(check.stdout.contains("timeZone=Europe/Amsterdam keyParameter=apikey"), "\(check.stdout)")
        // The same configuration without the key the ndw source sends: check-config says it is missing.
        let missing = try await run("incident-scheduler", ["check-config", "--config", config], environment: ["COLUMNS": "250"])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("sources[1] (ndw): the environment variable NDW_KEY (keyEnv) is not set"), "\(missing.stderr)")
        expectNoKey(Self.key, in: [result.stdout, result.stderr, check.stdout, check.stderr], database: ws.databaseBytes())
    }

    @Test("a push message replayed with --complete is stored but clears nothing; the run says why")
    func pushReplay() async throws {
        let ws = try Workspace()
        let snapshot = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", Self.ndwSnapshot, "--complete",
                                                            "--database", ws.database])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(snapshot.stderr.contains("status=succeeded fetched=20 inserted=20"))
        let push = try await run("incident-scheduler", ["ingest", "--source", "datex2", "--file", Self.ndwPush, "--complete",
                                                        "--database", ws.database])
        #expect(push.status == 0, "\(push.stderr)")
        #expect(push.stderr.contains("status=incomplete fetched=1 inserted=1 updated=0 unchanged=0 reopened=0 cleared=0"))
        #expect(push.stderr.contains("codedExchangeProtocol statefulPush"))
        let rows = try await ws.listJSON()
        #expect(rows.count == 21)
        #expect(rows.allSatisfy { $0["cleared_at"] is NSNull })
    }
}
