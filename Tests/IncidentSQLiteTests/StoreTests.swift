import IncidentCore
@testable import IncidentSQLite
import Testing

/// Feeds a fixed list of records to the store's sink, optionally failing after some, and
/// returns a fixed verdict.
struct ListProducer {
    var records: [FeedRecord]
    var failAfter: Int? = nil
    var verdict: ResponseVerdict = .complete

    init(incidents: [Incident], failAfter: Int? = nil, verdict: ResponseVerdict = .complete) {
        self.records = incidents.map(FeedRecord.incident)
        self.failAfter = failAfter
        self.verdict = verdict
    }

    init(records: [FeedRecord], verdict: ResponseVerdict = .complete) {
        self.records = records
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

extension SQLiteStore {
    /// One live poll of `source` at `startedAt` (the old test shape), returning its counts.
    func ingest(source: String, startedAt: UTCInstant, dryRun: Bool, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestCounts {
        try ingest(PollContext(source: source, startedAt: startedAt, dryRun: dryRun), produce).counts
    }

    /// Every stored incident, by source and id.
    func incidents(matching query: IncidentQuery) throws -> [StoredIncident] {
        try QueryIncidents(reader: self).list(query)
    }
}

func incident(_ id: String, source: String = "gits", description: String = "[사고] 경부고속도로 사고",
              ended: UTCInstant? = nil) -> Incident {
    Incident(source: source, externalID: id, category: .accident, providerCategory: "사고",
             description: description, road: "경부고속도로", location: "(서울방향) 수원IC → 신갈JC",
             restriction: "1차로", coordinate: Coordinate(latitude: 37.27, longitude: 127.05),
             linkID: "1040000103", startedAt: UTCInstant(rfc3339: "2023-03-21T05:13:00Z"), endedAt: ended)
}

let t0 = UTCInstant(rfc3339: "2023-03-21T06:00:00Z")!
let t1 = t0.adding(seconds: 300)
let t2 = t1.adding(seconds: 300)

func memoryStore() throws -> SQLiteStore {
    try SQLiteStore(path: ":memory:", clock: .fixed(t0))
}

func allRows(_ store: SQLiteStore) throws -> [StoredIncident] {
    try store.incidents(matching: IncidentQuery(now: t2, order: .source))
}

func runs(_ store: SQLiteStore) throws -> [(status: String, fetched: Int, error: String?)] {
    try store.withDatabase { db in
        let s = try db.prepare("SELECT status, fetched, error FROM ingest_runs ORDER BY id")
        var out: [(String, Int, String?)] = []
        while try s.step() { out.append((s.string(at: 0) ?? "", s.int(at: 1) ?? -1, s.string(at: 2))) }
        return out
    }
}

func revisionCount(_ store: SQLiteStore) throws -> Int64 {
    try store.withDatabase { try $0.scalarInt("SELECT count(*) FROM incident_revisions") ?? -1 }
}

@Suite("SQLite incident store (in-memory)")
struct StoreTests {
    @Test("failed runs are recorded with their error and change no incident")
    func failedRunRecorded() throws {
        let store = try memoryStore()
        try store.recordRun(IngestRun(source: "gits", startedAt: t0, finishedAt: t1, status: .failed,
                                      error: "GITS API error headerCd=22"))
        let recorded = try runs(store)
        #expect(recorded.count == 1)
        #expect(recorded[0].status == "failed")
        #expect(recorded[0].error == "GITS API error headerCd=22")
        #expect(try allRows(store).isEmpty)
    }

    @Test("NULL, not empty text, for absent values; coordinates and instants round-trip exactly")
    func roundTrip() throws {
        let store = try memoryStore()
        let sparse = Incident(source: "gits", externalID: "S", category: .other)
        let full = Incident(source: "gits", externalID: "F", category: .breakdown, providerCategory: "차량고장",
                            description: "d", road: "강변북로", location: "l", direction: "상행", restriction: "4차로",
                            coordinate: Coordinate(latitude: 37.52739696162846, longitude: 127.08203126),
                            linkID: "1040000103", startedAt: UTCInstant(rfc3339: "2023-03-21T05:13:00Z"),
                            confirmedAt: UTCInstant(rfc3339: "2023-03-21T05:14:00Z"),
                            expectedEndAt: UTCInstant(rfc3339: "2023-03-21T06:25:00Z"),
                            endedAt: UTCInstant(rfc3339: "2023-03-21T06:30:00Z"))
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, ListProducer(incidents: [sparse, full]).callAsFunction)
        let rows = try allRows(store)
        #expect(rows.map(\.incident) == [full, sparse])
        let nulls = try store.withDatabase {
            try $0.scalarInt("SELECT count(*) FROM incidents WHERE external_id = 'S' AND description IS NULL AND road IS NULL AND latitude IS NULL AND started_at IS NULL")
        }
        #expect(nulls == 1)
    }
}

@Suite("Duplicates within one response")
struct DuplicateTests {
}
