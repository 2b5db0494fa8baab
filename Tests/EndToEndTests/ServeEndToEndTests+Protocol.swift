import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// `incidents serve` as a client that reads docs/analyst.md ("Serve it") finds it (issue 21's
/// walk): conditional requests, whole paths, formats and content negotiation, page sizes,
/// oversized requests, the connection limit, `/status`'s configuration, usage errors.
@Suite("End to end: incidents serve, protocol", .serialized)
struct ServeProtocolEndToEndTests {
    /// A 50-incident database: one complete poll at `ServeFixture.t0`.
    static let small: String = {
        let directory = (try? TestPaths.temporaryDirectory("serve-protocol"))!
        return (try? ServeFixture.database(50, in: directory))!
    }()

    /// Sends `request` byte for byte on one connection and reads until the server closes it or
    /// `timeout` seconds pass: what came back, or `closed` when the server closed the connection
    /// without a byte.
    static func raw(_ server: ServedProcess, _ request: String, timeout: Double = 5) async throws -> String {
        let file = try TestPaths.temporaryDirectory("serve-raw").appendingPathComponent("request")
        try Data(request.utf8).write(to: file)
        let program = #"""
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=float(sys.argv[3]))
            data = b""
            try:
                s.sendall(open(sys.argv[2], "rb").read())
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
            except (socket.timeout, ConnectionResetError):
                pass
            sys.stdout.write(data.decode("utf-8", "replace") if data else "closed")
            """#
        let result = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                               ["python3", "-c", program, String(server.port), file.path, String(timeout)])).finished(timeout: timeout + 30)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    static func status(_ response: String) -> Int { Int(response.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0 }

    @Test("If-Modified-Since with the server's own Last-Modified is 304 in any later minute, until a poll lands; an earlier date is 200")
    func ifModifiedSince() async throws {
        let server = try await ServedProcess(database: Self.small)
        for path in ["/collections/incidents/items?limit=5", "/stats", "/collections/incidents/items/3", "/"] {
            let first = try await server.get(path)
            let modified = try #require(first.headers["last-modified"])
            // The poll's time is 2024-05-01T00:00:00Z: every request now is in a later minute.
            #expect(modified == "Wed, 01 May 2024 00:00:00 GMT")
            let again = try await server.get(path, headers: ["If-Modified-Since": modified])
            #expect(again.status == 304, "\(path)")
            let earlier = try await server.get(path, headers: ["If-Modified-Since": "Tue, 30 Apr 2024 23:59:59 GMT"])
            #expect(earlier.status == 200, "\(path)")
        }
        _ = await server.stop()
    }

    @Test("a path holding a control character, raw or percent-encoded (%00 cut libmicrohttpd's C string), is 404", arguments: ServedStore.allCases)
    func controlCharactersInPath(store: ServedStore) async throws {
        try await store.with(Self.small) { database in
            let server = try await ServedProcess(database: database)
            for path in ["/collections/incidents/items/2%00junk", "/collections%00xyz", "/metrics%00.txt", "/map%00", "/%00", "/stats%0a",
                         "/collections/incidents/items/2%7F", "/map/leaflet.js%00", "/collections/incidents%1F/items"] {
                let response = try await Self.raw(server, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                #expect(Self.status(response) == 404, "\(path): \(response.prefix(200))")
                #expect(response.contains("Content-Type: application/problem+json"), "\(path)")
            }
            let whole = try await Self.raw(server, "GET /collections/incidents/items/2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            #expect(Self.status(whole) == 200)
            let log = await server.stop().stderr
            #expect(log.contains("path=/collections/incidents/items/2%00junk route=unknown status=404"), "the path as sent is logged")
        }
    }

    @Test("bbox-crs takes only CRS84 (400 otherwise, with or without bbox); crs is unknown; /api lists bbox-crs")
    func bboxCRS() async throws {
        let server = try await ServedProcess(database: Self.small)
        let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
        for query in ["bbox-crs=foo", "bbox-crs=http://www.opengis.net/def/crs/EPSG/0/3857", "bbox-crs=EPSG:4326&bbox=126,34,128,36",
                      "crs=\(crs84)", "bbox-crs=\(crs84)&bbox-crs=\(crs84)"] {
            let response = try await server.get("/collections/incidents/items?" + query)
            #expect(response.status == 400 && response.headers["content-type"] == "application/problem+json", "\(query): \(response.status)")
        }
        let boxed = try await server.get("/collections/incidents/items?bbox=126,34,128,36")
        let named = try await server.get("/collections/incidents/items?bbox=126,34,128,36&bbox-crs=" + crs84)
        #expect(named.status == 200)
        let count = try #require(try boxed.json()["numberReturned"] as? Int)
        #expect(count > 0 && count < 50)
        #expect(try named.json()["numberReturned"] as? Int == count)
        #expect(try await server.get("/stats?bbox=126,34,128,36&bbox-crs=EPSG:3857").status == 400)
        let api = try await server.get("/api")
        let items = try #require(((try api.json()["paths"] as? [String: Any])?["/collections/incidents/items"] as? [String: Any])?["get"] as? [String: Any])
        let parameter = try #require((items["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "bbox-crs" })
        #expect((parameter["schema"] as? [String: Any])?["enum"] as? [String] == [crs84])
        _ = await server.stop()
    }

    /// Each path and the formats it serves (docs/analyst.md, "Serve it").
    static let formats: [(path: String, api: String, formats: [String])] = [
        ("/", "/", ["json", "html"]), ("/conformance", "/conformance", ["json", "html"]), ("/api", "/api", ["json"]),
        ("/collections", "/collections", ["json", "html"]), ("/collections/incidents", "/collections/incidents", ["json", "html"]),
        ("/collections/incidents/items", "/collections/incidents/items", ["json", "html", "ndjson", "csv"]),
        ("/collections/incidents/items/3", "/collections/incidents/items/{featureId}", ["json", "html"]),
        ("/runs", "/runs", ["json"]), ("/stats", "/stats", ["json"]), ("/changes", "/changes", ["json", "ndjson"]),
        ("/map", "/map", []), ("/metrics", "/metrics", []),
    ]

    @Test("f takes exactly the formats a path serves (400 otherwise), and /api's f enum of each path says exactly those")
    func formatsPerPath() async throws {
        let server = try await ServedProcess(database: Self.small)
        let paths = try #require(try await server.get("/api").json()["paths"] as? [String: Any])
        for (path, apiPath, served) in Self.formats {
            for f in ["json", "html", "ndjson", "csv"] {
                let response = try await server.get(path + "?f=" + f)
                let expected = served.contains(f) ? 200 : 400
                #expect(response.status == expected, "\(path)?f=\(f): \(response.status) \(response.text.prefix(150))")
                if expected == 400 { #expect(response.headers["content-type"] == "application/problem+json", "\(path)?f=\(f)") }
            }
            let parameters = try #require(((paths[apiPath] as? [String: Any])?["get"] as? [String: Any])?["parameters"] as? [[String: Any]], "\(apiPath)")
            let f = parameters.first { $0["name"] as? String == "f" }
            #expect(((f?["schema"] as? [String: Any])?["enum"] as? [String]) ?? [] == served, "/api's f of \(apiPath)")
        }
        #expect(try await server.get("/collections/incidents/items?f=geojson").headers["content-type"] == "application/geo+json")
        _ = await server.stop()
    }

    @Test("Accept is negotiated by RFC 9110: q-values, q=0 refuses, type/* and */*, the default without Accept, 406 when nothing served is acceptable")
    func acceptNegotiation() async throws {
        let server = try await ServedProcess(database: Self.small)
        let items = "/collections/incidents/items?limit=2"
        let cases: [(String, String, Int, String?)] = [
            (items, "text/html;q=0", 406, "application/problem+json"),
            (items, "text/html;q=0.1, application/json;q=0.9", 200, "application/geo+json"),
            (items, "application/x-ndjson;q=0.1, text/html;q=0.2, application/json", 200, "application/geo+json"),
            (items, "application/x-ndjson;q=0.1, text/html;q=0.2", 200, "text/html; charset=utf-8"),
            (items, "text/*", 200, "text/html; charset=utf-8"),
            (items, "text/*;q=0.5, text/csv", 200, "text/csv; charset=utf-8; header=present"),
            (items, "*/*", 200, "application/geo+json"),
            (items, "*/*;q=0.1, application/x-ndjson", 200, "application/x-ndjson"),
            (items, "text/html, */*;q=0", 200, "text/html; charset=utf-8"),
            (items, "image/png", 406, "application/problem+json"),
            ("/", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", 200, "text/html; charset=utf-8"),
            ("/", "application/json;q=0.5, text/html;q=0.4", 200, "application/json"),
            ("/stats", "text/html", 406, "application/problem+json"),
            ("/stats", "text/html, */*;q=0.1", 200, "application/json"),
            ("/changes", "application/x-ndjson", 200, "application/x-ndjson"),
        ]
        for (path, accept, status, type) in cases {
            let response = try await server.get(path, headers: ["Accept": accept])
            #expect(response.status == status, "\(path) Accept: \(accept): \(response.status)")
            #expect(response.headers["content-type"] == type, "\(path) Accept: \(accept)")
        }
        let plain = try await server.get(items)
        #expect(plain.headers["content-type"] == "application/geo+json", "no Accept: the default")
        let chosen = try await server.get(items + "&f=csv", headers: ["Accept": "application/json"])
        #expect(chosen.headers["content-type"] == "text/csv; charset=utf-8; header=present", "f wins over Accept")
        _ = await server.stop()
    }

    @Test("a limit of any number of digits (at least 1) is cut to the maximum, on items, /changes and /runs; 0 and non-digits are 400",
          arguments: ServedStore.allCases)
    func hugeLimits(store: ServedStore) async throws {
        try await store.with(Self.small) { database in
            let server = try await ServedProcess(database: database)
            for limit in ["99999999999999999999", "10001", "000000000000000000000000000000000007"] {
                let items = try await server.get("/collections/incidents/items?limit=" + limit)
                #expect(items.status == 200, "\(limit): \(items.text.prefix(200))")
                #expect(try items.json()["numberReturned"] as? Int == (limit.hasSuffix("7") ? 7 : 50))
                let changes = try await server.get("/changes?limit=" + limit)
                #expect(changes.status == 200, "/changes \(limit)")
                #expect(try (changes.json()["changes"] as? [Any])?.count == (limit.hasSuffix("7") ? 7 : 50))
                let runs = try await server.get("/runs?limit=" + limit)
                #expect(runs.status == 200, "/runs \(limit)")
            }
            for bad in ["0", "00", "-1", "1e3", "", " 5"] {
                for path in ["/collections/incidents/items", "/changes", "/runs"] {
                    let response = try await server.get(path + "?limit=" + (bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                    #expect(response.status == 400, "\(path)?limit=\(bad)")
                }
            }
            _ = await server.stop()
        }
    }

    @Test("oversized requests: ~3,000 parameters and a 100 KB query reach the server and get a 400 problem; beyond 256 KiB and malformed request lines libmicrohttpd answers itself")
    func oversized() async throws {
        let server = try await ServedProcess(database: Self.small)
        let many = (0..<3000).map { "road=r\($0)" }.joined(separator: "&")
        let manyAnswer = try await Self.raw(server, "GET /collections/incidents/items?\(many) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(Self.status(manyAnswer) == 400, "\(manyAnswer.prefix(300))")
        #expect(manyAnswer.contains("application/problem+json"))
        let long = String(repeating: "a", count: 100_000)
        let longAnswer = try await Self.raw(server, "GET /collections/incidents/items?road=\(long) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(Self.status(longAnswer) == 400, "\(longAnswer.prefix(300))")
        #expect(longAnswer.contains("application/problem+json"))
        // Beyond the connection's memory, and requests that are not HTTP/1.x: libmicrohttpd's own answers (docs/analyst.md).
        let huge = String(repeating: "a", count: 300_000)
        let hugeAnswer = try await Self.raw(server, "GET /collections/incidents/items?road=\(huge) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(Self.status(hugeAnswer) == 414, "\(hugeAnswer.prefix(300))")
        #expect(Self.status(try await Self.raw(server, "GET HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) == 400)
        #expect(Self.status(try await Self.raw(server, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")) == 505)
        // The server still answers.
        #expect(try await server.get("/stats").status == 200)
        _ = await server.stop()
    }

    @Test("beyond --max-connections a connection is closed at once, not left waiting; once one closes, requests are answered again")
    func connectionLimit() async throws {
        let server = try await ServedProcess(database: Self.small, ["--max-connections", "6"])
        let program = #"""
            import socket, sys, time
            port = int(sys.argv[1])
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
            time.sleep(0.5)
            def get():
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                start = time.time()
                try:
                    s.sendall(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    data = s.recv(65536)
                    answer = data.split(b" ")[1].decode() if data else "closed"
                except socket.timeout:
                    answer = "timeout"
                except (ConnectionResetError, BrokenPipeError):
                    answer = "closed"
                return answer, time.time() - start
            refused, seconds = get()
            idle.pop().close(); time.sleep(0.5)
            answered, _ = get()
            print(refused, round(seconds, 2), answered)
            """#
        let result = await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", program, String(server.port)])).finished(timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let words = result.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(words.first == "closed", "\(result.stdout)")
        #expect((Double(words.dropFirst().first ?? "") ?? 99) < 2, "refused at once: \(result.stdout)")
        #expect(words.last == "200", "\(result.stdout)")
        _ = await server.stop()
    }

    @Test("/status with a configuration that names another database is a 503 problem naming both, without a judgement, as the command line's exit 78")
    func statusOfAnotherDatabase() async throws {
        let directory = try TestPaths.temporaryDirectory("serve-status-other")
        let configuration = directory.appendingPathComponent("config.json")
        let other = directory.appendingPathComponent("other.sqlite").path
        try Data("{\"database\": \"\(other)\", \"sources\": [{\"name\": \"gits\", \"provider\": \"gits\", \"keyEnv\": \"K\", \"interval\": \"5m\"}]}".utf8)
            .write(to: configuration)
        let refused = try await run("incidents", ["serve", "--config", configuration.path, "--database", Self.small, "--listen", "127.0.0.1:0"])
        #expect(refused.status == 78, "\(refused.stderr)")
        // The configuration changes while the server runs (it is read for each request).
        let served = directory.appendingPathComponent("served.json")
        try Data("{\"sources\": [{\"name\": \"gits\", \"provider\": \"gits\", \"keyEnv\": \"K\", \"interval\": \"5m\"}]}".utf8).write(to: served)
        let server = try await ServedProcess(database: Self.small, ["--config", served.path])
        #expect(try await server.get("/status").headers["content-type"] == "application/json")
        try FileManager.default.removeItem(at: served)
        try FileManager.default.copyItem(at: configuration, to: served)
        let status = try await server.get("/status")
        #expect(status.status == 503)
        #expect(status.headers["content-type"] == "application/problem+json")
        let detail = try #require(try status.json()["detail"] as? String)
        #expect(detail.contains(other) && detail.contains(Self.small), "\(detail)")
        _ = await server.stop()
    }

    @Test("a bad option value exits 64 with the option's message, before the database is opened")
    func usageErrors() async throws {
        for (option, value) in [("--readers", "0"), ("--readers", "65"), ("--max-connections", "0"), ("--idle-timeout", "soon"), ("--request-timeout", "x")] {
            let result = try await run("incidents", ["serve", "--database", "/nonexistent/dir/none.sqlite", option, value, "--listen", "127.0.0.1:0"])
            #expect(result.status == 64, "\(option) \(value): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(option): '\(value)'"), "\(result.stderr)")
            #expect(!result.stderr.contains("database"), "\(result.stderr)")
        }
    }

    @Test("an event stream sends one Cache-Control (no-store); /api lists /map's refresh, /status's 503 and the 401s with a token; HTTP/1.0 without Host is answered")
    func smallOnes() async throws {
        let token = "a-token-of-the-protocol-test-0123"
        let server = try await ServedProcess(database: Self.small, environment: ["INCIDENTS_SERVE_TOKEN": token])
        let stream = try await Self.raw(server, "GET /changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n\r\n", timeout: 2)
        let cacheControl = stream.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("cache-control:") }
        #expect(cacheControl == ["Cache-Control: no-store"], "\(stream.prefix(400))")
        let badFormat = try await Self.raw(server, "GET /changes?f=csv HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        #expect(Self.status(badFormat) == 400, "a stream's f is one of /changes' formats too")
        let api = try await server.get("/api", headers: ["Authorization": "Bearer " + token])
        let paths = try #require(try api.json()["paths"] as? [String: Any])
        func operation(_ path: String) -> [String: Any]? { (paths[path] as? [String: Any])?["get"] as? [String: Any] }
        #expect((operation("/map")?["parameters"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["refresh"])
        #expect((operation("/status")?["responses"] as? [String: Any])?["503"] != nil)
        #expect(paths.keys.allSatisfy { (operation($0)?["responses"] as? [String: Any])?["401"] != nil }, "every operation may answer 401")
        let old = try await Self.raw(server, "GET /collections HTTP/1.0\r\nAuthorization: Bearer \(token)\r\n\r\n")
        #expect(Self.status(old) == 200, "\(old.prefix(300))")
        #expect(old.contains("\"href\": \"http://127.0.0.1:\(server.port)/collections"), "links name the address it came in on")
        let oldHost = try await Self.raw(server, "GET /collections HTTP/1.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        #expect(Self.status(oldHost) == 400, "HTTP/1.1 requires Host")
        _ = await server.stop()
        let open = try await ServedProcess(database: Self.small)
        let unauthenticated = try await open.get("/api")
        #expect(!unauthenticated.text.contains("\"401\""), "no 401 without a token")
        _ = await open.stop()
    }
}
