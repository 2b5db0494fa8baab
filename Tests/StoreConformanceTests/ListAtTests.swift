import Foundation
import IncidentCore
import TestSupport
import Testing

/// `list --at T` (``IncidentQuery/listedAt``), the same on every store: what the source had
/// listed as active at T, compared with the set computed from the responses themselves.
@Suite("What was listed at a moment (every store)")
struct ListAtTests {
    /// One simulated poll: when, what it listed, and how it ended.
    struct Response {
        enum Ending { case complete, incomplete, failed }
        var at: UTCInstant
        var listed: [String]
        var ending: Ending
    }

    /// 80 polls ten minutes apart of a source whose 25 incidents come and go; a fifth of the
    /// responses are incomplete and a tenth fail after their first record.
    static func responses(seed: UInt64) -> [Response] {
        var random = SplitMix64(seed: seed)
        var present = Set<Int>()
        return (0..<80).map { index in
            for id in 0..<25 where Double.random(in: 0..<1, using: &random) < 0.15 {
                if present.contains(id) { present.remove(id) } else { present.insert(id) }
            }
            // An incomplete response may leave out incidents it should list.
            let roll = Double.random(in: 0..<1, using: &random)
            let ending: Response.Ending = roll < 0.1 ? .failed : roll < 0.3 ? .incomplete : .complete
            var listed = present.sorted()
            if ending == .incomplete { listed = listed.filter { _ in Bool.random(using: &random) } }
            return Response(at: t0.adding(seconds: Int64(index) * 600), listed: listed.map { "I\($0)" }, ending: ending)
        }
    }

    /// Active at `instant` by the responses alone: listed by a stored response at or before it,
    /// and no complete response after that listing, up to the instant, left it out.
    static func expected(_ responses: [Response], at instant: UTCInstant) -> Set<String> {
        let stored = responses.filter { $0.ending != .failed && $0.at <= instant }
        var active = Set<String>()
        for response in stored {
            if response.ending == .complete { active = active.intersection(response.listed) }
            active.formUnion(response.listed)
        }
        return active
    }

    /// Polls `responses` in order: an incomplete one says a page was missing, a failed one
    /// throws after its first record (nothing of it is stored).
    static func store(_ responses: [Response], in store: any TestStore) throws {
        for response in responses {
            let verdict = response.ending == .incomplete ? ResponseVerdict(incompleteBecause: ["a page was missing"]) : .complete
            let producer = ListProducer(incidents: response.listed.map { incident($0) },
                                        failAfter: response.ending == .failed ? 1 : nil, verdict: verdict)
            _ = try? store.ingest(PollContext(source: "gits", startedAt: response.at), producer.callAsFunction)
        }
    }

    @Test("30 days of polls derived from recorded GITS and WZDx responses (incomplete, failing, stale snapshots among them): at 1,000 random moments list --at equals the set the responses give, and the timeline the log walked in Swift",
          arguments: StoreKind.allCases)
    func monthOfPolls(kind: StoreKind) throws {
        // A new month every run; LIST_AT_SEED=N repeats the one a failure names.
        let seed = ProcessInfo.processInfo.environment["LIST_AT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let month = try MonthOfPolls(seed: seed)
        let listings = month.listings
        let endings = Dictionary(grouping: month.responses, by: \.ending).mapValues(\.count)
        try withStore(kind, clock: .fixed(MonthOfPolls.end)) { store in
            try month.store(in: store, directory: try TestPaths.temporaryDirectory("month"))
            var random = SplitMix64(seed: seed)
            // Uniform moments, and a fifth exactly at a response's own time (where an interval opens or ends).
            let moments = (0..<1000).map { index -> UTCInstant in
                if index % 5 == 0 { return month.responses[Int.random(in: 0..<month.responses.count, using: &random)].fetchedAt }
                return MonthOfPolls.start.adding(seconds: Int64.random(in: -3600...(30 * 86_400 + 3600), using: &random))
            }
            var differences: [String] = []
            for moment in moments {
                var query = IncidentQuery(now: MonthOfPolls.end, order: .source)
                query.listedAt = moment
                let listed = Set(try list(store, query).map { "\($0.incident.source)/\($0.incident.externalID)" })
                let expected = MonthOfPolls.expected(listings, endedAt: month.endedAt, at: moment)
                if listed != expected {
                    differences.append("\(moment.rfc3339): listed but not expected \(listed.subtracting(expected).sorted()), expected but not listed \(expected.subtracting(listed).sorted())")
                }
            }
            #expect(differences.isEmpty, "seed \(seed) (LIST_AT_SEED=\(seed) repeats it): \(differences.count) of 1,000 moments differ; first: \(differences.prefix(5).joined(separator: "; "))")
            // Not a vacuous comparison: every kind of response occurs, the sets vary, incidents
            // now cleared were listed then, and the providers' ends cut some.
            #expect(endings[.failed, default: 0] > 10 && endings[.incomplete, default: 0] > 10 && endings[.staleCopy, default: 0] > 5, "seed \(seed): \(endings)")
            let sets = moments.map { MonthOfPolls.expected(listings, endedAt: month.endedAt, at: $0) }
            #expect(Set(sets).count > 150, "seed \(seed)")
            #expect(try integer(store, "SELECT count(*) FROM ingest_runs WHERE status = 'stale'") == month.evidence.filter(\.stale).count, "seed \(seed)")
            #expect(try integer(store, "SELECT count(*) FROM incident_transitions WHERE kind = 'cleared'") ?? 0 > 50, "seed \(seed)")
            // The same month's timeline (issue 22: counted by the store; on SQLite, from the hours the polls held).
            try Self.timelineSameAsTheLog(store, month, seed: seed)
            if kind == .sqlite { #expect(try integer(store, "SELECT count(*) FROM listed_hours") ?? 0 > 20 * 24, "seed \(seed)") }
        }
    }

    @Test("the provider's end counts, other filters combine, and each source's last poll before the moment is known (a failing one shows)",
          arguments: StoreKind.allCases)
    func endsFiltersAndAsOf(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, [.incident(incident("A")), .incident(incident("B", ended: t1))], at: t0)
            try poll(store, [.incident(incident("X", source: "its"))], at: t0, source: "its")
            try store.recordRun(IngestRun(source: "its", startedAt: t1, finishedAt: t1, status: .failed, error: "code 22"))
            try poll(store, live("A"), at: t2)
            func listed(_ instant: UTCInstant, sources: [String] = []) throws -> [String] {
                var query = IncidentQuery(now: t2, sources: sources, order: .source)
                query.listedAt = instant
                return try list(store, query).map { "\($0.incident.source)/\($0.incident.externalID)" }
            }
            #expect(try listed(t0) == ["gits/A", "gits/B", "its/X"])
            #expect(try listed(t1) == ["gits/A", "its/X"], "B ended at t1 by the provider")
            #expect(try listed(t1, sources: ["gits"]) == ["gits/A"])
            #expect(try listed(t0.adding(seconds: -1)).isEmpty)
            let asOf = try store.sourcesAsOf(t1)
            #expect(asOf.map(\.source) == ["gits", "its"])
            #expect(asOf[0].lastPoll?.startedAt == t0)
            #expect(asOf[1].lastPoll?.startedAt == t0)
            #expect(asOf[1].lastRun?.status == .failed)
            #expect(try store.sourcesAsOf(t2)[0].lastPoll?.startedAt == t2)
        }
    }

    @Test("timeline --per hour counts in each hour the incidents active at some moment of it, as the responses give",
          arguments: StoreKind.allCases)
    func timeline(kind: StoreKind) throws {
        let responses = Self.responses(seed: 23)
        try withStore(kind) { store in
            try Self.store(responses, in: store)
            let until = t0.adding(seconds: 15 * 3600)
            let counts = try Timeline.count(store, matching: IncidentQuery(now: until), by: nil, per: .hour,
                                            since: t0.adding(seconds: -3600), until: until, offsetAt: { _ in 9 * 3600 })
            // Activity changes only at polls: active at some moment of an hour is active at its
            // start or at one of its polls.
            let expected = (-1..<15).map { hour -> Int in
                let start = t0.adding(seconds: Int64(hour) * 3600), end = start.adding(seconds: 3600)
                var active = Self.expected(responses, at: start)
                for response in responses where response.at >= start && response.at < end {
                    active.formUnion(Self.expected(responses, at: response.at))
                }
                return active.count
            }
            #expect(counts.map(\.count) == expected)
            #expect(counts.first?.bucket == "2023-03-21 14")
            #expect(counts.first?.count == 0)
            #expect(expected.contains { $0 > 5 })
            let byCategory = try Timeline.count(store, matching: IncidentQuery(now: until), by: .category, per: .day,
                                                since: t0, until: until, offsetAt: { _ in 0 })
            #expect(byCategory.map(\.key) == ["accident"])
            #expect(byCategory.map(\.count) == [Set(responses.filter { $0.ending != .failed }.flatMap(\.listed)).count])
        }
    }
    @Test("timeline --per hour reads the past hours' counts the polls keep (SQLite: listed_hours, 0016); a replay, a provider's end stored anew and a prune change the past, and the counts follow the log walked in Swift",
          arguments: StoreKind.allCases)
    func heldHours(kind: StoreKind) throws {
        let base = t0, hour: Int64 = 3600
        try withStore(kind) { store in
            // Every 20 minutes for 6 hours: A throughout, B from the first to the third hour, C never.
            for k in 0..<18 {
                try poll(store, (3..<9).contains(k) ? live("A", "B") : live("A"), at: base.adding(seconds: Int64(k) * 1200))
            }
            let since = base.adding(seconds: -hour), until = base.adding(seconds: 6 * hour)
            // The timeline's counts, and on SQLite how many of hours 0 to 4 it read from listed_hours.
            func counts(_ name: String) throws -> [Int] {
                let query = IncidentQuery(now: until)
                let counted = try Timeline.count(store, matching: query, by: nil, per: .hour, since: since, until: until) { _ in 0 }
                let expected = try Self.referenceTimeline(store, query, by: nil, per: .hour, since: since, until: until) { _ in 0 }
                #expect(counted == expected, "\(name)")
                return counted.map(\.count)
            }
            func held() throws -> Int? {
                guard kind == .sqlite else { return nil }
                let first = (base.secondsSince1970 - 1_577_836_800) / hour
                return try integer(store, "SELECT count(*) FROM listed_hours WHERE hour BETWEEN \(first) AND \(first + 4)")
            }
            let sqlite = kind == .sqlite
            let polled = try counts("polled")
            #expect(polled == [0, 1, 2, 2, 1, 1, 1])
            #expect(try held() == (sqlite ? 5 : nil), "the hours before the last poll's")
            // A's provider's end, stored anew by a poll at 6 h, is at 1 h 30: A counts no more after it.
            try poll(store, [.incident(incident("A", ended: base.adding(seconds: hour + 1800)))], at: base.adding(seconds: 6 * hour))
            let ended = try counts("A ended at 1 h 30")
            #expect(ended == [0, 1, 2, 1, 0, 0, 0])
            #expect(try held() == (sqlite ? 5 : nil), "taken out from hour 0 (the end's hour, less one) and counted again by the poll")
            // A replay of a document of 2 h 10 lists C then (until the complete poll of 2 h 20 that did not).
            try poll(store, live("C"), at: base.adding(seconds: 6 * hour + 60), origin: .file(path: "old.xml", complete: false),
                     observedAt: base.adding(seconds: 2 * hour + 600))
            let replayed = try counts("C replayed at 2 h 10")
            #expect(replayed == [0, 1, 2, 2, 0, 0, 0])
            #expect(try held() == (sqlite ? 5 : nil), "hours 2 on taken out in the replay's transaction, counted again after its commit")
            // A poll in the next hour holds the hours again (it lists A without an end: A counts again from 1 h 30); B, cleared at 3 h, is pruned.
            try poll(store, live("A", "C"), at: base.adding(seconds: 7 * hour))
            #expect(try held() == (sqlite ? 5 : nil))
            #expect(try store.prune(before: base.adding(seconds: 4 * hour)).incidents == 1)
            let pruned = try counts("B pruned")
            #expect(pruned == [0, 1, 1, 2, 1, 1, 1])
            #expect(try held() == (sqlite ? 2 : nil), "B's hours, 1 to 3, taken out")
        }
    }

    @Test("a timeline's window is half-open at whole seconds, as its buckets and list --at are: an appearance at --until is the next window's, a clear at --since was before it",
          arguments: StoreKind.allCases)
    func halfOpenWindow(kind: StoreKind) throws {
        try withStore(kind) { store in
            try poll(store, live("A"), at: t0)                        // A appears at 06:00
            try poll(store, live("B"), at: t0.adding(seconds: 1800))  // complete: A cleared at 06:30, B appears
            func counts(_ since: Int64, _ until: Int64) throws -> [Int] {
                try Timeline.count(store, matching: IncidentQuery(now: t0.adding(seconds: 7200)), by: nil, per: .hour,
                                   since: t0.adding(seconds: since), until: t0.adding(seconds: until)) { _ in 0 }.map(\.count)
            }
            #expect(try counts(-600, 0) == [0], "A appeared at --until: not in [05:50, 06:00)")
            #expect(try counts(0, 600) == [1], "the next window holds it")
            #expect(try counts(-600, 1) == [0, 1], "in the window's last second")
            #expect(try counts(1800, 2400) == [1], "A cleared at --since: only B")
            #expect(try counts(1799, 2400) == [2], "A listed in the window's first second")
        }
    }

    @Test("list --at T in start order with a limit follows a start the provider revised (SQLite: the open intervals keep a copy of it, 0016)",
          arguments: StoreKind.allCases)
    func revisedStart(kind: StoreKind) throws {
        func started(_ id: String, _ minute: Int) -> FeedRecord {
            var revised = incident(id)
            revised.startedAt = t0.adding(seconds: Int64(minute - 60) * 60)
            return .incident(revised)
        }
        try withStore(kind) { store in
            // Started 05:00, 05:10, 05:20, 05:40; then A's start moves to 05:30 and D's to 04:50.
            try poll(store, [started("A", 0), started("B", 10), started("C", 20), started("D", 40)], at: t0)
            try poll(store, [started("A", 30), started("B", 10), started("C", 20), started("D", -10)], at: t1)
            // A page of one looks at the first two candidates: with the old starts, C and D (or A and B).
            func page(_ order: IncidentOrder) throws -> [String] {
                var query = IncidentQuery(now: t2, order: order)
                query.limit = 1
                query.listedAt = t2
                return try list(store, query).map(\.incident.externalID)
            }
            #expect(try page(.started) == ["A"])
            #expect(try page(.startedAscending) == ["D"])
        }
    }

    @Test("list --at T in start order with a limit: an incident listed before its start (planned work), one without a start and one started before T but listed after it each take their place (SQLite: the open intervals read from T's start down and from the index of those listed ahead, 0017)",
          arguments: StoreKind.allCases)
    func startsAroundTheMoment(kind: StoreKind) throws {
        func started(_ id: String, _ start: UTCInstant?) -> FeedRecord {
            var record = incident(id)
            record.startedAt = start
            return .incident(record)
        }
        let (a, l, p, q) = (started("A", t0.adding(seconds: -3600)), started("L", t0.adding(seconds: -600)),
                            started("P", t2.adding(seconds: 3600)), started("Q", t2.adding(seconds: 7200)))
        try withStore(kind) { store in
            // P is listed an hour and more before its start; N has none; L started before t0 + 60 s but is listed from t1,
            // Q too and starts after P.
            try poll(store, [a, p, started("N", nil)], at: t0)
            try poll(store, [a, p, started("N", nil), l, q], at: t1)
            func page(at instant: UTCInstant, _ order: IncidentOrder, limit: Int) throws -> [String] {
                var query = IncidentQuery(now: t2, order: order)
                query.limit = limit
                query.listedAt = instant
                return try list(store, query).map(\.incident.externalID)
            }
            let before = t0.adding(seconds: 60)
            #expect(try (1...4).map { try page(at: before, .started, limit: $0) } == [["P"], ["P", "A"], ["P", "A", "N"], ["P", "A", "N"]])
            #expect(try (1...4).map { try page(at: before, .startedAscending, limit: $0) } == [["A"], ["A", "P"], ["A", "P", "N"], ["A", "P", "N"]])
            #expect(try page(at: t2, .started, limit: 5) == ["Q", "P", "L", "A", "N"])
            #expect(try page(at: t2, .startedAscending, limit: 5) == ["A", "L", "P", "Q", "N"])
            #expect(try page(at: t2, .started, limit: 2) == ["Q", "P"])
        }
    }

    /// The timeline as it was counted before the stores counted it: every listed interval of the
    /// log (``Timeline/forEachListedInterval(_:through:_:)``) walked in Swift over the incidents
    /// the query selects, each counted once in each bucket it touches.
    static func referenceTimeline(_ store: any TestStore, _ query: IncidentQuery, by field: IncidentGrouping?, per size: TimeBucket,
                                  since: UTCInstant, until: UTCInstant, offsetAt: (UTCInstant) -> Int) throws -> [TimelineCount] {
        let starts = Timeline.bucketStarts(per: size, since: since, until: until, offsetAt: offsetAt)
        var incidents: [Int64: (key: String?, endedAt: UTCInstant?)] = [:]
        var all = query
        all.limit = nil
        for stored in try list(store, all) {
            let i = stored.incident
            let key: String? = switch field {
            case .source?: i.source
            case .category?: i.category.rawValue
            case .road?: i.road ?? "-"
            default: nil
            }
            incidents[stored.id] = (key, i.endedAt)
        }
        var counts: [Int: [String?: Int]] = [:]
        var counted: (id: Int64, bucket: Int)?
        try Timeline.forEachListedInterval(store, through: until) { id, start, end in
            guard let incident = incidents[id] else { return }
            let stop = [end, incident.endedAt, until].compactMap { $0 }.min() ?? until
            guard start < stop, stop > since else { return }
            var b = max(0, (starts.lastIndex { $0 <= start.secondsSince1970 }) ?? 0)
            if let counted, counted.id == id { b = max(b, counted.bucket + 1) }
            while b < starts.count && starts[b] < stop.secondsSince1970 {
                counts[b, default: [:]][incident.key, default: 0] += 1
                counted = (id, b)
                b += 1
            }
        }
        return starts.enumerated().flatMap { b, seconds -> [TimelineCount] in
            let start = UTCInstant(secondsSince1970: seconds)
            let local = start.adding(seconds: Int64(offsetAt(start))).rfc3339
            let label = size == .day ? String(local.prefix(10)) : String(local.prefix(10)) + " " + String(local.dropFirst(11).prefix(2))
            guard let groups = counts[b] else { return field == nil ? [TimelineCount(start: start, bucket: label, key: nil, count: 0)] : [] }
            return groups.map { TimelineCount(start: start, bucket: label, key: $0.key, count: $0.value) }.sorted {
                $0.count != $1.count ? $0.count > $1.count : ($0.key ?? "").utf8.lexicographicallyPrecedes(($1.key ?? "").utf8)
            }
        }
    }

    /// The timeline of the month of polls in `store`, counted by the store, against the log
    /// walked in Swift (``referenceTimeline(_:_:by:per:since:until:offsetAt:)``): per hour and
    /// day, grouped, filtered, across a change of offset and from mid-history.
    static func timelineSameAsTheLog(_ store: any TestStore, _ month: MonthOfPolls, seed: UInt64) throws {
        let (start, end) = (MonthOfPolls.start, MonthOfPolls.end)
        // Clocks go back an hour on the 15th at 06:00 UTC: that local day has 25 hours.
        let fallBack = start.adding(seconds: 14 * 86_400 + 6 * 3600)
        let zone: (UTCInstant) -> Int = { $0 < fallBack ? -4 * 3600 : -5 * 3600 }
        let utc: (UTCInstant) -> Int = { _ in 0 }
        func query(_ change: (inout IncidentQuery) -> Void = { _ in }) -> IncidentQuery {
            var query = IncidentQuery(now: end)
            change(&query)
            return query
        }
        let cases: [(String, IncidentQuery, IncidentGrouping?, TimeBucket, UTCInstant, UTCInstant, (UTCInstant) -> Int)] = [
            ("per hour, the month", query(), nil, .hour, start.adding(seconds: -3600), end, utc),
            ("per hour from mid-month, a zone whose clocks go back", query(), nil, .hour, start.adding(seconds: 12 * 86_400 + 1234), end.adding(seconds: -86_400), zone),
            ("per day by category, a zone whose clocks go back", query(), .category, .day, start, end, zone),
            ("per day by source", query(), .source, .day, start.adding(seconds: -86_400), end.adding(seconds: 86_400), utc),
            ("per hour by road, --source gits", query { $0.sources = ["gits"] }, .road, .hour, start, start.adding(seconds: 10 * 86_400), utc),
            ("per day, --category roadwork", query { $0.categories = [.roadwork] }, nil, .day, start, end, zone),
            ("per day, --near", query { $0.near = Coordinate(latitude: 39.7, longitude: -105.0); $0.radiusMeters = 200_000 }, .source, .day, start, end, utc),
            ("per hour, a window of one hour", query(), .source, .hour, start.adding(seconds: 5 * 86_400 + 600), start.adding(seconds: 5 * 86_400 + 4200), utc),
            ("per day by road, a window within one day", query(), .road, .day, start.adding(seconds: 3 * 86_400 + 100), start.adding(seconds: 3 * 86_400 + 40_000), utc),
            ("per day, a window of ten hours within one day", query(), nil, .day, start.adding(seconds: 3 * 86_400), start.adding(seconds: 3 * 86_400 + 36_000), utc),
        ]
        var nonEmpty = 0
        for (name, query, field, size, since, until, offsetAt) in cases {
            let counted = try Timeline.count(store, matching: query, by: field, per: size, since: since, until: until, offsetAt: offsetAt)
            let expected = try Self.referenceTimeline(store, query, by: field, per: size, since: since, until: until, offsetAt: offsetAt)
            #expect(counted == expected, "seed \(seed), \(name): \(counted.count) rows, expected \(expected.count); first difference: \(zip(counted, expected).first { $0 != $1 }.map { "\($0)" } ?? "in length")")
            if expected.contains(where: { $0.count > 0 }) { nonEmpty += 1 }
        }
        // Not vacuous: most cases count something, the 25-hour day is a bucket, and the provider's ends cut intervals.
        #expect(nonEmpty >= cases.count / 2, "seed \(seed)")
        let days = Timeline.bucketStarts(per: .day, since: start, until: end, offsetAt: zone)
        #expect(zip(days, days.dropFirst()).contains { $1 - $0 == 25 * 3600 })
        #expect(!month.endedAt.isEmpty)
    }
}
