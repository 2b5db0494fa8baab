import Foundation
import IncidentCore
@testable import IncidentSQLite
import Testing

/// One poll through the port, as the use case runs it.
@discardableResult
func poll(_ store: SQLiteStore, _ records: [FeedRecord], at startedAt: UTCInstant, source: String = "gits",
          origin: FeedOrigin = .live, observedAt: UTCInstant? = nil, verdict: ResponseVerdict = .complete) throws -> IngestRun {
    try store.ingest(PollContext(source: source, startedAt: startedAt, observedAt: observedAt, origin: origin),
                     ListProducer(records: records, verdict: verdict).callAsFunction)
}

func live(_ ids: String...) -> [FeedRecord] { ids.map { .incident(incident($0)) } }

func clearedIDs(_ store: SQLiteStore) throws -> [String] {
    try allRows(store).filter { $0.clearedAt != nil }.map(\.incident.externalID)
}

@Suite("A poll clears only when complete; records set aside; duplicates; replays (issue 12)")
struct PollOutcomeTests {
    @Test("an incomplete verdict stores the records, clears nothing, and records why", arguments: [
        ["the response declares itemCount 5 but holds 2 itemList records"],
        ["the response has no success code", "page 2 of 3 failed"],
    ])
    func incompleteClearsNothing(reasons: [String]) throws {
        let store = try memoryStore()
        try poll(store, live("A", "B", "C"), at: t0)
        let run = try poll(store, live("A", "D"), at: t1, verdict: ResponseVerdict(incompleteBecause: reasons))
        #expect(run.status == .incomplete)
        #expect(run.counts == IngestCounts(fetched: 2, inserted: 1, unchanged: 1))
        #expect(run.warnings == reasons)
        #expect(try clearedIDs(store).isEmpty)
        #expect(try allRows(store).map(\.incident.externalID) == ["A", "B", "C", "D"])
        let logged = try #require(try store.runs(source: "gits", limit: 1, failuresFirst: false).first)
        #expect(logged.status == .incomplete)
        #expect(logged.warnings == reasons)
        // The next complete poll clears as usual.
        let next = try poll(store, live("A"), at: t2)
        #expect(next.status == .succeeded)
        #expect(try clearedIDs(store) == ["B", "C", "D"])
    }

    @Test("a rejected record is quarantined with its reason; its incident is not cleared; the rest is stored")
    func rejectedWithID() throws {
        let store = try memoryStore()
        try poll(store, live("A", "B"), at: t0)
        let bad = RejectedRecord(externalID: "B", position: "itemList at line 3", reason: "startDate '2023-13-45 99:00:00' is not a time",
                                 excerpt: "<itemList><regSeq>B</regSeq>…")
        let run = try poll(store, [.incident(incident("A")), .rejected(bad), .incident(incident("C"))], at: t1)
        #expect(run.status == .succeeded)
        #expect(run.counts == IngestCounts(fetched: 3, inserted: 1, unchanged: 1, rejected: 1))
        #expect(try clearedIDs(store).isEmpty)
        let runID = try #require(run.id)
        let kept = try store.rejections(runID: runID)
        #expect(kept.map(\.record) == [bad])
        #expect(kept.map(\.source) == ["gits"])
        #expect(kept.map(\.rejectedAt) == [t1])
        let b = try #require(try allRows(store).first { $0.incident.externalID == "B" })
        let history = try #require(try store.history(ofIncident: b.id))
        #expect(history.rejections.map(\.record.reason) == [bad.reason])
        #expect(history.current.lastSeenAt == t0)  // not "seen" by an unreadable record
    }

    @Test("a record without a readable id makes the poll incomplete: nothing is cleared", arguments: [1, 3])
    func rejectedWithoutID(count: Int) throws {
        let store = try memoryStore()
        try poll(store, live("A", "B"), at: t0)
        let unreadable = (0..<count).map { FeedRecord.rejected(RejectedRecord(externalID: nil, position: "items[\($0)]", reason: "has no id")) }
        let run = try poll(store, live("A") + unreadable, at: t1)
        #expect(run.status == .incomplete)
        #expect(run.counts.rejected == count)
        #expect(run.warnings == ["\(count) record(s) set aside had no readable id, so the response may not list every active incident"])
        #expect(try clearedIDs(store).isEmpty)
    }

    @Test("the same record listed twice is counted once and reported; with other content the first is kept", arguments: [false, true])
    func duplicates(changed: Bool) throws {
        let store = try memoryStore()
        let second = changed ? incident("A", description: "second") : incident("A")
        let run = try poll(store, [.incident(incident("A")), .incident(incident("B")), .incident(second)], at: t0)
        #expect(run.counts == IngestCounts(fetched: 3, inserted: 2, duplicates: 1))
        #expect(run.warnings == ["1 record(s) repeated an id listed earlier in the response; the first of each was kept"])
        #expect(run.status == .succeeded)
        // On a later poll, with the incident known and unchanged, the repeat is still one.
        let again = try poll(store, [.incident(incident("A")), .incident(second), .incident(incident("B"))], at: t1)
        #expect(again.counts == IngestCounts(fetched: 3, unchanged: 2, duplicates: 1))
        #expect(try allRows(store).map(\.incident.description) == [incident("A").description, incident("B").description])
        #expect(try revisionCount(store) == 0)
    }

    @Test("a file replay adds history, clears nothing, and stamps incidents at its observation time")
    func replayClearsNothing() throws {
        let store = try memoryStore()
        try poll(store, live("A", "B", "C"), at: t2)  // the live state: three incidents seen at t2
        let file = FeedOrigin.file(path: "/data/old.xml", complete: false)
        let run = try poll(store, live("A", "Z"), at: t2.adding(seconds: 60), origin: file, observedAt: t0)
        #expect(run.status == .succeeded)
        #expect(run.counts.cleared == 0)
        #expect(try clearedIDs(store).isEmpty)
        let rows = Dictionary(uniqueKeysWithValues: try allRows(store).map { ($0.incident.externalID, $0) })
        #expect(rows["Z"]?.firstSeenAt == t0)
        #expect(rows["Z"]?.lastSeenAt == t0)
        #expect(rows["A"]?.firstSeenAt == t0)  // seen earlier than we knew
        #expect(rows["A"]?.lastSeenAt == t2)   // never moved back
        let logged = try #require(try store.runs(source: "gits", limit: 1, failuresFirst: false).first)
        #expect(logged.origin == .file(path: "/data/old.xml", complete: false))
        #expect(logged.observedAt == t0)
    }

    @Test("an older replay never overwrites newer content or reopens a later clearing; a newer one does")
    func olderAndNewerReplays() throws {
        let store = try memoryStore()
        try poll(store, live("A", "B"), at: t1)
        try poll(store, live("A"), at: t2)  // B cleared at t2
        let old = try poll(store, [.incident(incident("A", description: "old text")), .incident(incident("B"))],
                           at: t2.adding(seconds: 10), origin: .file(path: "old.xml", complete: false), observedAt: t0)
        #expect(old.counts.updated == 0)
        #expect(old.counts.reopened == 0)
        #expect(old.warnings.contains { $0.hasPrefix("2 record(s) were older than the stored state") })
        let rows = try allRows(store)
        #expect(rows.map(\.incident.description) == [incident("A").description, incident("B").description])
        #expect(rows[1].clearedAt == t2)
        let newer = t2.adding(seconds: 600)
        let fresh = try poll(store, [.incident(incident("A", description: "new text"))], at: newer,
                             origin: .file(path: "new.xml", complete: true), observedAt: newer)
        #expect(fresh.counts.updated == 1)
        #expect(try allRows(store)[0].incident.description == "new text")
        #expect(try allRows(store)[0].lastSeenAt == newer)
    }

    @Test("a replay marked complete clears what it does not list, at its observation time")
    func completeReplayClears() throws {
        let store = try memoryStore()
        try poll(store, live("A", "B"), at: t0)
        let run = try poll(store, live("A"), at: t2, origin: .file(path: "f.xml", complete: true), observedAt: t1)
        #expect(run.counts.cleared == 1)
        #expect(try allRows(store)[1].clearedAt == t1)
    }

    @Test("--active agrees with StoredIncident.isActive, the one definition of active")
    func activeDefinedOnce() throws {
        let store = try memoryStore()
        try poll(store, [.incident(incident("ended-before", ended: t0)), .incident(incident("ends-later", ended: t2)),
                         .incident(incident("open")), .incident(incident("gone"))], at: t0)
        try poll(store, [.incident(incident("ended-before", ended: t0)), .incident(incident("ends-later", ended: t2)),
                         .incident(incident("open"))], at: t1)
        for now in [t0, t1, t2, t2.adding(seconds: 1)] {
            let all = try store.incidents(matching: IncidentQuery(now: now, order: .source))
            let active = try store.incidents(matching: IncidentQuery(now: now, activeOnly: true, order: .source))
            #expect(active.map(\.incident.externalID) == all.filter { $0.isActive(at: now) }.map(\.incident.externalID))
            let stats = try store.statistics(matching: IncidentQuery(now: now), utcOffsetSeconds: 0)
            #expect(stats.active == active.count)
        }
    }
}

@Suite("Unicode normalization of stored text and query terms (issue 12.9)")
struct NormalizationTests {
    static let nfdRoad = "경부고속도로".decomposedStringWithCanonicalMapping

    @Test("NFD text is stored as NFC; an NFD --road or --search term finds it; no term is an SQL error")
    func nfd() throws {
        #expect(Self.nfdRoad.unicodeScalars.count == 14)
        let store = try memoryStore()
        var decomposed = incident("A", description: "[사고] 잠실대교 후속 처리".decomposedStringWithCanonicalMapping)
        decomposed.road = Self.nfdRoad
        try poll(store, [.incident(decomposed.normalizedToNFC())], at: t0)
        let stored = try #require(try allRows(store).first)
        #expect(stored.incident.road == "경부고속도로")
        #expect(stored.incident.road?.unicodeScalars.count == 6)
        for term in [Self.nfdRoad, "경부", "부고속".decomposedStringWithCanonicalMapping] {
            var query = IncidentQuery(now: t1)
            query.roadContains = term
            #expect(try store.incidents(matching: query).count == 1, "road \(term)")
        }
        for term in ["잠실대교".decomposedStringWithCanonicalMapping, "후속", "처", "a", "😀", "👩‍👩‍👧", "\"", "*", "NEAR(", "a\"b", "잠실 후속"] {
            var query = IncidentQuery(now: t1)
            query.search = term
            let found = try store.incidents(matching: query).count
            #expect(found == (["😀", "👩‍👩‍👧", "\"", "*", "NEAR(", "a\"b", "a"].contains(term) ? 0 : 1), "search \(term)")
        }
    }
}

@Suite("One content-column list drives every statement (issue 11.2)")
struct ContentColumnListTests {
    /// The standard fields plus one more, `location_note`, stored from `Incident.location`.
    static let extended = IncidentField.content + [.text("location_note", \.location)]

    static func extendedStore() throws -> SQLiteStore {
        let extra = try Migration(name: "0099_location_note.sql", sql: """
            ALTER TABLE incidents ADD COLUMN location_note TEXT;
            ALTER TABLE incident_revisions ADD COLUMN location_note TEXT;
            """)
        let migrator = Migrator(migrations: try Migrator.bundled().migrations + [extra])
        return try SQLiteStore(path: ":memory:", clock: .fixed(t0), fields: extended, migrator: migrator)
    }

    @Test("a field added to the list is stored, archived in revisions, decoded, and part of the hash")
    func addedField() throws {
        let store = try Self.extendedStore()
        try poll(store, live("A"), at: t0)
        var changed = incident("A")
        changed.location = "(부산방향) 신갈JC → 수원IC"
        try poll(store, [.incident(changed)], at: t1)
        let values = try store.withDatabase { db -> [String?] in
            var out: [String?] = []
            try db.query("SELECT location_note FROM incidents UNION ALL SELECT location_note FROM incident_revisions") { out.append($0.string(at: 0)) }
            return out
        }
        #expect(values == [changed.location, incident("A").location])
        #expect(incident("A").contentHash(fields: Self.extended) != incident("A").contentHash())
        let hash = try store.withDatabase { try $0.scalarInt("SELECT content_hash FROM incidents") }
        #expect(hash == changed.contentHash(fields: Self.extended))
    }

    @Test("the default list hashes exactly as before the list existed (stored hashes stay valid)")
    func hashUnchanged() {
        // FNV-1a 64 of the fields as the pre-list code combined them, computed by hand here.
        var h = FNV1a64()
        let i = incident("A")
        for text in [i.category.rawValue, i.providerCategory, i.description, i.road, i.location, i.direction, i.restriction] {
            h.combine(field: text)
        }
        h.combine(bits: i.coordinate?.latitude.bitPattern)
        h.combine(bits: i.coordinate?.longitude.bitPattern)
        h.combine(field: i.linkID)
        for instant in [i.startedAt, i.confirmedAt, i.expectedEndAt, i.endedAt] {
            h.combine(bits: instant.map { UInt64(bitPattern: $0.secondsSince1970) })
        }
        #expect(i.contentHash() == h.signed)
    }
}

@Suite("Statements bind by name")
struct NamedParameterTests {
    @Test("SQL with an unnamed or numbered parameter is refused", arguments: ["SELECT ?", "SELECT ?1", "SELECT :a, ?2"])
    func unnamed(sql: String) throws {
        let db = try Database(path: ":memory:")
        #expect(throws: SQLiteError.self) { _ = try db.prepare(sql) }
    }

    @Test("every parameter must be bound, and only parameters")
    func arity() throws {
        let db = try Database(path: ":memory:")
        let statement = try db.prepare("SELECT :a + :b")
        #expect(throws: SQLiteError.self) { try statement.bind(["a": .integer(1)]) }
        #expect(throws: SQLiteError.self) { try statement.bind(["a": .integer(1), "b": .integer(2), "c": .integer(3)]) }
        statement.reset()
        try statement.bind([":a": .integer(1), "b": .integer(2)])
        #expect(try statement.step())
        #expect(statement.int(at: 0) == 3)
    }
}
