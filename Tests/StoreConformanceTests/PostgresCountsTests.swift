import Dispatch
import Foundation
import IncidentCore
@testable import IncidentPostgres
@testable import IncidentSQLite
import Testing

/// PostgreSQL's `incident_counts` (0012), which `stats` reads instead of every incident: after
/// each writer (polls of every outcome, a dry run, a failed poll, prune, copy) they equal a
/// recount of the table, and polls of different sources never wait for each other's counts.
@Suite("PostgreSQL incident_counts equal a recount after every writer (issue 23)")
struct PostgresCountsTests {
    /// The stored counts, `source dimension key incidents` in key order.
    static func stored(_ store: PostgresStore) throws -> [String] {
        try store.column("""
            SELECT source || ' ' || dimension || ' ' || key || ' ' || incidents FROM incident_counts ORDER BY source, dimension, key
            """).map { $0 ?? "NULL" }
    }

    /// The counts of the rows in `incidents` now, in the same form.
    static func recounted(_ store: PostgresStore) throws -> [String] {
        try store.column("""
            SELECT source || ' ' || dimension || ' ' || key || ' ' || sum(incidents)
            FROM (\(PostgresCounts.keys(of: "incidents x"))) c GROUP BY source, dimension, key ORDER BY source, dimension, key
            """).map { $0 ?? "NULL" }
    }

    static func incident(_ id: String, source: String = "gits", category: IncidentCategory = .accident, road: String? = "경부고속도로",
                         start: String? = "2023-03-21T05:13:00Z", end: String? = nil, validity: IncidentValidity? = nil) -> FeedRecord {
        var value = StoreConformanceTests.incident(id, source: source, ended: end.flatMap(UTCInstant.init(rfc3339:)))
        (value.category, value.road, value.startedAt, value.validity) = (category, road, start.flatMap(UTCInstant.init(rfc3339:)), validity)
        return .incident(value)
    }

    /// Polls of every outcome, each checked against a recount: new, unchanged, changed (every
    /// counted key), repeated, set aside, cleared, reopened, an older replay, a stale document,
    /// an answer of two pages, a dry run and a failed poll; then a prune.
    @Test("polls of every outcome and a prune keep the counts equal to a recount")
    func writers() throws {
        try withStore(.postgres) { any in
            let store = try #require(any as? PostgresStore)
            func check(_ step: String) throws {
                let stored = try Self.stored(store)
                #expect(stored == (try Self.recounted(store)), "\(step)")
                #expect(!stored.isEmpty && !stored.contains { $0.hasSuffix(" 0") || $0.contains(" -") }, "\(step): \(stored)")
            }
            try poll(store, [Self.incident("E0"), Self.incident("E1", road: nil), Self.incident("E2", start: nil),
                             Self.incident("E3", validity: .planned)], at: t0)
            try poll(store, [Self.incident("X0", source: "its", category: .roadwork)], at: t0, source: "its")
            try check("new")
            #expect(try Self.stored(store).filter { $0.hasPrefix("gits listed") || $0.hasPrefix("gits road") }
                    == ["gits listed  4", "gits road  1", "gits road 경부고속도로 3"])
            var records = [Self.incident("E0"), Self.incident("E0"), Self.incident("E1", category: .congestion, road: "강변북로", start: "2023-03-21T05:40:00Z"),
                           Self.incident("E4", end: "2023-03-21T07:00:00Z", validity: .suspended)]
            records.append(.rejected(RejectedRecord(externalID: "E3", position: "item 5", reason: "bad coordinate")))
            #expect(try poll(store, records, at: t1).counts.cleared == 1)  // E2
            try check("unchanged, changed, repeated, set aside, cleared")
            #expect(try Self.stored(store).filter { $0.hasPrefix("gits listed") } == ["gits listed  3", "gits listed with_end 1"])
            try poll(store, [Self.incident("E2", category: .weather, start: "2023-03-21T06:20:00Z"), Self.incident("E0"), Self.incident("E1"),
                             Self.incident("E3"), Self.incident("E4")], at: t2)
            try check("reopened")
            try poll(store, [Self.incident("E0", road: "옛 도로")], at: t0.adding(seconds: -600))
            try store.ingest(PollContext(source: "gits", startedAt: t2.adding(seconds: 60),
                                         stale: StaleDocument(publishedAt: t0, newestApplied: t2)),
                             ListProducer(records: [Self.incident("E0", category: .other)]).callAsFunction)
            try check("older replay, stale document")
            // E5, listed only by a file replayed as of t0 + 1 min, is history: cleared as of the
            // first complete live poll after that (t1), which did not list it.
            try poll(store, [Self.incident("E5", category: .closure)], at: t2.adding(seconds: 120),
                     origin: .file(path: "replay.xml", complete: false), observedAt: t0.adding(seconds: 60))
            #expect(try list(store, IncidentQuery(now: t2)).first { $0.incident.externalID == "E5" }?.clearedAt == t1)
            try check("a replay's incident cleared by the history rule")
            for minutes in [20, 30] {
                try poll(store, [Self.incident("E0"), Self.incident("E4")], at: t2.adding(seconds: Int64(minutes) * 60), verdict: ResponseVerdict(pages: 2))
            }
            try check("two pages, clearing")
            let before = try Self.stored(store)
            try poll(store, [Self.incident("E9", category: .closure)], at: t2.adding(seconds: 3600), dryRun: true)
            #expect(throws: ListProducer.Boom.self) {
                try store.ingest(PollContext(source: "gits", startedAt: t2.adding(seconds: 3600)),
                                 ListProducer(records: [Self.incident("E8"), Self.incident("E0", road: "다른 도로"), Self.incident("E7")], failAfter: 2).callAsFunction)
            }
            #expect(try Self.stored(store) == before)
            #expect(try store.prune(before: t2.adding(seconds: 7200)).incidents == 4)  // E1, E2, E3, E5
            try check("prune")
            // E0 and E4 remain, listed.
            #expect(try Self.stored(store).filter { $0.hasPrefix("gits ") }
                    == ["gits category accident 2", "gits listed  2", "gits road 경부고속도로 2", "gits start_minute 05:13 2"])
        }
    }

    @Test("copy counts what it copied")
    func copy() throws {
        try withStore(.sqlite) { sqlite in
            try poll(sqlite, [Self.incident("E0"), Self.incident("E1", road: nil, start: nil)], at: t0)
            try poll(sqlite, [Self.incident("E0", category: .roadwork)], at: t1)
            try withStore(.postgres) { any in
                let store = try #require(any as? PostgresStore)
                _ = try store.copy(from: sqlite)
                #expect(try Self.stored(store) == ["gits category accident 1", "gits category roadwork 1", "gits listed  1", "gits road  1",
                                                   "gits road 경부고속도로 1", "gits start_minute  1", "gits start_minute 05:13 1"])
                #expect(try Self.stored(store) == (try Self.recounted(store)))
                #expect(try store.statistics(matching: IncidentQuery(now: t1), utcOffsetSeconds: 0)
                        == (try sqlite.statistics(matching: IncidentQuery(now: t1), utcOffsetSeconds: 0)))
            }
        }
    }

    /// A poll of `its` holds its source's count keys from its counts statement to its commit;
    /// meanwhile a poll of `gits`, with incidents of the same category, road and start minute,
    /// commits without waiting (its keys are its own source's).
    @Test("a poll does not wait for the counts of another source's poll in progress")
    func concurrentSources() throws {
        try withStore(.postgres) { any in
            let store = try #require(any as? PostgresStore)
            try poll(store, [Self.incident("X0", source: "its"), Self.incident("X1", source: "its")], at: t0, source: "its")
            try poll(store, [Self.incident("E0")], at: t0)
            let holder = try Connection(location: store.location, readOnly: false)
            try holder.execute("BEGIN; SELECT * FROM incident_counts WHERE source = 'its' FOR UPDATE", context: "a poll of its in progress")
            let done = DispatchSemaphore(value: 0)
            /// Written before `done` is signalled, read after it was waited for.
            final class Outcome: @unchecked Sendable { var result: Swift.Result<IngestCounts, any Error>? }
            let outcome = Outcome()
            DispatchQueue.global().async {
                outcome.result = Swift.Result { try poll(store, [Self.incident("E0"), Self.incident("E1")], at: t1).counts }
                done.signal()
            }
            let waited = done.wait(timeout: .now() + 20)
            try holder.execute("ROLLBACK", context: "the poll of its ends")
            if waited == .timedOut { done.wait() }
            #expect(waited == .success, "the poll of gits waited for the counts of its")
            #expect(try outcome.result?.get().inserted == 1)
        }
    }
}
