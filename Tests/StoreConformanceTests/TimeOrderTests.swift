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
                     pages: Int = 1, origin: FeedOrigin = .live, incompleteBecause: [String] = []) throws -> IngestRun {
        let verdict = ResponseVerdict(incompleteBecause: incompleteBecause, publishedAt: published.map(at), pages: pages)
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

    /// A complete poll at 10:00 lists A, B and C; an incomplete one at 10:10 lists A, B and D
    /// (so C stays active, last seen at 10:00; B and D were seen at 10:10).
    static func laterPollListedMore(_ store: any TestStore) throws {
        try Self.poll(store, live("A", "B", "C"), published: nil, fetched: "10:00")
        let incomplete = try Self.poll(store, live("A", "B", "D"), published: nil, fetched: "10:10", incompleteBecause: ["a test"])
        #expect(incomplete.status == .incomplete && incomplete.counts == IngestCounts(fetched: 3, inserted: 1, unchanged: 2))
    }

    static let completeFile = FeedOrigin.file(path: "/data/saved.xml", complete: true)

    /// What a complete file of 10:05 (older than the poll of 10:10) and one of 10:10 say.
    static let keptByLaterPoll = [
        ("10:05", "older than the newest poll that listed them (2023-03-21T10:10:00Z): 2 incident(s) it does not list stay active, as a later poll listed them; an older answer adds history at its own time without rewriting the present"),
        ("10:10", "fetched at the same time as a poll that listed them (2023-03-21T10:10:00Z): 2 incident(s) it does not list stay active, as that poll listed them; of two answers of one instant, neither clears what the other listed"),
    ]

    @Test("a complete replay older than a poll, or of its instant, clears only what no poll at or after its time listed, and says how many it keeps (walk finding 24)",
          arguments: StoreKind.allCases, keptByLaterPoll)
    func replayKeepsWhatALaterPollListed(kind: StoreKind, variant: (fetched: String, note: String)) throws {
        try withStore(kind) { store in
            try Self.laterPollListedMore(store)
            // The file lists only A: C (last seen 10:00) is cleared as of the file's time; B and D,
            // listed at 10:10, stay active, and the run says why it cleared only one.
            let replay = try Self.poll(store, live("A"), published: nil, fetched: variant.fetched, origin: Self.completeFile)
            #expect(replay.status == .succeeded)
            #expect(replay.counts == IngestCounts(fetched: 1, unchanged: 1, cleared: 1))
            #expect(replay.warnings == [variant.note])
            #expect(try runLog(store).last?.warnings == [variant.note], "as the run log keeps it")
            let rows = try Self.state(store)
            #expect(rows.filter { $0.value.cleared != nil }.mapValues(\.cleared) == ["C": Self.at(variant.fetched)])
            #expect(rows.mapValues(\.lastSeen) == ["A": Self.at("10:10"), "B": Self.at("10:10"), "C": Self.at("10:00"), "D": Self.at("10:10")])
            // A complete poll after both clears B and D, and says nothing more.
            let next = try Self.poll(store, live("A"), published: nil, fetched: "10:15")
            #expect(next.counts == IngestCounts(fetched: 1, unchanged: 1, cleared: 2))
            #expect(next.warnings.isEmpty)
        }
    }

    @Test("no note where nothing a later poll listed is kept: an older replay that lists everything, one without --complete, an incomplete one",
          arguments: StoreKind.allCases)
    func olderReplayWithoutNote(kind: StoreKind) throws {
        try withStore(kind) { store in
            try Self.laterPollListedMore(store)
            // Not complete: it may clear nothing, so nothing is kept because of a later poll.
            let plain = try Self.poll(store, live("A"), published: nil, fetched: "10:03", origin: .file(path: "/data/saved.xml", complete: false))
            #expect(plain.status == .succeeded && plain.counts == IngestCounts(fetched: 1, unchanged: 1) && plain.warnings.isEmpty, "\(plain)")
            let incomplete = try Self.poll(store, live("A"), published: nil, fetched: "10:04", origin: Self.completeFile,
                                           incompleteBecause: ["the response says it is truncated"])
            #expect(incomplete.status == .incomplete)
            #expect(incomplete.counts == IngestCounts(fetched: 1, unchanged: 1))
            #expect(incomplete.warnings == ["the response says it is truncated"])
            #expect(try clearedIDs(store).isEmpty)
            // Complete and listing all four: none is unlisted, none cleared, nothing to say.
            let everything = try Self.poll(store, live("A", "B", "C", "D"), published: nil, fetched: "10:05", origin: Self.completeFile)
            #expect(everything.status == .succeeded)
            #expect(everything.counts == IngestCounts(fetched: 4, unchanged: 4))
            #expect(everything.warnings.isEmpty)
            #expect(try clearedIDs(store).isEmpty)
            #expect(try Self.state(store)["C"]?.lastSeen == Self.at("10:05"))
        }
    }
}
