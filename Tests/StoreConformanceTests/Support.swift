import Foundation
import IncidentCore
@testable import IncidentPostgres
@testable import IncidentSQLite
import Testing

/// The stores every test of this target runs against: SQLite in memory, and PostgreSQL on the
/// throwaway server `Scripts/test` starts (its URI in `INCIDENTS_TEST_POSTGRES`).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// Everything the tests use of a store: the ports, plus reading raw tables.
protocol TestStore: IngestStore, IncidentReader, StoreAdministration, SourceLeases, StoreExport, ChangeFeedReader, TimelineCounter {
    /// The first column of every row of `sql` (standard SQL that both stores accept), as text.
    func column(_ sql: String) throws -> [String?]
}

extension SQLiteStore: TestStore {
    func column(_ sql: String) throws -> [String?] {
        try withDatabase { db in
            var values: [String?] = []
            try db.query(sql) { values.append($0.string(at: 0)) }
            return values
        }
    }
}

extension PostgresStore: TestStore {
    func column(_ sql: String) throws -> [String?] {
        try withConnection { connection in
            let result = try connection.query(sql, context: "a test query")
            return (0..<result.rowCount).map { result.string($0, 0) }
        }
    }
}

/// The throwaway PostgreSQL server of the test run.
enum TestServer {
    static let variable = "INCIDENTS_TEST_POSTGRES"

    /// The server's URI (`postgresql://postgres@127.0.0.1:PORT/postgres`), or a failed test
    /// saying how to get one: the PostgreSQL cases never pass without a server.
    static func uri(sourceLocation: SourceLocation = #_sourceLocation) throws -> URLComponents {
        let value = try #require(ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }, """
            \(variable) is not set: the PostgreSQL cases need the throwaway server that Scripts/test starts; run the tests \
            with Scripts/test, or start a PostgreSQL 15 server and export \(variable)=postgresql://USER@127.0.0.1:PORT/postgres
            """, sourceLocation: sourceLocation)
        let components = try #require(URLComponents(string: value), "\(variable) is not a URI: \(value)", sourceLocation: sourceLocation)
        try #require(components.scheme == "postgresql" && components.host != nil,
                     "\(variable) must be a postgresql:// URI with a host, not \(value)", sourceLocation: sourceLocation)
        return components
    }

    /// A connection string for `database` on the test server.
    static func location(database: String) throws -> PostgresLocation {
        var components = try uri()
        components.path = "/" + database
        return try PostgresLocation(try #require(components.string))
    }

    /// Runs `sql` on the server's maintenance database (CREATE/DROP DATABASE).
    static func administer(_ sql: String) throws {
        let admin = try Connection(location: try PostgresLocation(try #require(uri().string)), readOnly: false)
        try admin.execute(sql, context: "administering the test server")
    }

    /// Makes an empty database, runs `body` with its name, and drops it (with its connections).
    static func withDatabase<T>(_ body: (String) throws -> T) throws -> T {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try administer("CREATE DATABASE \(name)")
        defer { try? administer("DROP DATABASE \(name) WITH (FORCE)") }
        return try body(name)
    }
}

/// Opens a fresh store of `kind` (created and migrated), runs `body` with it, then disposes
/// of it.
func withStore<T>(_ kind: StoreKind, clock: UTCClock = .fixed(t0), fields: [IncidentField] = IncidentField.content,
                  extraSQLiteMigration: String? = nil, extraPostgresMigration: String? = nil,
                  _ body: (any TestStore) throws -> T) throws -> T {
    switch kind {
    case .sqlite:
        var migrator = try Migrator.bundled()
        if let extraSQLiteMigration { migrator.migrations.append(try Migration(name: "0099_test.sql", sql: extraSQLiteMigration)) }
        return try body(try SQLiteStore(path: ":memory:", clock: clock, fields: fields, migrator: migrator))
    case .postgres:
        return try TestServer.withDatabase { name in
            var migrator = try PostgresMigrator.bundled()
            if let extraPostgresMigration {
                migrator.migrations.append(try Migration(name: "0099_test.sql", sql: extraPostgresMigration))
            }
            let store = try PostgresStore(try TestServer.location(database: name), clock: clock, fields: fields, migrator: migrator)
            return try body(store)
        }
    }
}

// MARK: - Fixtures shared by the tests (the same as IncidentSQLiteTests')

let t0 = UTCInstant(rfc3339: "2023-03-21T06:00:00Z")!
let t1 = t0.adding(seconds: 300)
let t2 = t1.adding(seconds: 300)

func incident(_ id: String, source: String = "gits", description: String = "[사고] 경부고속도로 사고",
              ended: UTCInstant? = nil) -> Incident {
    Incident(source: source, externalID: id, category: .accident, providerCategory: "사고",
             description: description, road: "경부고속도로", location: "(서울방향) 수원IC → 신갈JC",
             restriction: "1차로", coordinate: Coordinate(latitude: 37.27, longitude: 127.05),
             linkID: "1040000103", startedAt: UTCInstant(rfc3339: "2023-03-21T05:13:00Z"), endedAt: ended)
}

/// Feeds a fixed list of records to the store's sink, optionally failing after some, and
/// returns a fixed verdict.
struct ListProducer {
    var records: [FeedRecord]
    var failAfter: Int?
    var verdict: ResponseVerdict

    init(incidents: [Incident], failAfter: Int? = nil, verdict: ResponseVerdict = .complete) {
        self.init(records: incidents.map(FeedRecord.incident), failAfter: failAfter, verdict: verdict)
    }

    init(records: [FeedRecord], failAfter: Int? = nil, verdict: ResponseVerdict = .complete) {
        self.records = records
        self.failAfter = failAfter
        self.verdict = verdict
    }

    struct Boom: Error {}

    func callAsFunction(_ sink: any PollSink) throws -> ResponseVerdict {
        for (index, record) in records.enumerated() {
            if let failAfter, index == failAfter { throw Boom() }
            switch record {
            case .incident(let incident): try sink.upsert(incident)
            case .rejected(let rejected): try sink.reject(rejected)
            }
        }
        return verdict
    }
}

/// One poll through the port, as the use case runs it.
@discardableResult
func poll(_ store: any IngestStore, _ records: [FeedRecord], at startedAt: UTCInstant, source: String = "gits",
          origin: FeedOrigin = .live, observedAt: UTCInstant? = nil, verdict: ResponseVerdict = .complete,
          dryRun: Bool = false) throws -> IngestRun {
    try store.ingest(PollContext(source: source, startedAt: startedAt, observedAt: observedAt, origin: origin, dryRun: dryRun),
                     ListProducer(records: records, verdict: verdict).callAsFunction)
}

/// One live poll of incidents, returning its counts.
func counts(_ store: any IngestStore, _ incidents: [Incident], at startedAt: UTCInstant, source: String = "gits",
            dryRun: Bool = false) throws -> IngestCounts {
    try poll(store, incidents.map(FeedRecord.incident), at: startedAt, source: source, dryRun: dryRun).counts
}

func live(_ ids: String...) -> [FeedRecord] { ids.map { .incident(incident($0)) } }

func list(_ store: any IncidentReader, _ query: IncidentQuery) throws -> [StoredIncident] {
    try QueryIncidents(reader: store).list(query)
}

/// Every stored incident, by source and id.
func allRows(_ store: any IncidentReader) throws -> [StoredIncident] {
    try list(store, IncidentQuery(now: t2, order: .source))
}

func clearedIDs(_ store: any IncidentReader) throws -> [String] {
    try allRows(store).filter { $0.clearedAt != nil }.map(\.incident.externalID)
}

/// The run log, oldest first.
func runLog(_ store: any IncidentReader) throws -> [IngestRun] {
    try store.runs(source: nil, limit: 1000, failuresFirst: false).reversed()
}

/// The first value of `sql` as an integer; nil when there is none.
func integer(_ store: any TestStore, _ sql: String) throws -> Int? {
    (try store.column(sql).first ?? nil).flatMap { Int($0) }
}

func revisionCount(_ store: any TestStore) throws -> Int? {
    try integer(store, "SELECT count(*) FROM incident_revisions")
}

extension PostgresMigrator {
    /// The bundled migrations but those `left` names (a database of an earlier version, for a
    /// migration's test on existing data).
    static func bundled(without left: (String) -> Bool) throws -> PostgresMigrator {
        PostgresMigrator(migrations: try bundled().migrations.filter { !left($0.name) })
    }
}
