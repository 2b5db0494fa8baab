import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// Databases for `incidents serve`, and the server as a process on loopback.
enum ServeFixture {
    static func instant(_ text: String) -> UTCInstant { UTCInstant(rfc3339: text)! }
    static let t0 = instant("2024-05-01T00:00:00Z")

    /// `count` incidents over Korea from a seeded generator: every fifth a LineString of 2–9
    /// positions, the rest points; starts spread over ten days, a third ended by the provider.
    static func generated(_ count: Int, seed: UInt64 = 21, source: String = "gits", idPrefix: String = "g") -> [Incident] {
        var random = SplitMix64(seed: seed)
        let categories: [IncidentCategory] = [.accident, .roadwork, .breakdown, .closure, .weather, .congestion]
        return (0..<count).map { index in
            let latitude = random.next(in: 34.0...38.5), longitude = random.next(in: 126.0...129.5)
            let start = t0.adding(seconds: Int64(random.next(in: 0...864_000)))
            var incident = Incident(
                source: source, externalID: "\(idPrefix)\(index)", category: categories[index % categories.count],
                description: "[사고] 시험 사고 \(index)", road: ["경부고속도로", "영동고속도로", "서해안고속도로"][index % 3],
                coordinate: Coordinate(latitude: latitude, longitude: longitude), startedAt: start,
                endedAt: index % 3 == 0 ? start.adding(seconds: 3600 * Int64(1 + index % 48)) : nil)
            if index % 5 == 0 {
                let points = (0..<(2 + index % 8)).map { step in
                    Coordinate(latitude: latitude + Double(step) * 0.001, longitude: longitude + Double(step) * 0.0013)!
                }
                incident.setGeometry(.lineString(points))
            }
            return incident
        }
    }

    /// An SQLite database holding `generated(count)` as one complete poll at `t0`.
    static func database(_ count: Int, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("serve.sqlite").path
        let store = try SQLiteStore(path: path, clock: .fixed(t0))
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0), QueryFixture.Producer(incidents: generated(count)).callAsFunction)
        return path
    }

    /// The 2,000-incident database most tests share (built once per test process).
    static let shared: String = {
        let directory = (try? TestPaths.temporaryDirectory("serve"))!
        return (try? database(2_000, in: directory))!
    }()
}

/// The two stores the server is tested on: the SQLite file as it is, or copied into a new
/// database of the throwaway PostgreSQL server (`incident-scheduler copy`, ids kept).
enum ServedStore: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }

    /// Runs `body` with the `database` argument of the store holding `sqlite`'s incidents. On
    /// PostgreSQL the server connects as a role that may only read (docs/operator.md, "More than one
    /// machine": `incidents_reader`), made for the test.
    func with(_ sqlite: String, _ body: (String) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            try await body(sqlite)
        case .postgres:
            let role = "reader_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
            try await PostgresDatabase.with { database in
                let copied = try await run("incident-scheduler", ["copy", "--from", sqlite, "--to", database.uri])
                #expect(copied.status == 0, "\(copied.stderr)")
                _ = try await database.query("CREATE ROLE \(role) LOGIN; GRANT USAGE ON SCHEMA public TO \(role); "
                                             + "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
                var reader = try #require(URLComponents(string: database.uri))
                reader.user = String(role)
                try await body(try #require(reader.string))
            }
            _ = try? await PostgresDatabase(uri: try #require(ProcessInfo.processInfo.environment[PostgresDatabase.variable]))
                .query("DROP ROLE IF EXISTS \(role)")
        }
    }
}

/// `incidents serve` running on a free loopback port; stopped with SIGTERM by ``stop()``.
final class ServedProcess: @unchecked Sendable {
    let process: RunningProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server on `database` and waits for its `serve.listening` line.
    init(database: String, _ arguments: [String] = [], environment: [String: String] = [:]) async throws {
        process = try RunningProcess(Executables.url("incidents"),
                                     ["serve", "--database", database, "--listen", "127.0.0.1:0"] + arguments, environment: environment)
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while found == nil && Date() < deadline && process.process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
            if let line = process.stderrSoFar.split(separator: "\n").first(where: { $0.contains("event=serve.listening") }),
               let range = line.range(of: #"port=\d+"#, options: .regularExpression) {
                found = Int(line[range].dropFirst(5))
            }
        }
        guard let found else {
            process.send(SIGKILL)
            throw ServeTestError("the server did not start: \(process.stderrSoFar.suffix(800))")
        }
        port = found
    }

    /// SIGTERM, then the result (the server must end by itself).
    func stop(timeout: Double = 20) async -> ProcessResult {
        process.send(SIGTERM)
        return await process.finished(timeout: timeout)
    }

    /// One response: status, headers (names lowercased) and body bytes, over a fresh
    /// connection-less session (no cache, no cookies; URLSession decodes no gzip on its own
    /// unless asked, so `Accept-Encoding` is what the test sets).
    func get(_ pathAndQuery: String, headers: [String: String] = [:], method: String = "GET") async throws -> ServeResponse {
        try await Self.get(URL(string: base + pathAndQuery)!, headers: headers, method: method)
    }

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 60
        return URLSession(configuration: configuration)
    }()

    static func get(_ url: URL, headers: [String: String] = [:], method: String = "GET") async throws -> ServeResponse {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return ServeResponse(status: http.statusCode, headers: fields, body: data)
    }
}

/// A Debian program in /usr/bin (GDAL's ogrinfo and ogr2ogr), awaited without holding a thread.
func tool(_ name: String, _ arguments: [String], timeout: Double = 300) async throws -> ProcessResult {
    await (try RunningProcess(URL(fileURLWithPath: "/usr/bin/" + name), arguments)).finished(timeout: timeout)
}

struct ServeResponse {
    var status: Int
    var headers: [String: String]
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "not a JSON object: \(text.prefix(300))")
    }
    /// The links of a JSON document, by rel (the first of each).
    func links() throws -> [String: [String: Any]] {
        let links = try #require(try json()["links"] as? [[String: Any]])
        var byRel: [String: [String: Any]] = [:]
        for link in links { if let rel = link["rel"] as? String, byRel[rel] == nil { byRel[rel] = link } }
        return byRel
    }
}

struct ServeTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
