import Foundation
import TestSupport
import Testing

/// The scheduler against a loopback server that injects faults: every failure is typed,
/// recorded, stores nothing, and never shows the key.
@Suite("End to end: network faults", .serialized)
struct FaultsEndToEndTests {
    static let rawKey = "FAULT+secret/Key=="
    static let encodedKey = "FAULT%2Bsecret%2FKey%3D%3D"
    static let feed = TestPaths.sharedFeed("gg_gits/getIncidentInfo_20230321.xml").path

    /// A workspace whose database already holds one successful GITS poll, and a config that
    /// points GITS at `server`.
    struct Setup {
        let ws: Workspace
        let config: String
        let server: LoopbackServer
        let before: [[String: Any]]

        init(key: String, retry: String = #"{"maxRetries": 2, "baseDelay": 0.1, "maxDelay": 0.2}"#, timeout: String = "30s") async throws {
            server = try await LoopbackServer.start(routes: [:])
            ws = try Workspace()
            config = try ws.write("config.json", """
                {"database": "\(ws.database)", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY",
                  "baseURL": "\(server.url("/api/rest/").absoluteString)", "timeout": "\(timeout)", "retry": \(retry)}]}
                """)
            let seed = try await run("incident-scheduler", ["ingest", "--source", "gits", "--file", TestPaths.fixture("gits/incidents_3.xml").path,
                                                       "--database", ws.database])
            #expect(seed.status == 0)
            before = try await ws.listJSON()
            #expect(before.count == 3)
        }

        func runOnce(_ key: String, extra: [String] = []) async throws -> ProcessResult {
            try await run("incident-scheduler", ["run", "--once", "--config", config, "--verbose"] + extra,
                    environment: ["GITS_SERVICE_KEY": key])
        }

        /// The database still holds exactly the seeded poll.
        func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let after = try await ws.listJSON()
            #expect(after.count == before.count, sourceLocation: sourceLocation)
            for (a, b) in zip(after, before) {
                #expect(a.text("external_id") == b.text("external_id"), sourceLocation: sourceLocation)
                #expect(a.text("last_seen_at") == b.text("last_seen_at"), sourceLocation: sourceLocation)
                #expect(a["cleared_at"] is NSNull, sourceLocation: sourceLocation)
            }
        }

        func lastRunStatus() async throws -> String {
            let runs = try await run("incidents", ["runs", "--database", ws.database, "--limit", "1", "--format", "json"])
            let rows = try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]]
            return rows?.first?["status"] as? String ?? ""
        }
    }

    /// A server that echoes the key it was sent (in a description, a location, a road name, a
    /// link id, raw, percent-encoded in either hex case, or with + read as a space): the
    /// incidents are stored with the key replaced; the database never holds it. The fields
    /// scanned are every text content field (the link id was left out of a list kept by hand).
    @Test("a key the server echoes inside incidents is redacted before it is stored")
    func echoedKeyIsNotStored() async throws {
        let s = try await Setup(key: Self.rawKey)
        // The last two are character references (the XML's &amp; leaves `&#43;`, `&plus;` in the
        // text), as a server that escapes for HTML echoes the key.
        let forms = [Self.rawKey, Self.encodedKey, "FAULT%2bsecret%2fKey%3d%3d",
                     Self.rawKey.replacingOccurrences(of: "+", with: " "),
                     "FAULT&amp;#43;secret&amp;#x2F;Key&amp;#61;&amp;#61;", "FAULT&amp;plus;secret&amp;sol;Key&amp;equals;="]
        let records = forms.enumerated().map { index, form in
            "<itemList><regSeq>90\(index)</regSeq><inciDesc>echo \(form) here</inciDesc><inciPlace1>\(form)</inciPlace1><linkId>L\(form)</linkId>"
                + "<inciPlace2>road of \(form)</inciPlace2><startDate>2023-03-21 14:13:00</startDate></itemList>"
        }.joined()
        let body = "<ServiceResult><msgHeader><headerCd>0</headerCd><itemCount>\(forms.count)</itemCount></msgHeader><msgBody>\(records)</msgBody></ServiceResult>"
        try await s.server.script("/api/rest/getIncidentInfo", [ResponseSpec(body: body)])
        let result = try await s.runOnce(Self.rawKey)
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try await s.ws.listJSON()
        let echoed = listed.filter { ($0.text("external_id") ?? "").hasPrefix("90") }
        #expect(echoed.count == forms.count)
        #expect(echoed.allSatisfy { ($0.text("description") ?? "") == "echo REDACTED here" }, "\(echoed.map { $0.text("description") ?? "" })")
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr] + listed.map { "\($0)" }, database: s.ws.databaseBytes())
    }

    @Test("503, 503, 200: success after two retries, three attempts logged", arguments: [rawKey, encodedKey])
    func retriesThenSuccess(key: String) async throws {
        let s = try await Setup(key: key)
        try await s.server.script("/api/rest/getIncidentInfo", [.status(503), .status(503), ResponseSpec(bodyFile: Self.feed)])
        let result = try await s.runOnce(key)
        #expect(result.status == 0, "\(result.stderr)")
        let attempts = result.stderr.split(separator: "\n").filter { $0.contains("event=http.attempt") }
        #expect(attempts.count == 3)
        #expect(attempts[0].contains("status=503") && attempts[0].contains("attempt=1") && attempts[0].contains("decision=retry"))
        #expect(attempts[2].contains("status=200") && attempts[2].contains("attempt=3"))
        #expect(attempts.allSatisfy { $0.contains("serviceKey=REDACTED") })
        #expect(result.stderr.contains("fetched=4 inserted=4"))
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    @Test("401 and a code-30 envelope: exactly one attempt, a typed error, nothing stored", arguments: [
        ResponseSpec.status(401, body: "Unauthorized"),
        ResponseSpec.ok("<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg><returnReasonCode>30</returnReasonCode></cmmMsgHeader></OpenAPI_ServiceResponse>"),
    ], [rawKey, encodedKey])
    func notRetried(response: ResponseSpec, key: String) async throws {
        let s = try await Setup(key: key)
        try await s.server.script("/api/rest/getIncidentInfo", [response])
        let result = try await s.runOnce(key)
        #expect(result.status == 1)
        #expect(try await s.server.requests(path: "/api/rest/getIncidentInfo").count == 1)
        #expect(result.stderr.contains(response.status == 401 ? "HTTP 401" : "gateway answered returnReasonCode 30"))
        try await s.expectUnchanged()
        #expect(try await s.lastRunStatus() == "failed")
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    @Test("a server that never answers: the request times out at the limit, is retried, the run fails and stores nothing")
    func timeout() async throws {
        let s = try await Setup(key: Self.rawKey, retry: #"{"maxRetries": 1, "baseDelay": 0.1}"#, timeout: "1s")
        try await s.server.script("/api/rest/getIncidentInfo", [.hang])
        let started = Date()
        let result = try await s.runOnce(Self.rawKey)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        #expect(result.stderr.contains("timed out"))
        #expect(try await s.server.requests(path: "/api/rest/getIncidentInfo").count == 2)
        #expect(elapsed >= 1.9 && elapsed < 15, "took \(elapsed) s")
        try await s.expectUnchanged()
        #expect(try await s.lastRunStatus() == "failed")
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    @Test("a body cut short or a connection closed mid-body: typed error, database unchanged", arguments: [
        ResponseSpec(bodyFile: feed, truncateAfter: 1500), ResponseSpec(bodyFile: feed, close: .afterHeaders),
    ], [rawKey, encodedKey])
    func truncated(response: ResponseSpec, key: String) async throws {
        let s = try await Setup(key: key, retry: #"{"maxRetries": 0}"#)
        try await s.server.script("/api/rest/getIncidentInfo", [response])
        let result = try await s.runOnce(key)
        #expect(result.status == 1)
        #expect(result.stderr.contains("level=error event=ingest.failed source=gits"))
        try await s.expectUnchanged()
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    /// A large body arriving fast is read while it downloads (issue 23): 6,000 records (1.4 MB),
    /// the first 1.2 MB at once, then the connection closes after 1.3 MB, 0.4 s later, so most
    /// records were read and stored in the poll's transaction before the cut. That transaction
    /// is rolled back: with a retry left, the retry reads the new response from its start in a
    /// new transaction and each record is stored once; with none, nothing is stored.
    /// (`StreamedPollTests` counts what each transaction was given.)
    @Test("a body cut off after records were read and stored: retried from its start, each record stored once; no retry left: nothing stored",
          arguments: [1, 0])
    func cutAfterRecordsWereStored(maxRetries: Int) async throws {
        let s = try await Setup(key: Self.rawKey, retry: #"{"maxRetries": \#(maxRetries), "baseDelay": 0.1}"#)
        let records = (1...6000).map { index in
            "<itemList><linkId>L\(index)</linkId><regSeq>C\(index)</regSeq><startDate>2023-03-21 14:13:00</startDate>"
                + "<inciDesc>[사고] 추돌 \(index)</inciDesc><inciPlace1>경부고속도로</inciPlace1><coord_x>127.0</coord_x><coord_y>37.0</coord_y></itemList>\n"
        }.joined()
        let feed = try s.ws.write("cut.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ServiceResult><msgHeader><headerCd>0</headerCd><headerMsg>ok</headerMsg><itemCount>6000</itemCount></msgHeader>
            <msgBody>\(records)</msgBody></ServiceResult>
            """)
        try await s.server.script("/api/rest/getIncidentInfo", [
            ResponseSpec(bodyFile: feed, chunkSize: 1_200_000, chunkDelay: 0.4, truncateAfter: 1_300_000), ResponseSpec(bodyFile: feed),
        ])
        let result = try await s.runOnce(Self.rawKey)
        let attempts = result.stderr.split(separator: "\n").filter { $0.contains("event=http.attempt") }
        #expect(attempts.first?.contains("bodyTruncated") == true, "\(attempts)")
        #expect(try await s.server.requests(path: "/api/rest/getIncidentInfo").count == maxRetries + 1)
        if maxRetries == 0 {
            #expect(result.status == 1)
            try await s.expectUnchanged()
            #expect(try await s.lastRunStatus() == "failed")
            return
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(attempts.count == 2 && attempts[0].contains("decision=retry"), "\(attempts)")
        #expect(result.stderr.contains("fetched=6000 inserted=6000"), "\(result.stderr)")
        let active = try await s.ws.listJSON(["--active", "--limit", "10000"])
        #expect(active.count == 6000)
        #expect(Set(active.compactMap { $0.text("external_id") }) == Set((1...6000).map { "C\($0)" }))
        #expect(try await s.lastRunStatus() == "succeeded")
    }

    @Test("a body sent in 1-byte chunks gives the same incidents as sent whole")
    func oneByteChunks() async throws {
        let whole = try await Setup(key: Self.rawKey)
        try await whole.server.script("/api/rest/getIncidentInfo", [ResponseSpec(bodyFile: Self.feed)])
        #expect(try await whole.runOnce(Self.rawKey).status == 0)
        let chunked = try await Setup(key: Self.rawKey)
        try await chunked.server.script("/api/rest/getIncidentInfo", [ResponseSpec(bodyFile: Self.feed, chunkSize: 1, chunked: true)])
        #expect(try await chunked.runOnce(Self.rawKey).status == 0)
        let strip: ([String: Any]) -> [String: String] = { row in
            row.filter { !["id", "first_seen_at", "last_seen_at", "cleared_at"].contains($0.key) }.mapValues { "\($0)" }
        }
        let wholeRows = try await whole.ws.listJSON(["--order", "source"]).map(strip)
        let chunkedRows = try await chunked.ws.listJSON(["--order", "source"]).map(strip)
        #expect(wholeRows == chunkedRows)
    }

    /// That the source runs again once the pause is over is checked on a virtual clock
    /// (SchedulerServiceTests.quotaPause), without waiting for it here.
    @Test("quota exhausted (429 past the retries): the next run skips without a request and exits 3")
    func quota() async throws {
        let s = try await Setup(key: Self.rawKey, retry: #"{"maxRetries": 0}"#)
        try await s.server.script("/api/rest/getIncidentInfo", [
            ResponseSpec(status: 429, headers: ["Retry-After": "600"], body: "slow down"), ResponseSpec(bodyFile: Self.feed),
        ])
        let first = try await s.runOnce(Self.rawKey)
        #expect(first.status == 1)
        #expect(first.stderr.contains("quota"))
        let second = try await s.runOnce(Self.rawKey)
        #expect(second.status == 3, "\(second.stderr)")
        #expect(second.stderr.contains("level=warning event=ingest.skipped source=gits"))
        #expect(try await s.server.requests(path: "/api/rest/getIncidentInfo").count == 1)
        #expect(try await s.lastRunStatus() == "skipped")
        expectNoKey(Self.rawKey, in: [first.stderr, second.stderr], database: s.ws.databaseBytes())
    }

    @Test("a daily quota envelope (gateway 22, or its error name without a code) skips the source until the next midnight in Korea",
          arguments: ["datagokr/gateway_error_22_quota.xml", "datagokr/gateway_error_quota_without_code.xml"])
    func dailyQuota(fixture: String) async throws {
        let s = try await Setup(key: Self.rawKey)
        try await s.server.script("/api/rest/getIncidentInfo", [ResponseSpec(bodyFile: TestPaths.fixture(fixture).path)])
        #expect(try await s.runOnce(Self.rawKey).status == 1)
        let skipped = try await s.runOnce(Self.rawKey)
        #expect(skipped.status == 3)
        let line = try #require(skipped.stderr.split(separator: "\n").first { $0.contains("event=ingest.skipped") })
        #expect(line.contains("T15:00:00Z"), "resumes at 00:00 KST = 15:00 UTC: \(line)")
    }

    @Test("the whole-run deadline cancels a source still running: exit 1, the run recorded as cancelled, nothing stored")
    func deadline() async throws {
        let s = try await Setup(key: Self.encodedKey)
        try await s.server.script("/api/rest/getIncidentInfo", [.hang])
        let started = Date()
        let result = try await s.runOnce(Self.encodedKey, extra: ["--deadline", "2s"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        #expect(elapsed < 10, "took \(elapsed) s")
        #expect(result.stderr.contains("level=error event=run.deadline_exceeded deadline=2s"))
        #expect(result.stderr.contains("status=cancelled"))
        try await s.expectUnchanged()
        #expect(try await s.lastRunStatus() == "cancelled")
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    @Test("SIGTERM during a slow download: exits within 5 s with 143, the run is recorded as cancelled, the database unchanged")
    func sigterm() async throws {
        let s = try await Setup(key: Self.rawKey)
        try await s.server.script("/api/rest/getIncidentInfo", [ResponseSpec(bodyFile: Self.feed, chunkSize: 64, chunkDelay: 1)])
        let process = try RunningProcess(Executables.url("incident-scheduler"), ["run", "--once", "--config", s.config],
                                         environment: ["GITS_SERVICE_KEY": Self.rawKey])
        // SIGTERM during the download: once the request arrived (a busy machine may take seconds
        // to start the process), not after a fixed time.
        let deadline = Date().addingTimeInterval(30)
        while try await s.server.requests(path: "/api/rest/getIncidentInfo").isEmpty && Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        try #require(try await !s.server.requests(path: "/api/rest/getIncidentInfo").isEmpty, "no request within 30 s")
        try await Task.sleep(nanoseconds: 300_000_000)
        let signalled = monotonicNow()
        process.send(SIGTERM)
        let result = await process.finished(timeout: 30)
        let elapsed = (process.exitedAt ?? monotonicNow()) - signalled
        #expect(elapsed < 5, "took \(elapsed) s to stop")
        #expect(result.status == 143, "\(result.stderr)")
        #expect(result.stderr.contains("status=cancelled"))
        try await s.expectUnchanged()
        #expect(try await s.lastRunStatus() == "cancelled")
        expectNoKey(Self.rawKey, in: [result.stdout, result.stderr], database: s.ws.databaseBytes())
    }

    @Test("a password in a configured URL's user-info appears nowhere: check-config, the logs, the stored run error, the database")
    func userInfoPasswordNeverShown() async throws {
        let server = try await LoopbackServer.start(routes: [:])
        defer { server.stop() }
        try await server.script("/api/rest/getIncidentInfo", [.status(503), .status(503), .status(503)])
        let ws = try Workspace()
        let password = "pa55-w0rd%21"
        var base = try #require(URLComponents(url: server.url("/api/rest/"), resolvingAgainstBaseURL: false))
        base.percentEncodedUser = "proxyuser"
        base.percentEncodedPassword = password
        let config = try ws.write("config.json", """
            {"database": "\(ws.database)", "sources": [{"name": "gits", "provider": "gits", "keyEnv": "GITS_SERVICE_KEY",
              "baseURL": "\(try #require(base.string))", "retry": {"maxRetries": 2, "baseDelay": 0.1, "maxDelay": 0.2}}]}
            """)
        let check = try await run("incident-scheduler", ["check-config", "--config", config, "--wide"], environment: ["GITS_SERVICE_KEY": Self.rawKey])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("proxyuser:REDACTED@127.0.0.1"), "\(check.stdout)")
        let result = try await run("incident-scheduler", ["run", "--once", "--config", config, "--verbose"],
                                   environment: ["GITS_SERVICE_KEY": Self.rawKey])
        #expect(result.status == 1)
        #expect(result.stderr.contains("HTTP 503"), "\(result.stderr)")
        let runs = try await run("incidents", ["runs", "--database", ws.database, "--format", "json"])
        #expect(runs.stdout.contains("\"status\": \"failed\""), "\(runs.stdout)")
        for text in [check.stdout, check.stderr, result.stdout, result.stderr, runs.stdout,
                     String(decoding: ws.databaseBytes(), as: UTF8.self)] {
            #expect(!text.contains("pa55"), "the password leaked: \(text.prefix(2000))")
            #expect(!text.contains("w0rd"))
        }
    }
}
