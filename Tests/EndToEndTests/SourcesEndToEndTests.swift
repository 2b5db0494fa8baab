import Foundation
import TestSupport
import Testing

/// Several sources in one `run --once`: GITS and two ITS bounding boxes, over loopback HTTP.
@Suite("End to end: several sources", .serialized)
struct SourcesEndToEndTests {
    static let gitsKey = "GITS+secret/Key=="
    static let itsKey = "ITS%2Bsecret%2Fkey%3D"  // given in the portal's encoding form

    static func config(_ ws: Workspace, _ server: LoopbackServer) async throws -> String {
        try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [
              {"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY", "baseURL": "\(server.url("/api/rest/").absoluteString)"},
              {"name": "its-seoul", "provider": "its", "keyEnv": "ITS_API_KEY", "baseURL": "\(server.url("/seoul/").absoluteString)",
               "bbox": [126.76, 37.41, 127.18, 37.70], "eventType": "all", "format": "json"},
              {"name": "its-chungcheong", "provider": "its", "keyEnv": "ITS_API_KEY", "baseURL": "\(server.url("/chungcheong/").absoluteString)",
               "bbox": [126.9, 36.0, 127.8, 36.8], "format": "xml", "retry": {"maxRetries": 0}}
            ]}
            """)
    }

    static let environment = ["GITS_SERVICE_KEY": gitsKey, "ITS_API_KEY": itsKey]

    @Test("one run stores every source under its own name, with UTC times, and asks each bounding box")
    func allSucceed() async throws {
        let server = try await LoopbackServer.start(routes: [
            "/api/rest/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml").path)],
            "/seoul/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_envelope_2items.json").path)],
            "/chungcheong/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_legacy_2items.xml").path)],
        ])
        let ws = try Workspace()
        let result = try await run("incident-scheduler", ["run", "--once", "--config", try await Self.config(ws, server)],
                             environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let seoul = try await ws.listJSON(["--source", "its-seoul", "--order", "source"])
        #expect(seoul.map { $0.text("external_id") } == ["1100123400:20240101001500:추돌사고", "128.152,37.662:20231231233000:결빙"])
        #expect(seoul.first?.text("started_at") == "2023-12-31T15:15:00Z")
        #expect(seoul.first?.text("category") == "accident")
        #expect(try await ws.listJSON(["--source", "its-chungcheong"]).count == 2)
        #expect(try await ws.listJSON(["--source", "gits"]).count == 4)
        let seoulQuery = try #require(try await server.requests(path: "/seoul/eventInfo").first?.query)
        #expect(seoulQuery == "apiKey=ITS%2Bsecret%2Fkey%3D&type=all&eventType=all&minX=126.76&maxX=127.18&minY=37.41&maxY=37.7&getType=json")
        let chungcheongQuery = try #require(try await server.requests(path: "/chungcheong/eventInfo").first?.query)
        #expect(chungcheongQuery.contains("minX=126.9&maxX=127.8&minY=36&maxY=36.8&getType=xml"))

        let sources = try await run("incident-scheduler", ["sources", "--config", try await Self.config(ws, server)], environment: Self.environment)
        #expect(sources.status == 0)
        #expect(sources.stdout.contains("its-seoul"))
        #expect(sources.stdout.contains("succeeded"))
        expectNoKey("GITS+secret/Key==", in: [result.stdout, result.stderr, sources.stdout], database: ws.databaseBytes())
        expectNoKey("ITS+secret/key=", in: [result.stdout, result.stderr, sources.stdout], database: ws.databaseBytes())
    }

    @Test("a gateway error for one source leaves the others stored, names the source and code, and exits 1",
          arguments: ["22", "30", "31", "32", "99", "html"])
    func oneFails(code: String) async throws {
        let failing: ResponseSpec = code == "html"
            ? ResponseSpec(status: 200, headers: ["Content-Type": "text/html"], bodyFile: TestPaths.fixture("gits/html_error_page.html").path)
            : ResponseSpec(status: 200, headers: ["Content-Type": "text/xml"], body: """
                <OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>GATEWAY_\(code)</returnAuthMsg><returnReasonCode>\(code)</returnReasonCode></cmmMsgHeader></OpenAPI_ServiceResponse>
                """)
        let server = try await LoopbackServer.start(routes: [
            "/api/rest/getIncidentInfo": [ResponseSpec(bodyFile: TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml").path)],
            "/seoul/eventInfo": [failing],
            "/chungcheong/eventInfo": [ResponseSpec(bodyFile: TestPaths.fixture("its/eventInfo_legacy_2items.xml").path)],
        ])
        let ws = try Workspace()
        let result = try await run("incident-scheduler", ["run", "--once", "--config", try await Self.config(ws, server)],
                             environment: Self.environment)
        #expect(result.status == 1)
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("source=its-seoul") })
        #expect(line.contains("level=error event=ingest.failed"))
        #expect(line.contains(code == "html" ? "an HTML page" : "gateway answered returnReasonCode \(code)"), "\(line)")
        #expect(try await ws.listJSON(["--source", "gits"]).count == 4)
        #expect(try await ws.listJSON(["--source", "its-chungcheong"]).count == 2)
        #expect(try await ws.listJSON(["--source", "its-seoul"]).isEmpty)
        let sources = try await run("incident-scheduler", ["sources", "--config", try await Self.config(ws, server)], environment: Self.environment)
        let seoulRow = try #require(sources.stdout.split(separator: "\n").first { $0.hasPrefix("its-seoul ") })
        #expect(seoulRow.contains(" failed "), "the failure is recorded in ingest_runs: \(seoulRow)")
        expectNoKey("GITS+secret/Key==", in: [result.stdout, result.stderr, sources.stdout], database: ws.databaseBytes())
        expectNoKey("ITS+secret/key=", in: [result.stdout, result.stderr], database: ws.databaseBytes())
    }
}
