import Foundation
import IncidentCore
@testable import IncidentPostgres
import Testing

/// The transition log and the change feed (docs/analyst.md, "History and changes"), the same on every
/// store: each poll's entries, exactly, for polls of every kind.
@Suite("Transition log (every store)")
struct TransitionLogTests {
    static func at(_ text: String) -> UTCInstant { TimeOrderTests.at(text) }

    /// One poll at `time` (HH:MM) of `records`.
    @discardableResult
    static func poll(_ store: any TestStore, _ records: [FeedRecord], _ time: String, verdict: ResponseVerdict = .complete,
                     origin: FeedOrigin = .live, dryRun: Bool = false) throws -> IngestRun {
        try store.ingestInTimeOrder(PollContext(source: "gits", startedAt: at(time), origin: origin, dryRun: dryRun)) { sink in
            try ListProducer(records: records, verdict: verdict)(sink)
        }
    }

    /// The log as `kind id HH:MM [fields] run@HH:MM`, in cursor order (runs named by their
    /// start, which both stores share; their ids need not be).
    static func log(_ store: any TestStore, after cursor: Int64 = 0) throws -> [String] {
        try store.changes(after: cursor, limit: 1000).map { change in
            let t = change.transition
            var line = "\(t.kind.rawValue) \(t.externalID ?? "-") \(hhmm(t.at))"
            if !t.fields.isEmpty { line += " " + t.fields.joined(separator: ",") }
            return line + " run@" + (change.run.map { hhmm($0.startedAt) } ?? "none")
        }
    }

    static func expectLog(_ store: any TestStore, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let logged = try log(store)
        #expect(logged == expected, sourceLocation: sourceLocation)
    }

    static func hhmm(_ instant: UTCInstant) -> String { String(instant.rfc3339.dropFirst(11).prefix(5)) }

    static func record(_ id: String?, _ reason: String = "unreadable") -> FeedRecord {
        .rejected(RejectedRecord(externalID: id, position: "record", reason: reason))
    }

    /// Live polls of every kind, and a dry run and a failed poll that log nothing.
    func livePollsScenario(_ store: any TestStore) throws {
        try Self.poll(store, live("A", "B", "C"), "10:00")
        try Self.poll(store, [.incident(incident("A", description: "[사고] 2차로")), .incident(incident("B", ended: Self.at("10:04"))),
                              Self.record("C"), .incident(incident("D"))], "10:05")
        try Self.poll(store, [.incident(incident("A", description: "[사고] 2차로"))], "10:10", verdict: ResponseVerdict(incompleteBecause: ["the page said more"]))
        try Self.poll(store, [.incident(incident("A", description: "[사고] 2차로")), .incident(incident("D"))], "10:15")
        try Self.poll(store, [.incident(incident("A", description: "[사고] 2차로")), .incident(incident("B", ended: Self.at("10:04"))),
                              .incident(incident("D")), Self.record(nil)], "10:20")
        let before = try store.lastCursor()
        try Self.poll(store, live("E"), "10:25", dryRun: true)
        #expect(throws: ListProducer.Boom.self) {
            try store.ingest(PollContext(source: "gits", startedAt: Self.at("10:30")),
                             ListProducer(incidents: [incident("F"), incident("G")], failAfter: 1).callAsFunction)
        }
        #expect(try store.lastCursor() == before)
    }

    @Test("live polls: appeared, revised with its fields, ended, quarantined, cleared only by a complete poll, reopened; a dry run or a failed poll logs nothing",
          arguments: StoreKind.allCases)
    func livePolls(kind: StoreKind) throws {
        try withStore(kind) { store in
            try livePollsScenario(store)
            try Self.expectLog(store, [
                "appeared A 10:00 run@10:00",
                "appeared B 10:00 run@10:00",
                "appeared C 10:00 run@10:00",
                "quarantined C 10:05 run@10:05",
                "revised A 10:05 description run@10:05",
                "ended B 10:05 ended_at run@10:05",
                "appeared D 10:05 run@10:05",
                "cleared B 10:15 run@10:15",
                "cleared C 10:15 run@10:15",
                "quarantined - 10:20 run@10:20",
                "reopened B 10:20 run@10:20",
            ])
            // The feed from a cursor: the rest, each with the incident as it is now and its run.
            let all = try store.changes(after: 0, limit: 1000)
            #expect(all.map(\.transition.cursor) == Array(1...11).map(Int64.init))
            let rest = try store.changes(after: 9, limit: 1)
            #expect(rest.count == 1)
            #expect(rest.first?.transition.kind == .quarantined)
            #expect(rest.first?.incident == nil)
            #expect(rest.first?.run?.status == .incomplete)
            let reopened = try #require(try store.changes(after: 10, limit: 5).first)
            #expect(reopened.incident?.incident.externalID == "B")
            #expect(reopened.incident?.clearedAt == nil)
            #expect(reopened.incident?.incident.endedAt == Self.at("10:04"))
            #expect(try store.changes(after: 11, limit: 5).isEmpty)
            #expect(try store.lastCursor() == 11)
        }
    }

    @Test("an answer of several pages clears at the previous complete poll's time, with the run that cleared",
          arguments: StoreKind.allCases)
    func pagedClears(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, live("A", "B"), "10:00")
            try Self.poll(store, live("A"), "10:05", verdict: ResponseVerdict(pages: 2))
            try Self.poll(store, live("A"), "10:10", verdict: ResponseVerdict(pages: 2))
            try Self.expectLog(store, [
                "appeared A 10:00 run@10:00",
                "appeared B 10:00 run@10:00",
                "cleared B 10:05 run@10:10",
            ])
        }
    }

    @Test("a stale document and an older replay add history at their own time; the present is not rewritten",
          arguments: StoreKind.allCases)
    func history(kind: StoreKind) throws {
        try withStore(kind) { store in
            try TimeOrderTests.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C"))],
                                    published: "10:00", fetched: "10:01")
            try TimeOrderTests.poll(store, [.incident(incident("A", description: "new")), .incident(incident("C"))],
                                    published: "10:05", fetched: "10:06")
            // A replica serves the 09:55 copy at 10:11: C and B were listed at 09:55, D too.
            let stale = try TimeOrderTests.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")),
                                                        .incident(incident("C")), .incident(incident("D"))],
                                                published: "09:55", fetched: "10:11")
            #expect(stale.status == .stale)
            // A replayed file of 10:03 (said complete): A, B and C were listed then; nothing new.
            try Self.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C"))], "10:03",
                          origin: .file(path: "/data/10-03.json", complete: true))
            try Self.expectLog(store, [
                "appeared A 10:01 run@10:01",
                "appeared B 10:01 run@10:01",
                "appeared C 10:01 run@10:01",
                "revised A 10:06 description run@10:06",
                "cleared B 10:06 run@10:06",
                "appeared A 09:55 run@10:11",
                "appeared B 09:55 run@10:11",
                "appeared C 09:55 run@10:11",
                "appeared D 09:55 run@10:11",
                "cleared D 10:01 run@10:11",
            ])
            // B is still cleared; D, listed only at 09:55, is cleared as of the complete poll of
            // 10:01, the first after 09:55, which did not list it.
            #expect(try clearedIDs(store) == ["B", "D"])
        }
    }

    @Test("a replay into a store with no incident yet, older than a complete live poll that listed none: its appearances at its own time, cleared as of that poll",
          arguments: StoreKind.allCases)
    func replayIntoEmptyStore(kind: StoreKind) throws {
        try withStore(kind) { store in
            // A record set aside logs an entry without an incident: the store still has no history.
            try Self.poll(store, [Self.record("Z")], "10:05")
            try Self.poll(store, [.incident(incident("B")), .incident(incident("A")), .incident(incident("B")), Self.record("C")], "10:01",
                          origin: .file(path: "/data/10-01.json", complete: true))
            try Self.expectLog(store, [
                "quarantined Z 10:05 run@10:05",
                "quarantined C 10:01 run@10:01",
                "appeared B 10:01 run@10:01",
                "appeared A 10:01 run@10:01",
                "cleared B 10:05 run@10:01",
                "cleared A 10:05 run@10:01",
            ])
            #expect(try clearedIDs(store) == ["A", "B"])
            #expect(try ListedIntervalTests.intervals(store, kind: kind) == ["B 10:01–10:05", "A 10:01–10:05"])
        }
    }

    @Test("a replay that lists a cleared incident between its clear and its reopening logs that reopening at its own time",
          arguments: StoreKind.allCases)
    func reopenedInThePast(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, live("A", "B"), "10:00")
            try Self.poll(store, live("A"), "10:10")
            try Self.poll(store, live("A", "B"), "10:20")
            try Self.poll(store, live("A", "B"), "10:15", origin: .file(path: "/data/10-15.json", complete: false))
            try Self.expectLog(store, [
                "appeared A 10:00 run@10:00",
                "appeared B 10:00 run@10:00",
                "cleared B 10:10 run@10:10",
                "reopened B 10:20 run@10:20",
                "reopened B 10:15 run@10:15",
            ])
        }
    }

    /// The log the migration (SQLite 0011, PostgreSQL 0008) rebuilds for the store's data, as
    /// it would for a database of the previous version: the log and its migration removed, then
    /// migrated again.
    static func rebuiltLog(_ store: any TestStore, kind: StoreKind) throws -> [String] {
        let last = kind == .sqlite ? 11 : 8
        _ = try store.column("DELETE FROM schema_migrations WHERE version = \(last) RETURNING version")
        // On PostgreSQL the index of listed intervals (0011) refers to the log: its reference goes with it.
        _ = try store.column(kind == .postgres ? "DROP TABLE incident_transitions CASCADE" : "DROP TABLE incident_transitions")
        if kind == .postgres { _ = try store.column("DROP TABLE change_feed") }
        #expect(try store.migrate().count == 1)
        return try log(store)
    }

    @Test("the migration rebuilds the log of live polls exactly, in time order (the order within one poll's phase aside)",
          arguments: StoreKind.allCases)
    func rebuildLive(kind: StoreKind) throws {
        try withStore(kind) { store in
            try livePollsScenario(store)
            let logged = try Self.log(store)
            let rebuilt = try Self.rebuiltLog(store, kind: kind)
            #expect(rebuilt == logged)
            #expect(try store.lastCursor() == Int64(logged.count))
            // Polls after the migration continue the cursor.
            try Self.poll(store, live("A", "B", "D", "E"), "10:40")
            #expect(try store.changes(after: Int64(logged.count), limit: 10).map(\.transition.kind) == [.revised, .revised, .appeared])
        }
    }

    @Test("what the rebuild cannot know: a paged clear's run, and appearances a stale document moved earlier",
          arguments: StoreKind.allCases)
    func rebuildLimits(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, live("A", "B"), "10:00")
            try Self.poll(store, live("A"), "10:05", verdict: ResponseVerdict(pages: 2))
            try Self.poll(store, live("A"), "10:10", verdict: ResponseVerdict(pages: 2))
            try TimeOrderTests.poll(store, [.incident(incident("A")), .incident(incident("C"))], published: "10:15", fetched: "10:15")
            try TimeOrderTests.poll(store, [.incident(incident("A")), .incident(incident("C"))], published: "09:55", fetched: "10:20")
            let logged = try Self.log(store)
            #expect(logged == [
                "appeared A 10:00 run@10:00", "appeared B 10:00 run@10:00", "cleared B 10:05 run@10:10",
                "appeared C 10:15 run@10:15", "appeared A 09:55 run@10:20", "appeared C 09:55 run@10:20",
                "cleared C 10:00 run@10:20",
            ])
            let rebuilt = try Self.rebuiltLog(store, kind: kind)
            #expect(rebuilt == [
                "appeared A 09:55 run@10:00", "appeared C 09:55 run@10:15", "appeared B 10:00 run@10:00", "cleared B 10:05 run@10:05",
            ])
        }
    }
}

/// The index of the intervals in which each incident was listed as active (SQLite 0013,
/// PostgreSQL 0011), which `list --at` and the server's `datetime` instant read: kept by each
/// poll as the migration builds it, for polls of every kind.
@Suite("Listed intervals (every store)")
struct ListedIntervalTests {
    /// The index as `ID HH:MM–HH:MM` (or `–open`), in the log's order.
    static func intervals(_ store: any TestStore, kind: StoreKind) throws -> [String] {
        let sql = kind == .sqlite
            ? """
              SELECT line FROM (
                  SELECT l.id, i.external_id || ' ' || strftime('%H:%M', l.listed_from + 1577836800, 'unixepoch') || '–'
                         || strftime('%H:%M', l.listed_until + 1577836800, 'unixepoch') AS line
                  FROM incident_listed_intervals l JOIN incidents i ON i.id = l.incident_id
                  UNION ALL
                  SELECT p.id, i.external_id || ' ' || strftime('%H:%M', p.listed_from + 1577836800, 'unixepoch') || '–open'
                  FROM incident_listed_open p JOIN incidents i ON i.id = p.incident_id)
              ORDER BY id
              """
            : """
              SELECT i.external_id || ' ' || to_char(lower(l.listed) AT TIME ZONE 'UTC', 'HH24:MI') || '–'
                     || coalesce(to_char(upper(l.listed) AT TIME ZONE 'UTC', 'HH24:MI'), 'open')
              FROM incident_listed_intervals l JOIN incidents i ON i.id = l.incident_id ORDER BY l.opening
              """
        return try store.column(sql).map { $0 ?? "NULL" }
    }

    /// The stale document and the replay of TransitionLogTests' history (appearances at 09:55, the
    /// clear of D as of the first complete poll after them, 10:01), then a live poll that reopens B.
    static func polls(_ store: any TestStore) throws {
        try TimeOrderTests.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C"))],
                                published: "10:00", fetched: "10:01")
        try TimeOrderTests.poll(store, [.incident(incident("A", description: "new")), .incident(incident("C"))], published: "10:05", fetched: "10:06")
        try TimeOrderTests.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C")),
                                        .incident(incident("D"))], published: "09:55", fetched: "10:11")
        try TransitionLogTests.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C"))],
                                    "10:03", origin: .file(path: "/data/10-03.json", complete: true))
        try TransitionLogTests.poll(store, [.incident(incident("A", description: "new")), .incident(incident("B")), .incident(incident("C"))], "10:20")
    }

    @Test("each poll's intervals, hand-computed: appearances, clears (a replay's in the past too), reopenings; the migration builds the same; list --at agrees; prune removes an incident's",
          arguments: StoreKind.allCases)
    func keptByPolls(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.polls(store)
            // Each appearance or reopening, to the first clear of its incident after it.
            let expected = ["A 10:01–open", "B 10:01–10:06", "C 10:01–open", "A 09:55–open", "B 09:55–10:06", "C 09:55–open",
                            "D 09:55–10:01", "B 10:20–open"]
            #expect(try Self.intervals(store, kind: kind) == expected)
            func listed(_ time: String) throws -> [String] {
                var query = IncidentQuery(now: TransitionLogTests.at("10:30"), order: .source)
                query.listedAt = TransitionLogTests.at(time)
                return try list(store, query).map(\.incident.externalID)
            }
            #expect(try listed("09:54") == [])
            #expect(try listed("09:58") == ["A", "B", "C", "D"])
            #expect(try listed("10:03") == ["A", "B", "C"], "D cleared as of 10:01: that complete poll did not list it")
            #expect(try listed("10:06") == ["A", "C"])
            #expect(try listed("10:20") == ["A", "B", "C"])

            // A database of the previous version: the index and its migration removed, then migrated again.
            _ = try store.column("DELETE FROM schema_migrations WHERE name LIKE '%listed_intervals.sql' RETURNING version")
            _ = try store.column("DROP TABLE incident_listed_intervals")
            if kind == .sqlite { _ = try store.column("DROP TABLE incident_listed_open") }
            #expect(try store.migrate().count == 1)
            #expect(try Self.intervals(store, kind: kind) == expected)

            // D was cleared at 10:01: pruning it removes its interval, and nothing else.
            #expect(try store.prune(before: TransitionLogTests.at("10:10")).incidents == 1)
            #expect(try Self.intervals(store, kind: kind) == expected.filter { !$0.hasPrefix("D ") })
            for table in kind == .sqlite ? ["incident_listed_intervals", "incident_listed_open"] : ["incident_listed_intervals"] {
                #expect(try store.column("SELECT count(*) FROM \(table) WHERE incident_id NOT IN (SELECT id FROM incidents)") == ["0"])
            }
        }
    }
}

/// The change feed's cursor on PostgreSQL, where several hosts commit polls concurrently.
@Suite("Change feed cursor under concurrent commits (PostgreSQL)")
struct ChangeFeedOrderTests {
    @Test("two polls commit out of order (the one that started first commits last): a reader polling in between misses neither")
    func outOfOrderCommits() throws {
        try TestServer.withDatabase { name in
            let location = try TestServer.location(database: name)
            let hostA = try PostgresStore(location, clock: .fixed(t0))
            let hostB = try PostgresStore(location, clock: .fixed(t0))
            let reader = try PostgresStore(location, clock: .fixed(t0), access: .read)
            try poll(hostB, live("X"), at: t0, source: "b")
            var cursor = try reader.lastCursor()
            #expect(cursor == 1)

            // Host A starts its poll of source a (its run id is drawn now) and stalls while
            // reading the response; host B polls source b from start to commit meanwhile.
            let started = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0), done = DispatchGroup()
            /// Written by host A's thread before `done.leave()`, read after `done.wait()`.
            final class Outcome: @unchecked Sendable { var run: IngestRun? }
            let runA = Outcome()
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                runA.run = try? hostA.ingest(PollContext(source: "a", startedAt: t1)) { sink in
                    started.signal()
                    resume.wait()
                    return try ListProducer(incidents: [incident("A1", source: "a"), incident("A2", source: "a")])(sink)
                }
            }
            started.wait()
            let runB = try poll(hostB, live("X", "Y"), at: t1, source: "b")

            // The reader polls between the two commits: B's change only.
            var seen = try reader.changes(after: cursor, limit: 100)
            #expect(seen.map { "\($0.transition.kind) \($0.transition.externalID ?? "-")" } == ["appeared Y"])
            cursor = try #require(seen.last?.transition.cursor)

            resume.signal()
            done.wait()
            let a = try #require(runA.run)
            // A number drawn inside the transaction (the run id) is not in commit order…
            #expect(try #require(a.id) < (try #require(runB.id)))
            // …the cursor is: reading after the last one seen yields A's changes, once each.
            seen = try reader.changes(after: cursor, limit: 100)
            #expect(seen.map { "\($0.transition.kind) \($0.transition.externalID ?? "-")" } == ["appeared A1", "appeared A2"])
            #expect(seen.map(\.transition.cursor) == [cursor + 1, cursor + 2])
            #expect(try reader.changes(after: cursor + 2, limit: 100).isEmpty)
        }
    }
}
