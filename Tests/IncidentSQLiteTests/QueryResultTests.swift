import Foundation
import IncidentCore
@testable import IncidentSQLite
import Testing

/// Whatever index drives a query, it returns what the filters mean: every case is checked
/// against ``Reference``, computed in Swift from every stored row.
@Suite("Query results do not depend on the index that drives them")
struct QueryResultTests {
    static let store = Result { try QueryFixture.store() }
    static let rows = Result { try store.get().incidents(matching: IncidentQuery(now: QueryFixture.now, order: .source)) }

    static func everyRow() throws -> [StoredIncident] { try rows.get() }

    static func ids(_ rows: [StoredIncident]) -> [String] { rows.map(\.incident.externalID) }

    /// Each plan case, with its limit, without a limit, and in every order.
    static var variants: [(String, IncidentQuery)] {
        QueryPlanTests.cases.flatMap { testCase -> [(String, IncidentQuery)] in
            var all: [(String, IncidentQuery)] = [(testCase.name, testCase.query)]
            for order in IncidentOrder.allCases {
                var query = testCase.query
                query.order = order
                query.limit = nil
                all.append(("\(testCase.name), \(order.rawValue), every row", query))
                query.limit = 7
                all.append(("\(testCase.name), \(order.rawValue), 7 rows", query))
            }
            return all
        }
    }

    @Test("every filter, combination, order and limit returns the reference rows in the reference order")
    func matchesReference() throws {
        let store = try Self.store.get()
        let all = try Self.everyRow()
        #expect(all.count == 400)
        var nonEmpty = 0
        for (name, query) in Self.variants {
            let expected = Reference.list(all, query)
            if !expected.isEmpty { nonEmpty += 1 }
            #expect(Self.ids(try store.incidents(matching: query)) == Self.ids(expected), "\(name)")
        }
        // The cases are not vacuous: most select something.
        #expect(nonEmpty > Self.variants.count * 3 / 4)
    }

    @Test("--near: exactly the incidents within the radius, nearest first; a page is the nearest few", arguments: [1, 5, 30, 400])
    func nearest(limit: Int) throws {
        let store = try Self.store.get()
        let all = try Self.everyRow()
        for (latitude, longitude, radius) in [(37.0, 127.0, 6000.0), (37.52, 127.48, 12_000), (37.26, 127.31, 5_600), (38.5, 128.5, 1000)] {
            var query = QueryFixture.query(limit: limit, order: .distance)
            query.near = Coordinate(latitude: latitude, longitude: longitude)
            query.radiusMeters = radius
            let expected = Reference.list(all, query)
            #expect(Self.ids(try store.incidents(matching: query)) == Self.ids(expected), "\(latitude),\(longitude) \(radius) m, \(limit)")
        }
    }

    /// 3,000 incidents: a dense cluster of 2,500 around 37.5N 127.0E, some on the very same spot,
    /// and 500 spread over a degree; scattered by additive recurrences (fractional parts of
    /// multiples of irrational numbers), the same in every run.
    static let dense = Result { () throws -> (SQLiteStore, [StoredIncident]) in
        func scatter(_ i: Int, _ step: Double, _ range: ClosedRange<Double>) -> Double {
            let fraction = (Double(i) * step).truncatingRemainder(dividingBy: 1)
            return range.lowerBound + fraction * (range.upperBound - range.lowerBound)
        }
        let (golden, root2) = ((5.0.squareRoot() - 1) / 2, 2.0.squareRoot())
        let incidents = (0..<3000).map { i -> Incident in
            let (latitude, longitude) = i < 2500
                ? (i % 50 == 0 ? (37.5, 127.0) : (scatter(i, golden, 37.48...37.52), scatter(i, root2, 126.975...127.025)))
                : (scatter(i, golden, 37.0...38.0), scatter(i, root2, 126.5...127.5))
            return Incident(source: "gits", externalID: "D\(i)", category: .accident, description: "d",
                            coordinate: Coordinate(latitude: latitude, longitude: longitude),
                            startedAt: QueryFixture.start.adding(seconds: Int64(i * 60)))
        }
        let store = try memoryStore()
        try QueryFixture.poll(store, "gits", incidents, at: t0)
        return (store, try store.incidents(matching: IncidentQuery(now: t0, order: .source)))
    }

    @Test("--near in a dense cluster: the nearest page comes from a smaller circle that surely holds it, and is exact",
          arguments: [1, 10, 50, 200])
    func nearestInCluster(limit: Int) throws {
        let (store, all) = try Self.dense.get()
        for (latitude, longitude, radius) in [(37.5, 127.0, 5000.0), (37.51, 127.01, 3000), (37.48, 126.98, 20_000), (37.3, 127.3, 5000)] {
            var query = IncidentQuery(now: t0, order: .distance, limit: limit)
            query.near = Coordinate(latitude: latitude, longitude: longitude)
            query.radiusMeters = radius
            #expect(Self.ids(try store.incidents(matching: query)) == Self.ids(Reference.list(all, query)), "\(latitude),\(longitude) \(radius) m")
        }
        // In the cluster, the circle read for a small page is much smaller than the one asked
        // for; 200 of the 2,500 in the box are too many for a smaller one to pay off.
        let center = try #require(Coordinate(latitude: 37.5, longitude: 127.0))
        let read = try store.withDatabase { try Selection.nearestRadius(center, limit: limit, radius: 5000, db: $0) }
        if limit <= 50 { #expect(read < 2500) } else { #expect(read == 5000) }
    }

    @Test("the SQL distance is Coordinate.distance(to:) to a micrometre")
    func distanceInSQL() throws {
        let store = try Self.store.get()
        let center = try #require(Coordinate(latitude: 37.2636, longitude: 127.0286))
        for stored in try Self.everyRow().prefix(50) {
            let coordinate = try #require(stored.incident.coordinate)
            let sql = try store.withDatabase { db -> Double? in
                var value: Double?
                try db.query("SELECT \(Selection.distanceFromNear(latitude: ":lat", longitude: ":lon"))",
                             ["lat": .real(coordinate.latitude), "lon": .real(coordinate.longitude),
                              "near_lat": .real(center.latitude), "near_lon": .real(center.longitude)]) { value = $0.double(at: 0) }
                return value
            }
            #expect(abs((sql ?? -1) - center.distance(to: coordinate)) < 1e-6)
        }
    }

    /// Search texts of every awkward kind. Each gives the reference rows or a QueryError, never
    /// an SQL error, whether the full-text index drives (a rare text, no limit) or not.
    static let searchTexts: [String] = [
        "잠실대교", "잠실", "잠", "대교 보수", "방음벽", "보수", "work", "WORK", "wOrK ic", "ic", "IC",
        "잠실대교".decomposedStringWithCanonicalMapping, "방음벽".decomposedStringWithCanonicalMapping,
        "😀", "👩‍👩‍👧", "👩‍👩‍👧 잠실", "🇰🇷🇰🇷", "\u{301}", "e\u{301}", "ㄱ", "ㄱㄴㄷ",
        "\"", "\"\"", "\"잠실\"", "'", "''", "*", "잠실*", "^잠실", "NEAR(잠실 보수)", "잠실 OR 방음벽", "AND", "OR", "NOT",
        "-잠실", "+잠실", "잠실:", "col:잠실", "(", ")", "()", "{잠실}", "[공사]", "%", "_", "\\", "100%", "a_b", "\\%",
        "→", "수원IC → 신갈JC", "(서울방향)", String(repeating: "잠", count: 256), String(repeating: "잠실대교", count: 64),
        String(repeating: "ab ", count: 85),
    ]

    @Test("any search text gives the reference rows, through the full-text index or not", arguments: searchTexts)
    func search(_ text: String) throws {
        let store = try Self.store.get()
        let all = try Self.everyRow()
        for limit in [nil, 3] as [Int?] {
            let query = QueryFixture.query(limit: limit) { $0.search = text }
            #expect(Self.ids(try store.incidents(matching: query)) == Self.ids(Reference.list(all, query)), "\(text) \(String(describing: limit))")
            let stats = try store.statistics(matching: query, utcOffsetSeconds: 0)
            #expect(stats.total == all.filter { Reference.matches($0, query) }.count)
        }
    }

    @Test("search text the store cannot use is a QueryError that says why", arguments: [
        ("", "no words"), ("   ", "no words"), ("\t\n", "no words"),
        ("잠실\u{0}", "control character U+0000"), ("\u{7}", "control character U+0007"), ("a\u{1B}[31m", "control character U+001B"),
        (String(repeating: "잠", count: 257), "257 characters long; search for at most 256"),
        (String(repeating: "👩‍👩‍👧", count: 52), "260 characters long"),
    ])
    func unusableSearch(_ text: String, _ reason: String) throws {
        let store = try Self.store.get()
        let query = QueryFixture.query(limit: 5) { $0.search = text }
        #expect { try store.incidents(matching: query) } throws: { error in
            (error as? QueryError)?.message.contains(reason) == true
        }
        #expect { try store.statistics(matching: query, utcOffsetSeconds: 0) } throws: { error in
            (error as? QueryError)?.message.contains(reason) == true
        }
    }

    @Test("the windows of a long term stay few, and every window is an FTS5 string")
    func windows() {
        #expect(SearchText.windows("잠실") == [])
        #expect(SearchText.windows("잠실대") == ["\"잠실대\""])
        #expect(SearchText.windows("잠실대교") == ["\"잠실대\"", "\"실대교\""])
        #expect(SearchText.windows("a\"b") == ["\"a\"\"b\""])
        #expect(SearchText.windows(String(repeating: "x", count: 256)).count == SearchText.maxWindowsPerTerm)
    }
}

