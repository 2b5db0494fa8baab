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
}

@Suite("Unicode normalization of stored text and query terms (issue 12.9)")
struct NormalizationTests {
    static let nfdRoad = "경부고속도로".decomposedStringWithCanonicalMapping

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

    @Test("one pass gives the values, the content hash and the hash without the added fields, each as computed apart")
    func onePass() {
        var added = incident("A")
        added.roadRef = "고속국도1호선"
        added.validity = .planned
        for i in [incident("A"), added] {
            let (values, hash, base) = i.contentValuesAndBaseHash()
            let apart = i.contentValues()
            #expect(values == apart.values && hash == apart.hash && base == i.hashWithoutAddedFields)
        }
        // The fields migrations added change the content hash, not the base hash.
        #expect(added.contentValuesAndBaseHash().baseHash == incident("A").contentValuesAndBaseHash().baseHash)
        #expect(added.contentValuesAndBaseHash().hash != incident("A").contentHash())
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
