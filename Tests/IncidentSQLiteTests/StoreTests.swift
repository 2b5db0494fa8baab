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
    @Test("a new incident is inserted with every field, first and last seen at the poll time")
    func insertsNew() throws {
        let store = try memoryStore()
        let counts = try store.ingest(source: "gits", startedAt: t0, dryRun: false, ListProducer(incidents: [incident("A")]).callAsFunction)
        #expect(counts == IngestCounts(fetched: 1, inserted: 1))
        let rows = try allRows(store)
        try #require(rows.count == 1)
        #expect(rows[0].incident == incident("A"))
        #expect(rows[0].firstSeenAt == t0)
        #expect(rows[0].lastSeenAt == t0)
        #expect(rows[0].revision == 1)
        #expect(rows[0].clearedAt == nil)
        #expect(try runs(store).map(\.status) == ["succeeded"])
    }

    @Test("re-ingesting the same feed keeps the rows, keeps first_seen_at and advances last_seen_at")
    func idempotentReingest() throws {
        let store = try memoryStore()
        let feed = ListProducer(incidents: [incident("A"), incident("B")])
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, feed.callAsFunction)
        let counts = try store.ingest(source: "gits", startedAt: t1, dryRun: false, feed.callAsFunction)
        #expect(counts == IngestCounts(fetched: 2, unchanged: 2))
        let rows = try allRows(store)
        #expect(rows.map(\.incident.externalID) == ["A", "B"])
        #expect(rows.allSatisfy { $0.firstSeenAt == t0 && $0.lastSeenAt == t1 && $0.revision == 1 })
        #expect(try revisionCount(store) == 0)
    }

    @Test("a changed incident is updated, its revision incremented and the old values archived")
    func changed() throws {
        let store = try memoryStore()
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, ListProducer(incidents: [incident("A")]).callAsFunction)
        let counts = try store.ingest(source: "gits", startedAt: t1, dryRun: false,
                                      ListProducer(incidents: [incident("A", description: "[사고] 2차로 추가 통제")]).callAsFunction)
        #expect(counts == IngestCounts(fetched: 1, updated: 1))
        let row = try #require(try allRows(store).first)
        #expect(row.incident.description == "[사고] 2차로 추가 통제")
        #expect(row.revision == 2)
        #expect(row.firstSeenAt == t0)
        let archived = try store.withDatabase { db -> (String?, Int?, String?) in
            let s = try db.prepare("SELECT description, revision, superseded_at FROM incident_revisions")
            try #require(try s.step())
            return (s.string(at: 0), s.int(at: 1), s.string(at: 2))
        }
        #expect(archived.0 == "[사고] 경부고속도로 사고")
        #expect(archived.1 == 1)
        #expect(archived.2 == t1.rfc3339)
    }

    @Test("a complete poll clears what it no longer lists; the reappearance reopens it with a revision")
    func clearedAndReopened() throws {
        let store = try memoryStore()
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false,
                             ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        let second = try store.ingest(source: "gits", startedAt: t1, dryRun: false, ListProducer(incidents: [incident("A")]).callAsFunction)
        #expect(second == IngestCounts(fetched: 1, unchanged: 1, cleared: 1))
        var rows = try allRows(store)
        #expect(rows[1].clearedAt == t1)
        #expect(rows[0].clearedAt == nil)
        #expect(try store.incidents(matching: IncidentQuery(now: t1, activeOnly: true)).map(\.incident.externalID) == ["A"])

        let third = try store.ingest(source: "gits", startedAt: t2, dryRun: false,
                                     ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        #expect(third == IngestCounts(fetched: 2, unchanged: 1, reopened: 1))
        rows = try allRows(store)
        #expect(rows[1].clearedAt == nil)
        #expect(rows[1].revision == 2)
        #expect(try revisionCount(store) == 1)
    }

    @Test("clearing is per source: another source's poll never clears this one's incidents")
    func clearingIsPerSource() throws {
        let store = try memoryStore()
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, ListProducer(incidents: [incident("A")]).callAsFunction)
        let other = try store.ingest(source: "its", startedAt: t1, dryRun: false,
                                     ListProducer(incidents: [incident("X", source: "its")]).callAsFunction)
        #expect(other.cleared == 0)
        #expect(try allRows(store).allSatisfy { $0.clearedAt == nil })
    }

    @Test("an error mid-poll rolls everything back and clears nothing")
    func rollbackOnError() throws {
        let store = try memoryStore()
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false,
                             ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        let before = try allRows(store)
        #expect(throws: ListProducer.Boom.self) {
            try store.ingest(source: "gits", startedAt: t1, dryRun: false,
                             ListProducer(incidents: [incident("A", description: "changed"), incident("C"), incident("D")],
                                          failAfter: 2).callAsFunction)
        }
        #expect(try allRows(store) == before)
        #expect(try revisionCount(store) == 0)
        #expect(try runs(store).map(\.status) == ["succeeded"])
        // The connection is usable again and the next complete poll works.
        let counts = try store.ingest(source: "gits", startedAt: t2, dryRun: false, ListProducer(incidents: [incident("A")]).callAsFunction)
        #expect(counts == IngestCounts(fetched: 1, unchanged: 1, cleared: 1))
    }

    @Test("a dry run counts what it would write and writes nothing")
    func dryRun() throws {
        let store = try memoryStore()
        let counts = try store.ingest(source: "gits", startedAt: t0, dryRun: true,
                                      ListProducer(incidents: [incident("A"), incident("B")]).callAsFunction)
        #expect(counts == IngestCounts(fetched: 2, inserted: 2))
        #expect(try allRows(store).isEmpty)
        #expect(try runs(store).isEmpty)
    }

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

    @Test("--active excludes incidents the provider says have ended")
    func activeExcludesEnded() throws {
        let store = try memoryStore()
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, ListProducer(incidents: [
            incident("past", ended: t0), incident("future", ended: t2.adding(seconds: 60)), incident("open"),
        ]).callAsFunction)
        let active = try store.incidents(matching: IncidentQuery(now: t1, activeOnly: true, order: .source))
        #expect(active.map(\.incident.externalID) == ["future", "open"])
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
    @Test("the same id twice with different content: the first occurrence wins, and later polls add no revisions")
    func firstWins() throws {
        let store = try memoryStore()
        let feed = ListProducer(incidents: [incident("A", description: "first"), incident("A", description: "second")])
        _ = try store.ingest(source: "gits", startedAt: t0, dryRun: false, feed.callAsFunction)
        _ = try store.ingest(source: "gits", startedAt: t1, dryRun: false, feed.callAsFunction)
        _ = try store.ingest(source: "gits", startedAt: t2, dryRun: false, feed.callAsFunction)
        let rows = try allRows(store)
        #expect(rows.count == 1)
        #expect(rows[0].incident.description == "first")
        #expect(rows[0].revision == 1)
        #expect(try revisionCount(store) == 0)
    }
}
