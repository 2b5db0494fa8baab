import Foundation
import IncidentCore
import IncidentFeeds
import IncidentSQLite
import TestSupport
import Testing

/// DATEX II publications replayed into a real SQLite store (`:memory:`) as `ingest --file
/// --complete` does: snapshots clear what they no longer list, push updates never do, and
/// records set aside are kept with their reason.
@Suite("DATEX II into the store")
struct DATEX2StoreTests {
    static let t0 = UTCInstant(rfc3339: "2026-04-02T12:05:00Z")!
    static let container = TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml")
    static let push = TestPaths.sharedFeed("datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml")

    static func ingest(_ store: SQLiteStore, _ file: URL, at seconds: Int64) async throws -> IngestRun {
        let feed = try ProviderRegistry.fileFeed(source: "ndw", provider: "datex2", file: file, complete: true)
        let clock = UTCClock.fixed(t0.adding(seconds: seconds))
        return await IngestIncidents(store: store, clock: clock, describe: { String(describing: $0) })(feed, observedAt: t0.adding(seconds: seconds))
    }

    static func rows(_ store: SQLiteStore) throws -> [StoredIncident] {
        var rows: [StoredIncident] = []
        try store.forEachIncident(matching: IncidentQuery(now: t0.adding(seconds: 400_000), order: .source)) { rows.append($0) }
        return rows
    }

    @Test("a v3 stateful push stores its record and clears nothing; the next snapshot clears what it no longer lists")
    func pushDoesNotClear() async throws {
        let store = try SQLiteStore(path: ":memory:", clock: .fixed(Self.t0))
        let snapshot = try await Self.ingest(store, Self.container, at: 0)
        #expect(snapshot.status == .succeeded)
        #expect(snapshot.counts == IngestCounts(fetched: 20, inserted: 20))

        // The push was published on 2026-04-05 at 14:01:29Z; replayed as fetched at 14:05.
        let push = try await Self.ingest(store, Self.push, at: 266_400)
        #expect(push.status == .incomplete)
        #expect(push.counts == IngestCounts(fetched: 1, inserted: 1))
        #expect(push.warnings == ["the message is a push update (codedExchangeProtocol statefulPush): it lists only the situations that changed, so it clears nothing"])
        var rows = try Self.rows(store)
        #expect(rows.count == 21)
        #expect(rows.allSatisfy { $0.clearedAt == nil })

        // The same snapshot without its last situation: that one and the pushed one are cleared.
        let text = try String(contentsOf: Self.container, encoding: .utf8)
        let last = try #require(text.range(of: "<sit:situation id=\"BMS01_NLHIL002020472700211_114563562\">"))
        let end = try #require(text.range(of: "</sit:situation>", range: last.upperBound..<text.endIndex))
        // Published after the push (an older snapshot would be stored as history only).
        let shorter = text.replacingCharacters(in: last.lowerBound..<end.upperBound, with: "")
            .replacingOccurrences(of: "2026-04-02T12:03:00.001346644Z</com:publicationTime>", with: "2026-04-05T14:10:00Z</com:publicationTime>")
        let file = try TestPaths.temporaryDirectory("datex2").appendingPathComponent("snapshot19.xml")
        try shorter.write(to: file, atomically: true, encoding: .utf8)
        let next = try await Self.ingest(store, file, at: 267_000)
        #expect(next.status == .succeeded)
        // Every opening of the snapshot was over by its new publication time: each one ended.
        #expect(next.counts == IngestCounts(fetched: 19, updated: 19, cleared: 2))
        rows = try Self.rows(store)
        #expect(rows.filter { $0.clearedAt != nil }.map(\.incident.externalID).sorted() == [
            "BMS01_NLHIL002020472700211_114563562/BMS01_NLHIL002020472700211_114563562_01",
            "BMS01_NLSPD002020468900036_120601779/BMS01_NLSPD002020468900036_120601779_01",
        ])
    }

    @Test("records set aside are kept with their reason; one without an id makes the poll incomplete")
    func rejectedRecords() async throws {
        let store = try SQLiteStore(path: ":memory:", clock: .fixed(Self.t0))
        let run = try await Self.ingest(store, TestPaths.fixture("datex2/v3_records_with_problems.xml"), at: 0)
        #expect(run.status == .incomplete)
        #expect(run.counts == IngestCounts(fetched: 6, inserted: 2, rejected: 4))
        #expect(run.warnings == ["1 record(s) set aside had no readable id, so the response may not list every active incident"])
        let kept = try store.rejections(runID: try #require(run.id))
        #expect(kept.map(\.record.externalID) == ["S2/S2_01", "S2/S2_02", nil, "S2/S2_04"])
        #expect(kept.map(\.record.reason)[1] == "has overallStartTime '2026-04-02 25:00', not an xs:dateTime")
        #expect(try Self.rows(store).map(\.incident.externalID) == ["S1/S1_01", "S3/S3_01"])
    }
}
