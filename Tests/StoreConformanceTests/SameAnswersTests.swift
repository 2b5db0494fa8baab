import Foundation
import IncidentCore
@testable import IncidentPostgres
@testable import IncidentSQLite
import TestSupport
import Testing

/// The same polls into both stores, then every filter, order and count compared: the answers
/// must be equal value for value, ids included, so every output format prints the same bytes.
@Suite("SQLite and PostgreSQL give the same answers to every query")
struct SameAnswersTests {
    static let box = BoundingBox(minLongitude: 126.9, minLatitude: 37.4, maxLongitude: 127.1, maxLatitude: 37.6)!

    /// A varied data set: three sources, every category, Korean and mixed-case ASCII text with
    /// LIKE's special characters, missing values, positions on and just off the box's edges.
    static func incidents(seed: UInt64, changed: Bool) -> [Incident] {
        var random = SplitMix64(seed: seed)
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        let roads: [String?] = ["경부고속도로", "강변북로", "Route 1A", "route 1a", nil, "올림픽대로 (하남방향)"]
        let words = ["Lane CLOSED", "lane closed", "잠실대교 후속", "100% blocked", "under_score", "back\\slash", "사고 처리", "ÉTÉ road", "été road"]
        let edges: [Coordinate?] = [
            Coordinate(latitude: box.minLatitude, longitude: box.minLongitude), Coordinate(latitude: box.maxLatitude, longitude: 127.0),
            Coordinate(latitude: box.maxLatitude + 1e-7, longitude: 127.0), Coordinate(latitude: 37.5, longitude: box.minLongitude - 1e-7),
            nil,
        ]
        return (0..<400).map { index in
            let started = t0.adding(seconds: -Int64(random.next() % 200_000))
            let words = pick(words) + " \(index % 13)"
            let coordinate = index % 10 == 0 ? pick(edges)
                : Coordinate(latitude: 37.3 + Double(random.next() % 4000) / 10_000, longitude: 126.8 + Double(random.next() % 4000) / 10_000)
            var value = Incident(
                source: pick(["gits", "its-seoul", "its-gg"]), externalID: "E\(index)", category: pick(IncidentCategory.allCases),
                providerCategory: pick(["사고", "공사", nil]),
                description: changed && index % 7 == 0 ? "changed \(index)" : words,
                road: pick(roads), location: pick(["(서울방향) 수원IC → 신갈JC", "Exit 12 NB", nil]), direction: pick(["상행", nil]),
                restriction: pick(["1차로", nil]), coordinate: coordinate, linkID: pick(["1040000103", nil]),
                startedAt: index % 11 == 0 ? nil : started, confirmedAt: pick([started, nil]),
                expectedEndAt: pick([started.adding(seconds: 7200), nil]),
                endedAt: index % 5 == 0 ? pick([t0.adding(seconds: -60), t2.adding(seconds: 60)]) : nil)
            // Planned and suspended ones, with and without a start, for the status counts.
            value.validity = [3: .planned, 8: .suspended, 11: .planned][index % 17]
            return value
        }
    }

    static var queries: [(String, IncidentQuery)] {
        var queries: [(String, IncidentQuery)] = []
        func add(_ label: String, _ change: (inout IncidentQuery) -> Void) {
            for order in IncidentOrder.allCases {
                for limit in [nil, 7] {
                    var query = IncidentQuery(now: t1, order: order, limit: limit)
                    change(&query)
                    queries.append(("\(label) order=\(order.rawValue) limit=\(limit.map(String.init) ?? "-")", query))
                }
            }
        }
        add("all") { _ in }
        add("active") { $0.activeOnly = true }
        add("sources") { $0.sources = ["its-seoul", "gits"] }
        add("categories") { $0.categories = [.accident, .roadwork, .other] }
        add("since/until") { $0.startedSince = t0.adding(seconds: -100_000); $0.startedUntil = t0.adding(seconds: -20_000) }
        add("seen since") { $0.seenSince = t1 }
        add("road") { $0.roadContains = "1A" }
        add("road korean") { $0.roadContains = "고속" }
        add("bbox") { $0.boundingBox = box }
        add("near") { $0.near = Coordinate(latitude: 37.5, longitude: 127.0); $0.radiusMeters = 8_000 }
        // Nearest first, PostgreSQL stops reading once no row can come nearer: limits of 1 and 20 too.
        for limit in [1, 20] {
            var query = IncidentQuery(now: t1, order: .distance, limit: limit)
            (query.near, query.radiusMeters) = (Coordinate(latitude: 37.45, longitude: 126.95), 30_000)
            queries.append(("near wide order=distance limit=\(limit)", query))
        }
        for term in ["closed", "LANE", "잠실", "후속 잠실", "100%", "_", "\\", "été", "ÉTÉ", "IC", "e", "changed 1"] {
            add("search \(term)") { $0.search = term }
        }
        add("everything") {
            $0.activeOnly = true
            $0.sources = ["gits", "its-gg"]
            $0.boundingBox = BoundingBox(minLongitude: 126.8, minLatitude: 37.3, maxLongitude: 127.2, maxLatitude: 37.7)
            $0.search = "lane"
        }
        return queries
    }

    @Test("lists, statistics, histories, runs and source summaries are equal")
    func sameAnswers() throws {
        try withStore(.sqlite) { sqlite in
            try withStore(.postgres) { postgres in
                /// One poll per source of `incidents`.
                func polls(_ store: any TestStore, _ incidents: some Collection<Incident>, at instant: UTCInstant,
                           verdict: ResponseVerdict = .complete) throws {
                    for source in ["gits", "its-gg", "its-seoul"] {
                        try poll(store, incidents.filter { $0.source == source }.map(FeedRecord.incident), at: instant, source: source,
                                 verdict: verdict)
                    }
                }
                for store in [sqlite, postgres] as [any TestStore] {
                    try polls(store, Self.incidents(seed: 1, changed: false), at: t0)
                    try polls(store, Self.incidents(seed: 1, changed: true).prefix(280), at: t1)
                    try polls(store, Self.incidents(seed: 1, changed: false).suffix(100), at: t2, verdict: ResponseVerdict(incompleteBecause: ["a test"]))
                    try store.recordRun(IngestRun(source: "its-gg", startedAt: t2, finishedAt: t2, status: .failed, error: "quota", resumesAt: t2))
                }
                var empty: [String] = []
                for (label, query) in Self.queries {
                    let expected = try list(sqlite, query)
                    #expect(try list(postgres, query) == expected, "\(label)")
                    if expected.isEmpty { empty.append(label) }
                }
                #expect(empty == [], "every query finds something, so the comparisons compare rows")
                // SQLite's LIKE folds ASCII letters only: "été" does not find "ÉTÉ".
                var search = IncidentQuery(now: t1)
                search.search = "été"
                #expect(try list(postgres, search).allSatisfy { $0.incident.description?.hasPrefix("été") == true })
                // The data set must reach every branch: cleared, reopened, revised and ended rows, hits at the box's edge.
                let all = try list(sqlite, IncidentQuery(now: t1))
                #expect(all.count == 400)
                #expect(all.contains { $0.clearedAt != nil } && all.contains { $0.revision > 1 })
                #expect(try list(sqlite, IncidentQuery(now: t1, activeOnly: true)).count < 400)
                search.search = "closed"
                #expect(try list(sqlite, search).count > 20)
                for offset in [0, 32_400, -18_000, 19_800] {
                    // Without filters from PostgreSQL's counts (0012), with them from the rows; early, many are planned.
                    for query in [IncidentQuery(now: t1), IncidentQuery(now: t0.adding(seconds: -100_000)),
                                  IncidentQuery(now: t2, activeOnly: true, sources: ["gits"]), IncidentQuery(now: t1, sources: ["gits"])] {
                        let expected = try sqlite.statistics(matching: query, utcOffsetSeconds: offset)
                        #expect(try postgres.statistics(matching: query, utcOffsetSeconds: offset) == expected, "offset \(offset)")
                        if query.sources.isEmpty {
                            #expect(expected.active > 0 && expected.suspended > 0 && expected.cleared > 0, "\(expected)")
                            #expect(expected.planned > 0 || query.now != t0.adding(seconds: -100_000), "\(expected)")
                        }
                    }
                }
                // stats --by: PostgreSQL from its counts without filters and buckets, else from the rows.
                for query in [IncidentQuery(now: t1), IncidentQuery(now: t0.adding(seconds: -100_000)), IncidentQuery(now: t1, sources: ["gits"])] {
                    for field in IncidentGrouping.allCases {
                        for bucket in [nil, TimeBucket.day] {
                            for offset in [0, 32_400, -18_000, 19_800] {
                                let expected = try sqlite.groupCounts(matching: query, by: field, per: bucket, utcOffsetSeconds: offset)
                                #expect(try postgres.groupCounts(matching: query, by: field, per: bucket, utcOffsetSeconds: offset) == expected,
                                        "\(field) per \(bucket?.rawValue ?? "-") offset \(offset)")
                                #expect(expected.count > 1 || field == .source && !query.sources.isEmpty, "\(field)")
                            }
                        }
                    }
                }
                for id in [1, 7, 14, 100, 399, 400, 401] as [Int64] {
                    #expect(try postgres.history(ofIncident: id) == (try sqlite.history(ofIncident: id)), "history \(id)")
                }
                for source in [nil, "gits", "its-gg"] as [String?] {
                    for failuresFirst in [false, true] {
                        #expect(try postgres.runs(source: source, limit: 3, failuresFirst: failuresFirst)
                                == (try sqlite.runs(source: source, limit: 3, failuresFirst: failuresFirst)))
                    }
                }
                #expect(try postgres.sourceSummaries() == (try sqlite.sourceSummaries()))
            }
        }
    }
}
