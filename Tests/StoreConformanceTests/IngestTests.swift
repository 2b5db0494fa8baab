import IncidentCore
import Testing

/// The bodies of IncidentSQLiteTests' StoreTests, PollOutcomeTests and DuplicateTests, run
/// against every store.
@Suite("Ingest: upsert, revisions, clearing, run log (every store)")
struct IngestTests {
    @Test("a new incident is inserted with every field, first and last seen at the poll time", arguments: StoreKind.allCases)
    func insertsNew(kind: StoreKind) throws {
        try withStore(kind) { store in
            #expect(try counts(store, [incident("A")], at: t0) == IngestCounts(fetched: 1, inserted: 1))
            let rows = try allRows(store)
            try #require(rows.count == 1)
            #expect(rows[0].incident == incident("A"))
            #expect(rows[0].firstSeenAt == t0)
            #expect(rows[0].lastSeenAt == t0)
            #expect(rows[0].revision == 1)
            #expect(rows[0].clearedAt == nil)
            #expect(try runLog(store).map(\.status) == [.succeeded])
        }
    }

    @Test("re-ingesting the same feed keeps the rows, keeps first_seen_at and advances last_seen_at", arguments: StoreKind.allCases)
    func idempotentReingest(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("A"), incident("B")], at: t0)
            #expect(try counts(store, [incident("A"), incident("B")], at: t1) == IngestCounts(fetched: 2, unchanged: 2))
            let rows = try allRows(store)
            #expect(rows.map(\.incident.externalID) == ["A", "B"])
            #expect(rows.allSatisfy { $0.firstSeenAt == t0 && $0.lastSeenAt == t1 && $0.revision == 1 })
            #expect(try revisionCount(store) == 0)
        }
    }

    @Test("a changed incident is updated, its revision incremented and the old values archived", arguments: StoreKind.allCases)
    func changed(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("A")], at: t0)
            #expect(try counts(store, [incident("A", description: "[사고] 2차로 추가 통제")], at: t1) == IngestCounts(fetched: 1, updated: 1))
            let row = try #require(try allRows(store).first)
            #expect(row.incident.description == "[사고] 2차로 추가 통제")
            #expect(row.revision == 2)
            #expect(row.firstSeenAt == t0)
            let history = try #require(try store.history(ofIncident: row.id))
            #expect(history.revisions.map(\.incident.description) == ["[사고] 경부고속도로 사고"])
            #expect(history.revisions.map(\.revision) == [1])
            #expect(history.revisions.map(\.supersededAt) == [t1])
            #expect(history.revisions.map(\.incident) == [incident("A")])
        }
    }

    @Test("a change writes each field that changed, an indexed one alone or all at once, and the row is found by it",
          arguments: StoreKind.allCases)
    func changedIndexedFields(kind: StoreKind) throws {
        try withStore(kind) { store in
            var current = incident("A")
            current.roadRef = "고속국도1호선"  // from nil it would be filled in place (a migration's field)
            _ = try counts(store, [current], at: t0)
            // Each field an index holds (PollWriter.indexedColumns), then all of them and the text.
            let changes: [(String, (inout Incident) -> Void)] = [
                ("category", { $0.category = .roadwork }),
                ("road", { $0.road = "영동고속도로" }),
                ("road_ref", { $0.roadRef = "고속국도50호선" }),
                ("started_at", { $0.startedAt = UTCInstant(rfc3339: "2023-03-21T06:00:00Z") }),
                ("ended_at", { $0.endedAt = UTCInstant(rfc3339: "2023-03-21T07:00:00Z") }),
                ("validity", { $0.validity = .suspended }),
                ("all", {
                    $0.category = .closure; $0.road = "서해안고속도로"; $0.roadRef = nil; $0.validity = nil
                    $0.startedAt = UTCInstant(rfc3339: "2023-03-22T01:00:00Z"); $0.endedAt = nil; $0.description = "[도로폐쇄] 전면 통제"
                }),
            ]
            for (revision, (name, change)) in changes.enumerated() {
                change(&current)
                let at = t0.adding(seconds: Int64(60 * (revision + 1)))
                #expect(try counts(store, [current], at: at) == IngestCounts(fetched: 1, updated: 1), "\(name)")
                let row = try #require(try allRows(store).first)
                #expect(row.incident == current, "\(name)")
                #expect(row.revision == revision + 2, "\(name)")
                var byRoad = IncidentQuery(now: t2)
                byRoad.roadContains = current.road
                #expect(try list(store, byRoad).map(\.incident.externalID) == ["A"], "\(name)")
            }
        }
    }

    @Test("a row stored before migrations added fields (road_ref, geometry, validity) takes them in place: no revision, counted unchanged (issue 20)",
          arguments: StoreKind.allCases)
    func addedFieldsFilled(kind: StoreKind) throws {
        try withStore(kind) { store in
            // The trial's example: road_ref - → 고속국도1호선, and the other fields migrations added.
            var derived = incident("A")
            derived.roadRef = "고속국도1호선"
            var withGeometry = incident("B")
            withGeometry.geometry = .lineString([try #require(Coordinate(latitude: 37.1, longitude: 127.1)),
                                                 try #require(Coordinate(latitude: 37.2, longitude: 127.2))])
            var withValidity = incident("C")
            withValidity.validity = .suspended
            _ = try counts(store, [incident("A"), incident("B"), incident("C")], at: t0)
            #expect(try counts(store, [derived, withGeometry, withValidity], at: t1) == IngestCounts(fetched: 3, unchanged: 3))
            #expect(try revisionCount(store) == 0)
            let rows = try allRows(store)
            #expect(rows.map(\.incident) == [derived, withGeometry, withValidity])
            #expect(rows.allSatisfy { $0.revision == 1 && $0.firstSeenAt == t0 && $0.lastSeenAt == t1 })
            var byRoad = IncidentQuery(now: t1)
            byRoad.roadContains = "고속국도1호선"
            #expect(try list(store, byRoad).map(\.incident.externalID) == ["A"])
            // Variants that are changes: another road_ref, road_ref with another description, a
            // cleared incident coming back with one: each a revision, as before.
            var moved = derived
            moved.roadRef = "고속국도10호선"
            var alsoChanged = withGeometry
            alsoChanged.description = "차로 변경"
            #expect(try counts(store, [moved, alsoChanged, withValidity], at: t2) == IngestCounts(fetched: 3, updated: 2, unchanged: 1))
            #expect(try revisionCount(store) == 2)
        }
    }

    @Test("a complete poll clears what it no longer lists; the reappearance reopens it with a revision", arguments: StoreKind.allCases)
    func clearedAndReopened(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("A"), incident("B")], at: t0)
            #expect(try counts(store, [incident("A")], at: t1) == IngestCounts(fetched: 1, unchanged: 1, cleared: 1))
            var rows = try allRows(store)
            #expect(rows[1].clearedAt == t1)
            #expect(rows[0].clearedAt == nil)
            #expect(try list(store, IncidentQuery(now: t1, activeOnly: true)).map(\.incident.externalID) == ["A"])
            #expect(try counts(store, [incident("A"), incident("B")], at: t2) == IngestCounts(fetched: 2, unchanged: 1, reopened: 1))
            rows = try allRows(store)
            #expect(rows[1].clearedAt == nil)
            #expect(rows[1].revision == 2)
            #expect(try revisionCount(store) == 1)
            let history = try #require(try store.history(ofIncident: rows[1].id))
            #expect(history.revisions.map(\.clearedAt) == [t1])
        }
    }

    @Test("clearing is per source: another source's poll never clears this one's incidents", arguments: StoreKind.allCases)
    func clearingIsPerSource(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("A")], at: t0)
            #expect(try counts(store, [incident("X", source: "its")], at: t1, source: "its").cleared == 0)
            #expect(try allRows(store).allSatisfy { $0.clearedAt == nil })
        }
    }

    @Test("an error mid-poll rolls everything back and clears nothing", arguments: StoreKind.allCases)
    func rollbackOnError(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("A"), incident("B")], at: t0)
            let before = try allRows(store)
            #expect(throws: ListProducer.Boom.self) {
                try store.ingest(PollContext(source: "gits", startedAt: t1),
                                 ListProducer(incidents: [incident("A", description: "changed"), incident("C"), incident("D")],
                                              failAfter: 2).callAsFunction)
            }
            #expect(try allRows(store) == before)
            #expect(try revisionCount(store) == 0)
            #expect(try runLog(store).map(\.status) == [.succeeded])
            // The connection is usable again and the next complete poll works.
            #expect(try counts(store, [incident("A")], at: t2) == IngestCounts(fetched: 1, unchanged: 1, cleared: 1))
        }
    }

    @Test("a dry run counts what it would write and writes nothing", arguments: StoreKind.allCases)
    func dryRun(kind: StoreKind) throws {
        try withStore(kind) { store in
            let run = try poll(store, live("A", "B"), at: t0, dryRun: true)
            #expect(run.counts == IngestCounts(fetched: 2, inserted: 2))
            #expect(run.id == nil)
            #expect(try allRows(store).isEmpty)
            #expect(try runLog(store).isEmpty)
        }
    }

    @Test("failed runs are recorded with their error and change no incident; a quota pause is kept", arguments: StoreKind.allCases)
    func failedRunRecorded(kind: StoreKind) throws {
        try withStore(kind) { store in
            try store.recordRun(IngestRun(source: "gits", startedAt: t0, finishedAt: t1, status: .failed, error: "GITS API error headerCd=22",
                                          resumesAt: t2, host: "host-a"))
            let recorded = try runLog(store)
            #expect(recorded.map(\.status) == [.failed])
            #expect(recorded.map(\.error) == ["GITS API error headerCd=22"])
            #expect(recorded.map(\.host) == ["host-a"])
            #expect(try allRows(store).isEmpty)
            #expect(try store.quotaResumesAt(source: "gits") == t2)
            #expect(try store.sourceSummaries() == [SourceSummary(source: "gits", lastRun: recorded[0], consecutiveFailures: 1,
                                                                  failingSince: t0, quotaExhaustedUntil: t2)])
            #expect(try store.clearQuota(source: "gits"))
            #expect(try !store.clearQuota(source: "gits"))
            #expect(try store.quotaResumesAt(source: "gits") == nil)
        }
    }

    @Test("--active excludes incidents the provider says have ended", arguments: StoreKind.allCases)
    func activeExcludesEnded(kind: StoreKind) throws {
        try withStore(kind) { store in
            _ = try counts(store, [incident("past", ended: t0), incident("future", ended: t2.adding(seconds: 60)), incident("open")], at: t0)
            let active = try list(store, IncidentQuery(now: t1, activeOnly: true, order: .source))
            #expect(active.map(\.incident.externalID) == ["future", "open"])
        }
    }

    @Test("NULL, not empty text, for absent values; coordinates, instants and awkward text round-trip exactly",
          arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) throws {
        try withStore(kind) { store in
            let sparse = Incident(source: "gits", externalID: "S", category: .other)
            let full = Incident(source: "gits", externalID: "F", category: .breakdown, providerCategory: "차량고장",
                                description: "tab\there, newline\nthere, backslash \\N \\\\ and \\t, CR\r, \"quotes\" 'single'",
                                road: "강변북로", location: "l", direction: "상행", restriction: "4차로",
                                coordinate: Coordinate(latitude: 37.52739696162846, longitude: 127.08203126),
                                linkID: "1040000103", startedAt: UTCInstant(rfc3339: "2023-03-21T05:13:00Z"),
                                confirmedAt: UTCInstant(rfc3339: "1999-12-31T23:59:59Z"),
                                expectedEndAt: UTCInstant(rfc3339: "2023-03-21T06:25:00Z"),
                                endedAt: UTCInstant(rfc3339: "2038-01-19T03:14:08Z"))
            _ = try counts(store, [sparse, full], at: t0)
            #expect(try allRows(store).map(\.incident) == [full, sparse])
            #expect(try integer(store, """
                SELECT count(*) FROM incidents WHERE external_id = 'S' AND description IS NULL AND road IS NULL AND latitude IS NULL
                  AND started_at IS NULL
                """) == 1)
            // Unchanged on the next poll: the stored values hash as they were sent.
            #expect(try counts(store, [sparse, full], at: t1) == IngestCounts(fetched: 2, unchanged: 2))
        }
    }

    @Test("the same id twice with different content: the first occurrence wins, and later polls add no revisions",
          arguments: StoreKind.allCases)
    func firstWins(kind: StoreKind) throws {
        try withStore(kind) { store in
            let feed = [incident("A", description: "first"), incident("A", description: "second")]
            for instant in [t0, t1, t2] { _ = try counts(store, feed, at: instant) }
            let rows = try allRows(store)
            #expect(rows.count == 1)
            #expect(rows[0].incident.description == "first")
            #expect(rows[0].revision == 1)
            #expect(try revisionCount(store) == 0)
        }
    }

    @Test("the run log records the host, the origin and the observation time", arguments: StoreKind.allCases)
    func runLogFields(kind: StoreKind) throws {
        try withStore(kind) { store in
            let run = try store.ingest(PollContext(source: "gits", startedAt: t1, observedAt: t0, origin: .file(path: "/data/f.xml", complete: false),
                                                   host: "scheduler-2"), ListProducer(records: live("A")).callAsFunction)
            let logged = try #require(try runLog(store).first)
            #expect(logged == run)
            #expect(logged.host == "scheduler-2")
            #expect(logged.origin == .file(path: "/data/f.xml", complete: false))
            #expect(logged.observedAt == t0)
            #expect(logged.startedAt == t1)
        }
    }
}

@Suite("A poll clears only when complete; records set aside; duplicates; replays (every store)")
struct PollOutcomeTests {
    @Test("an incomplete verdict stores the records, clears nothing, and records why", arguments: StoreKind.allCases, [
        ["the response declares itemCount 5 but holds 2 itemList records"],
        ["the response has no success code", "page 2 of 3 failed"],
    ])
    func incompleteClearsNothing(kind: StoreKind, reasons: [String]) throws {
        try withStore(kind) { store in
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
            let next = try poll(store, live("A"), at: t2)
            #expect(next.status == .succeeded)
            #expect(try clearedIDs(store) == ["B", "C", "D"])
        }
    }

    @Test("a rejected record is quarantined with its reason; its incident is not cleared; the rest is stored",
          arguments: StoreKind.allCases)
    func rejectedWithID(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B"), at: t0)
            let bad = RejectedRecord(externalID: "B", position: "itemList at line 3", reason: "startDate '2023-13-45 99:00:00' is not a time",
                                     excerpt: "<itemList><regSeq>B</regSeq>\t…\n")
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
    }

    @Test("records set aside keep response order; a valid record of a known incident after its rejected one is a duplicate",
          arguments: StoreKind.allCases)
    func rejectedOrder(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A"), at: t0)
            let rejects = (1...3).map { RejectedRecord(externalID: $0 == 2 ? "A" : nil, position: "items[\($0)]", reason: "reason \($0)") }
            let run = try poll(store, [.rejected(rejects[0]), .rejected(rejects[1]), .incident(incident("A", description: "later")),
                                       .incident(incident("N")), .rejected(rejects[2]), .incident(incident("N"))], at: t1)
            #expect(run.counts == IngestCounts(fetched: 6, inserted: 1, rejected: 3, duplicates: 2))
            #expect(try store.rejections(runID: try #require(run.id)).map(\.record) == rejects)
            #expect(try allRows(store).map(\.incident.description) == [incident("A").description, incident("N").description])
        }
    }

    @Test("a record without a readable id makes the poll incomplete: nothing is cleared", arguments: StoreKind.allCases, [1, 3])
    func rejectedWithoutID(kind: StoreKind, count: Int) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B"), at: t0)
            let unreadable = (0..<count).map { FeedRecord.rejected(RejectedRecord(externalID: nil, position: "items[\($0)]", reason: "has no id")) }
            let run = try poll(store, live("A") + unreadable, at: t1)
            #expect(run.status == .incomplete)
            #expect(run.counts.rejected == count)
            #expect(run.warnings == ["\(count) record(s) set aside had no readable id, so the response may not list every active incident"])
            #expect(try clearedIDs(store).isEmpty)
        }
    }

    @Test("the same record listed twice is counted once and reported", arguments: StoreKind.allCases)
    func duplicates(kind: StoreKind) throws {
        try withStore(kind) { store in
            let run = try poll(store, [.incident(incident("A")), .incident(incident("B")), .incident(incident("A"))], at: t0)
            #expect(run.counts == IngestCounts(fetched: 3, inserted: 2, duplicates: 1))
            #expect(run.warnings == ["1 record(s) repeated an id listed earlier in the response with the same content; the first of each was kept"])
            #expect(run.status == .succeeded)
            let again = try poll(store, [.incident(incident("A")), .incident(incident("A")), .incident(incident("B"))], at: t1)
            #expect(again.counts == IngestCounts(fetched: 3, unchanged: 2, duplicates: 1))
            #expect(try store.rejections(runID: try #require(again.id)).isEmpty)
            #expect(try revisionCount(store) == 0)
        }
    }

    @Test("twins (one id, other content, one response): the first is kept, the second set aside with the reason, shown with the incident",
          arguments: StoreKind.allCases)
    func twins(kind: StoreKind) throws {
        try withStore(kind) { store in
            let second = incident("A", description: "second")
            let run = try poll(store, [.incident(incident("A")), .incident(incident("B")), .incident(second)], at: t0)
            #expect(run.counts == IngestCounts(fetched: 3, inserted: 2, rejected: 1))
            #expect(run.status == .succeeded)
            #expect(run.warnings.isEmpty)
            let twin = RejectedRecord(
                externalID: "A", position: "record 3 of the response",
                reason: "twins: the id was listed earlier in this response with different content; the first was kept",
                excerpt: "category=accident; road=경부고속도로; location=(서울방향) 수원IC → 신갈JC; description=second; startedAt=2023-03-21T05:13:00Z")
            #expect(try store.rejections(runID: try #require(run.id)).map(\.record) == [twin])
            // Known incident, twins again (and a plain repeat): the first content is kept, nothing is revised.
            let again = try poll(store, [.incident(second), .incident(incident("B")), .incident(incident("A")), .incident(second)], at: t1)
            #expect(again.counts == IngestCounts(fetched: 4, updated: 1, unchanged: 1, rejected: 1, duplicates: 1))
            let rows = try allRows(store)
            #expect(rows.map(\.incident.description) == ["second", incident("B").description])
            #expect(rows.allSatisfy { $0.clearedAt == nil })
            let history = try #require(try store.history(ofIncident: rows[0].id))
            #expect(history.rejections.map(\.record.position) == ["record 3 of the response", "record 3 of the response"])
            #expect(try store.runs(source: "gits", limit: 1, failuresFirst: false).first?.counts.rejected == 1)
        }
    }

    @Test("twins after a record of the same id set aside: the first readable record decides", arguments: StoreKind.allCases)
    func twinsAfterRejected(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A"), at: t0)
            let bad = RejectedRecord(externalID: "A", position: "items[1]", reason: "bad date")
            let run = try poll(store, [.rejected(bad), .incident(incident("A", description: "x")), .incident(incident("A", description: "x")),
                                       .incident(incident("A", description: "y"))], at: t1)
            #expect(run.counts == IngestCounts(fetched: 4, rejected: 2, duplicates: 2))
            #expect(try store.rejections(runID: try #require(run.id)).map(\.record.position) == ["items[1]", "record 4 of the response"])
            #expect(try allRows(store).map(\.incident.description) == [incident("A").description])
        }
    }

    @Test("a file replay adds history, clears nothing current, and stamps incidents at its observation time; what only it lists is history, cleared as of the complete poll after it", arguments: StoreKind.allCases)
    func replayClearsNothing(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B", "C"), at: t2)
            let file = FeedOrigin.file(path: "/data/old.xml", complete: false)
            let run = try poll(store, live("A", "Z"), at: t2.adding(seconds: 60), origin: file, observedAt: t0)
            #expect(run.status == .succeeded)
            #expect(run.counts.cleared == 0)
            // A, B and C stay active; Z, listed at t0 by the file alone, was not listed by the
            // complete poll of t2: history, cleared as of that poll.
            #expect(try clearedIDs(store) == ["Z"])
            let rows = Dictionary(uniqueKeysWithValues: try allRows(store).map { ($0.incident.externalID, $0) })
            #expect(rows["Z"]?.clearedAt == t2)
            #expect(rows["Z"]?.firstSeenAt == t0)
            #expect(rows["Z"]?.lastSeenAt == t0)
            #expect(rows["A"]?.firstSeenAt == t0)
            #expect(rows["A"]?.lastSeenAt == t2)
            let logged = try #require(try store.runs(source: "gits", limit: 1, failuresFirst: false).first)
            #expect(logged.origin == .file(path: "/data/old.xml", complete: false))
            #expect(logged.observedAt == t0)
        }
    }

    @Test("an older replay never overwrites newer content or reopens a later clearing; a newer one does", arguments: StoreKind.allCases)
    func olderAndNewerReplays(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B"), at: t1)
            try poll(store, live("A"), at: t2)  // B cleared at t2
            let old = try poll(store, [.incident(incident("A", description: "old text")), .incident(incident("B"))],
                               at: t2.adding(seconds: 10), origin: .file(path: "old.xml", complete: false), observedAt: t0)
            #expect(old.counts == IngestCounts(fetched: 2))
            #expect(old.warnings.contains { $0.hasPrefix("2 record(s) were older than the stored state") })
            let rows = try allRows(store)
            #expect(rows.map(\.incident.description) == [incident("A").description, incident("B").description])
            #expect(rows[1].clearedAt == t2)
            #expect(rows.map(\.firstSeenAt) == [t0, t0])
            #expect(rows.map(\.lastSeenAt) == [t2, t1])
            let newer = t2.adding(seconds: 600)
            let fresh = try poll(store, [.incident(incident("A", description: "new text"))], at: newer,
                                 origin: .file(path: "new.xml", complete: true), observedAt: newer)
            #expect(fresh.counts.updated == 1)
            #expect(try allRows(store)[0].incident.description == "new text")
            #expect(try allRows(store)[0].lastSeenAt == newer)
        }
    }

    @Test("a replay marked complete clears what it does not list, at its observation time", arguments: StoreKind.allCases)
    func completeReplayClears(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B"), at: t0)
            let run = try poll(store, live("A"), at: t2, origin: .file(path: "f.xml", complete: true), observedAt: t1)
            #expect(run.counts.cleared == 1)
            #expect(try allRows(store)[1].clearedAt == t1)
        }
    }

    @Test("an older replay marked complete clears only what no poll saw at or after its time", arguments: StoreKind.allCases)
    func olderCompleteReplayKeepsNewerListings(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A", "B", "C"), at: t0)
            try poll(store, live("A", "B"), at: t2)  // C cleared at t2; A and B seen at t2
            // A file fetched at t1, between the two polls, that lists A only, replayed as complete.
            let old = try poll(store, live("A"), at: t2.adding(seconds: 60), origin: .file(path: "t1.xml", complete: true), observedAt: t1)
            #expect(old.counts.cleared == 0)
            let rows = try allRows(store)
            #expect(rows.map(\.incident.externalID) == ["A", "B", "C"])
            #expect(rows.map(\.clearedAt) == [nil, nil, t2])  // B, listed at t2 after the file, stays active
            #expect(rows.map(\.lastSeenAt) == [t2, t2, t0])
            // The same file observed after the last poll clears B.
            let newer = try poll(store, live("A"), at: t2.adding(seconds: 120), origin: .file(path: "later.xml", complete: true),
                                 observedAt: t2.adding(seconds: 90))
            #expect(newer.counts.cleared == 1)
            #expect(try allRows(store)[1].clearedAt == t2.adding(seconds: 90))
        }
    }

    @Test("--active agrees with StoredIncident.isActive, the one definition of active", arguments: StoreKind.allCases)
    func activeDefinedOnce(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, [.incident(incident("ended-before", ended: t0)), .incident(incident("ends-later", ended: t2)),
                             .incident(incident("open")), .incident(incident("gone"))], at: t0)
            try poll(store, [.incident(incident("ended-before", ended: t0)), .incident(incident("ends-later", ended: t2)),
                             .incident(incident("open"))], at: t1)
            for now in [t0, t1, t2, t2.adding(seconds: 1)] {
                let all = try list(store, IncidentQuery(now: now, order: .source))
                let active = try list(store, IncidentQuery(now: now, activeOnly: true, order: .source))
                #expect(active.map(\.incident.externalID) == all.filter { $0.isActive(at: now) }.map(\.incident.externalID))
                let stats = try store.statistics(matching: IncidentQuery(now: now), utcOffsetSeconds: 0)
                #expect(stats.active == active.count)
            }
        }
    }
}

/// Issue 19, point 4: what is listed but not in force now (planned for later, suspended) has a
/// status of its own, computed at the query's time, in every store's filter and statistics.
@Suite("Planned and suspended incidents (every store)")
struct NotInForceTests {
    /// At t0 and at t2 (after a start at t1 and an end at t1): each incident's expected status.
    static let expected: [(id: String, atT0: IncidentStatus, atT2: IncidentStatus)] = [
        ("open", .active, .active),
        ("starts-at-t1", .planned, .active),
        ("suspended", .suspended, .suspended),
        ("planned-no-start", .planned, .planned),
        ("planned-started", .active, .active),
        ("suspended-ends-at-t1", .suspended, .ended),
        ("gone", .cleared, .cleared),
    ]

    static func records(without gone: Bool = false) -> [FeedRecord] {
        var records: [Incident] = []
        records.append(incident("open"))
        var later = incident("starts-at-t1")
        later.startedAt = t1
        records.append(later)
        var suspended = incident("suspended")
        suspended.validity = .suspended
        records.append(suspended)
        var plannedNoStart = incident("planned-no-start")
        (plannedNoStart.validity, plannedNoStart.startedAt) = (.planned, nil)
        records.append(plannedNoStart)
        var plannedStarted = incident("planned-started")
        plannedStarted.validity = .planned
        records.append(plannedStarted)
        var suspendedEnding = incident("suspended-ends-at-t1", ended: t1)
        suspendedEnding.validity = .suspended
        records.append(suspendedEnding)
        if !gone { records.append(incident("gone")) }
        return records.map { .incident($0) }
    }

    @Test("--status, --active, stats and stats --by status agree with StoredIncident.status at each query time; a planned incident is active from its start without a poll",
          arguments: StoreKind.allCases)
    func statusAtQueryTime(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, Self.records(), at: t0.adding(seconds: -60))
            try poll(store, Self.records(without: true), at: t0)  // clears "gone"
            for (now, late) in [(t0, false), (t2, true)] {
                func expected(_ entry: (id: String, atT0: IncidentStatus, atT2: IncidentStatus)) -> IncidentStatus { late ? entry.atT2 : entry.atT0 }
                for status in IncidentStatus.allCases {
                    var query = IncidentQuery(now: now, order: .source)
                    query.statuses = [status]
                    let ids = try list(store, query).map(\.incident.externalID)
                    #expect(ids == Self.expected.filter { expected($0) == status }.map(\.id).sorted(), "\(status) at \(now.rfc3339)")
                }
                let all = try list(store, IncidentQuery(now: now, order: .source))
                #expect(all.map { $0.status(at: now) } == all.compactMap { row in Self.expected.first { $0.id == row.incident.externalID }.map(expected) })
                #expect(all.count == Self.expected.count)
                let active = try list(store, IncidentQuery(now: now, activeOnly: true, order: .source))
                #expect(active.map(\.incident.externalID) == all.filter { $0.isActive(at: now) }.map(\.incident.externalID))
                var twoStates = IncidentQuery(now: now, order: .source)
                twoStates.statuses = [.planned, .cleared]
                #expect(try list(store, twoStates).map(\.incident.externalID)
                        == Self.expected.filter { [.planned, .cleared].contains(expected($0)) }.map(\.id).sorted())
                // Statistics without a filter (SQLite: the counts table and the active set) and
                // with one (the rows grouped): the same five counts.
                func count(_ status: IncidentStatus) -> Int { Self.expected.filter { expected($0) == status }.count }
                for query in [IncidentQuery(now: now), IncidentQuery(now: now, sources: ["gits"])] {
                    let stats = try store.statistics(matching: query, utcOffsetSeconds: 0)
                    #expect([stats.total, stats.active, stats.planned, stats.suspended, stats.ended, stats.cleared]
                            == [Self.expected.count, count(.active), count(.planned), count(.suspended), count(.ended), count(.cleared)],
                            "at \(now.rfc3339), \(query.sources)")
                    let groups = try store.groupCounts(matching: query, by: .status, per: nil, utcOffsetSeconds: 0)
                    #expect(Dictionary(uniqueKeysWithValues: groups.map { ($0.key, $0.count) })
                            == Dictionary(uniqueKeysWithValues: IncidentStatus.allCases.filter { count($0) > 0 }.map { ($0.rawValue, count($0)) }))
                }
                #expect(try store.activeIncidentCounts(at: now) == ["gits": count(.active)])
            }
        }
    }

    @Test("the provider's word (validity) is content: a suspended incident listed again as in force is a revision, active again",
          arguments: StoreKind.allCases)
    func validityIsContent(kind: StoreKind) throws {
        try withStore(kind) { store in
            var suspended = incident("A")
            suspended.validity = .suspended
            try poll(store, [.incident(suspended)], at: t0)
            let resumed = try poll(store, live("A"), at: t1)
            #expect(resumed.counts.updated == 1)
            let id = try #require(try allRows(store).first?.id)
            let history = try #require(try store.history(ofIncident: id))
            #expect(history.current.incident.validity == nil)
            #expect(history.current.status(at: t1) == .active)
            #expect(history.revisions.map(\.incident.validity) == [.suspended])
        }
    }
}

@Suite("Unicode normalization of stored text and query terms (every store)")
struct NormalizationTests {
    static let nfdRoad = "경부고속도로".decomposedStringWithCanonicalMapping

    @Test("NFD text is stored as NFC; an NFD --road or --search term finds it; no term is an SQL error", arguments: StoreKind.allCases)
    func nfd(kind: StoreKind) throws {
        try withStore(kind) { store in
            var decomposed = incident("A", description: "[사고] 잠실대교 후속 처리".decomposedStringWithCanonicalMapping)
            decomposed.road = Self.nfdRoad
            try poll(store, [.incident(decomposed.normalizedToNFC())], at: t0)
            let stored = try #require(try allRows(store).first)
            #expect(stored.incident.road == "경부고속도로")
            for term in [Self.nfdRoad, "경부", "부고속".decomposedStringWithCanonicalMapping] {
                var query = IncidentQuery(now: t1)
                query.roadContains = term
                #expect(try list(store, query).count == 1, "road \(term)")
            }
            for term in ["잠실대교".decomposedStringWithCanonicalMapping, "후속", "처", "a", "😀", "👩‍👩‍👧", "\"", "*", "NEAR(", "a\"b", "잠실 후속",
                         "%", "_", "\\", "ic", "IC", "Ic"] {
                var query = IncidentQuery(now: t1)
                query.search = term
                let found = try list(store, query).count
                #expect(found == (["😀", "👩‍👩‍👧", "\"", "*", "NEAR(", "a\"b", "a", "%", "_", "\\"].contains(term) ? 0 : 1), "search \(term)")
            }
        }
    }
}

@Suite("One content-column list drives every statement (every store)")
struct ContentColumnListTests {
    /// The standard fields plus one more, `location_note`, stored from `Incident.location`.
    static let extended = IncidentField.content + [.text("location_note", \.location)]

    @Test("a field added to the list is stored, archived in revisions, decoded, and part of the hash", arguments: StoreKind.allCases)
    func addedField(kind: StoreKind) throws {
        try withStore(kind, fields: Self.extended,
                      extraSQLiteMigration: "ALTER TABLE incidents ADD COLUMN location_note TEXT; ALTER TABLE incident_revisions ADD COLUMN location_note TEXT;",
                      extraPostgresMigration: "ALTER TABLE incidents ADD COLUMN location_note text; ALTER TABLE incident_revisions ADD COLUMN location_note text;") { store in
            try poll(store, live("A"), at: t0)
            var changed = incident("A")
            changed.location = "(부산방향) 신갈JC → 수원IC"
            try poll(store, [.incident(changed)], at: t1)
            #expect(try store.column("""
                SELECT location_note FROM (SELECT 1 AS k, location_note FROM incidents
                                           UNION ALL SELECT 2 AS k, location_note FROM incident_revisions) AS notes ORDER BY k
                """) == [changed.location, incident("A").location])
            #expect(try integer(store, "SELECT content_hash FROM incidents") == Int(changed.contentHash(fields: Self.extended)))
            #expect(incident("A").contentHash(fields: Self.extended) != incident("A").contentHash())
        }
    }
}
