import IncidentCore
import Testing

/// The time order of a source's documents and answers of several pages (docs/providers.md, "When a poll
/// clears"), the same on every store: a document older than the newest applied is history
/// only; what a paged answer does not list is cleared only once a second complete poll agrees.
@Suite("Time order and paged answers (every store)")
struct TimeOrderTests {
    static func at(_ text: String) -> UTCInstant { UTCInstant(rfc3339: "2023-03-21T\(text):00Z")! }

    /// One poll through ``IngestStore/ingestInTimeOrder(_:_:)``, as the use case runs it, of a
    /// document published at `published` (HH:MM) and fetched at `fetched`.
    @discardableResult
    static func poll(_ store: any TestStore, _ records: [FeedRecord], published: String?, fetched: String,
                     pages: Int = 1, origin: FeedOrigin = .live) throws -> IngestRun {
        let verdict = ResponseVerdict(publishedAt: published.map(at), pages: pages)
        return try store.ingestInTimeOrder(PollContext(source: "gits", startedAt: at(fetched), origin: origin)) { sink in
            try ListProducer(records: records, verdict: verdict)(sink)
        }
    }

    static func state(_ store: any TestStore) throws -> [String: (description: String?, cleared: UTCInstant?, firstSeen: UTCInstant, lastSeen: UTCInstant)] {
        Dictionary(uniqueKeysWithValues: try allRows(store).map {
            ($0.incident.externalID, ($0.incident.description, $0.clearedAt, $0.firstSeenAt, $0.lastSeenAt))
        })
    }

    @Test("a live poll of an older document is stale: history at its own time; no overwrite, no reopening, no clearing",
          arguments: StoreKind.allCases)
    func staleLivePoll(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C"))],
                          published: "10:00", fetched: "10:01")
            let current = try Self.poll(store, [.incident(incident("A", description: "new")), .incident(incident("C"))],
                                        published: "10:05", fetched: "10:06")
            #expect(current.counts == IngestCounts(fetched: 2, updated: 1, unchanged: 1, cleared: 1))
            #expect(current.publishedAt == Self.at("10:05"))

            // A replica serves the 09:55 copy at 10:11.
            let stale = try Self.poll(store, [.incident(incident("A", description: "old")), .incident(incident("B")), .incident(incident("C")),
                                              .incident(incident("D"))], published: "09:55", fetched: "10:11")
            #expect(stale.status == .stale)
            #expect(stale.counts == IngestCounts(fetched: 4, inserted: 1, unchanged: 1))
            #expect(stale.publishedAt == Self.at("09:55"))
            #expect(stale.observedAt == Self.at("09:55"))
            #expect(stale.startedAt == Self.at("10:11"))
            #expect(stale.warnings == [
                "the document was published at 2023-03-21T09:55:00Z, before 2023-03-21T10:05:00Z, the newest already applied for this source (a cache or a replica served an older copy): it was stored as history at its own time and overwrote, reopened and cleared nothing",
                "2 record(s) were older than the stored state of their incident (observed 2023-03-21T09:55:00Z); only their first-seen time was used",
            ])
            var rows = try Self.state(store)
            #expect(rows["A"]?.description == "new")
            #expect(rows["A"]?.cleared == nil)
            #expect(rows["B"]?.cleared == Self.at("10:06"), "not reopened")
            #expect(rows["C"]?.cleared == nil)
            #expect(rows["C"]?.firstSeen == Self.at("09:55"))
            #expect(rows["C"]?.lastSeen == Self.at("10:06"))
            #expect(rows["D"]?.firstSeen == Self.at("09:55"))
            #expect(rows["D"]?.lastSeen == Self.at("09:55"))
            #expect(rows["D"]?.cleared == Self.at("10:01"), "listed only at 09:55: the complete poll of 10:01 did not list it")
            #expect(try revisionCount(store) == 1)
            #expect(try store.column("SELECT published_at FROM source_state").count == 1)
            let logged = try #require(try store.runs(source: "gits", limit: 1, failuresFirst: false).first)
            #expect(logged.status == .stale)
            #expect(logged.publishedAt == Self.at("09:55"))
            #expect(logged.warnings == stale.warnings)
            #expect(try store.sourceSummaries().first?.staleRuns == 1)

            // The next current document has nothing left to clear (D was, as of 10:01), and the stale count resets.
            let next = try Self.poll(store, [.incident(incident("A", description: "new")), .incident(incident("C"))],
                                     published: "10:10", fetched: "10:16")
            #expect(next.status == .succeeded)
            #expect(next.counts == IngestCounts(fetched: 2, unchanged: 2))
            rows = try Self.state(store)
            #expect(rows["D"]?.cleared == Self.at("10:01"))
            #expect(rows["B"]?.cleared == Self.at("10:06"))
            #expect(try store.sourceSummaries().first?.staleRuns == 0)
        }
    }

    @Test("an equal publication time is current (its changes apply); no publication time is judged by fetch time; a time far in the future is ignored",
          arguments: StoreKind.allCases)
    func equalMissingFuture(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, [.incident(incident("A")), .incident(incident("B"))], published: "10:05", fetched: "10:06")
            let equal = try Self.poll(store, [.incident(incident("A", description: "corrected"))], published: "10:05", fetched: "10:07")
            #expect(equal.status == .succeeded)
            #expect(equal.counts == IngestCounts(fetched: 1, updated: 1, cleared: 1))
            let none = try Self.poll(store, [.incident(incident("A", description: "again")), .incident(incident("B"))], published: nil, fetched: "10:08")
            #expect(none.status == .succeeded)
            #expect(none.counts == IngestCounts(fetched: 2, updated: 1, reopened: 1))
            #expect(none.publishedAt == nil)
            // 11:00 is more than 300 s after the fetch at 10:09: ignored, so 10:06 below is not stale against it.
            let future = try Self.poll(store, [.incident(incident("A", description: "again")), .incident(incident("B"))], published: "11:00", fetched: "10:09")
            #expect(future.status == .succeeded)
            #expect(future.warnings == ["the document says it was published at 2023-03-21T11:00:00Z, more than 300 s after it was fetched (2023-03-21T10:09:00Z); that time is ignored (is the publisher's clock wrong?)"])
            #expect(try store.column("SELECT published_at FROM source_state").compactMap { $0 }.count == 1)
            let later = try Self.poll(store, [.incident(incident("A", description: "again"))], published: "10:06", fetched: "10:10")
            #expect(later.status == .succeeded)
            #expect(later.counts.cleared == 1)
            let older = try Self.poll(store, [.incident(incident("A", description: "older")), .incident(incident("B"))], published: "10:04", fetched: "10:11")
            #expect(older.status == .stale)
            #expect(try Self.state(store)["A"]?.description == "again")
            #expect(try Self.state(store)["B"]?.cleared == Self.at("10:10"))
        }
    }

    @Test("a replayed file older than the newest applied is stale even with --complete: it clears nothing", arguments: StoreKind.allCases)
    func staleFile(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, [.incident(incident("A")), .incident(incident("B"))], published: "10:05", fetched: "10:06")
            let file = FeedOrigin.file(path: "/data/copy.json", complete: true)
            let run = try Self.poll(store, [.incident(incident("A", description: "older"))], published: "10:00", fetched: "10:20", origin: file)
            #expect(run.status == .stale)
            #expect(run.counts == IngestCounts(fetched: 1))
            #expect(try clearedIDs(store).isEmpty)
            #expect(try Self.state(store)["A"]?.description == incident("A").description)
            #expect(try Self.state(store)["A"]?.firstSeen == Self.at("10:00"))
        }
    }

    @Test("an answer of several pages clears only what the previous complete poll did not list either", arguments: StoreKind.allCases)
    func pagedConfirmation(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.poll(store, live("A", "B", "C"), published: nil, fetched: "10:00", pages: 2)
            // B is missing from a paged answer (it may have moved between pages): kept.
            let first = try Self.poll(store, live("A", "C"), published: nil, fetched: "10:05", pages: 2)
            #expect(first.status == .succeeded)
            #expect(first.counts.cleared == 0)
            #expect(first.warnings == ["1 incident(s) it does not list but the previous complete poll (2023-03-21T10:00:00Z) did stay active until the next complete poll confirms their absence: the answer came in 2 pages, and a list paged by offset can move between page requests"])
            #expect(try clearedIDs(store).isEmpty)
            // Missing again: cleared, at the first poll that missed it.
            let second = try Self.poll(store, live("A", "C"), published: nil, fetched: "10:10", pages: 2)
            #expect(second.counts.cleared == 1)
            #expect(second.warnings.isEmpty)
            #expect(try Self.state(store)["B"]?.cleared == Self.at("10:05"))
            // A single page clears at once.
            let single = try Self.poll(store, live("A"), published: nil, fetched: "10:15")
            #expect(single.counts.cleared == 1)
            #expect(try Self.state(store)["C"]?.cleared == Self.at("10:15"))
        }
    }
}
