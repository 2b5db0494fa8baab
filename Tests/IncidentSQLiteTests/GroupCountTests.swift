import IncidentCore
@testable import IncidentSQLite
import Testing

/// `stats --by FIELD --per day|hour`: the store's GROUP BY gives exactly what the generic
/// counter (every matching incident read and counted in Swift) gives, for every field, bucket
/// and offset, and the values a person would count by hand.
@Suite("SQLite group counts")
struct GroupCountTests {
    static func at(_ text: String) -> UTCInstant { UTCInstant(rfc3339: text)! }
    static let now = at("2024-01-02T00:00:00Z")

    static func item(_ id: String, source: String = "gits", category: IncidentCategory = .accident, road: String?,
                     restriction: String? = nil, started: String?, ended: String? = nil,
                     latitude: Double = 37.27, longitude: Double = 127.05) -> Incident {
        Incident(source: source, externalID: id, category: category, providerCategory: road == nil ? nil : "사고",
                 description: "d", road: road, restriction: restriction,
                 coordinate: Coordinate(latitude: latitude, longitude: longitude),
                 startedAt: started.map(at), endedAt: ended.map(at))
    }

    /// Starts on both sides of midnight and of the hour in several zones; one without a start,
    /// one without a road, one ended by the provider, one cleared, one far away.
    static let incidents = [
        item("A", road: "경부고속도로", restriction: "1차로", started: "2023-12-31T14:59:59Z"),
        item("B", road: "경부고속도로", started: "2023-12-31T15:00:00Z"),
        item("C", category: .roadwork, road: "영동고속도로", started: "2023-12-31T15:30:00Z", ended: "2024-01-01T00:00:00Z"),
        item("D", road: nil, started: "2024-01-01T04:45:00Z"),
        item("E", road: "경부고속도로", started: nil),
        item("F", source: "its", category: .weather, road: "경부선", restriction: "전면", started: "2024-01-01T23:10:00Z",
             latitude: 35.1, longitude: 129.0),
        item("G", source: "its", road: "경부선", started: "2023-12-31T18:20:00Z"),
    ]

    static func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:", clock: .fixed(t0))
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0),
                             ListProducer(incidents: incidents.filter { $0.source == "gits" }).callAsFunction)
        _ = try store.ingest(PollContext(source: "its", startedAt: t0),
                             ListProducer(incidents: incidents.filter { $0.source == "its" }).callAsFunction)
        // G is no longer listed by a complete poll: cleared.
        _ = try store.ingest(PollContext(source: "its", startedAt: t1),
                             ListProducer(incidents: incidents.filter { $0.externalID == "F" }).callAsFunction)
        return store
    }

    static let queries: [(String, IncidentQuery)] = {
        var active = IncidentQuery(now: now, activeOnly: true)
        active.order = .source
        var near = IncidentQuery(now: now)
        near.near = Coordinate(latitude: 37.27, longitude: 127.05)
        near.radiusMeters = 1_000
        var gits = IncidentQuery(now: now, sources: ["gits"])
        gits.limit = 1  // ignored by counts
        return [("all", IncidentQuery(now: now)), ("active", active), ("near", near), ("gits", gits)]
    }()

    @Test("the store's grouping equals the generic counter for every field, bucket, offset and filter",
          arguments: IncidentGrouping.allCases)
    func sameAsGeneric(field: IncidentGrouping) throws {
        let store = try Self.store()
        for offset in [0, 32_400, -18_000, 19_800, 20_700] {
            for bucket in [nil] + TimeBucket.allCases.map(Optional.some) {
                for (name, query) in Self.queries {
                    let sql = try store.groupCounts(matching: query, by: field, per: bucket, utcOffsetSeconds: offset)
                    let generic = try GroupCounter.count(store, matching: query, by: field, per: bucket) { _ in offset }
                    #expect(sql == generic, "\(field) per \(String(describing: bucket)) at \(offset) s, \(name)")
                    #expect(sql.map(\.count).reduce(0, +) == (name == "near" ? 6 : name == "all" ? 7 : 5),
                            "every matching incident is counted once: \(field), \(name)")
                }
            }
        }
    }

    @Test("by road per day at +09:00: local dates, empty for no start and no road, largest count first within a day")
    func roadPerDay() throws {
        let counts = try Self.store().groupCounts(matching: IncidentQuery(now: Self.now), by: .road, per: .day, utcOffsetSeconds: 32_400)
        #expect(counts == [
            GroupCount(bucket: "", key: "경부고속도로", count: 1),
            GroupCount(bucket: "2023-12-31", key: "경부고속도로", count: 1),
            GroupCount(bucket: "2024-01-01", key: "경부고속도로", count: 1),
            GroupCount(bucket: "2024-01-01", key: "경부선", count: 1),
            GroupCount(bucket: "2024-01-01", key: "영동고속도로", count: 1),
            GroupCount(bucket: "2024-01-01", key: "", count: 1),
            GroupCount(bucket: "2024-01-02", key: "경부선", count: 1),
        ].sorted { ($0.bucket ?? "", -$0.count, $0.key) < ($1.bucket ?? "", -$1.count, $1.key) })
    }

    @Test("by status: active, ended by the provider, cleared; by hour at -05:00 in hour order")
    func statusAndHour() throws {
        let store = try Self.store()
        let all = IncidentQuery(now: Self.now)
        #expect(try store.groupCounts(matching: all, by: .status, per: nil, utcOffsetSeconds: 0) == [
            GroupCount(key: "active", count: 5), GroupCount(key: "cleared", count: 1), GroupCount(key: "ended", count: 1),
        ])
        #expect(try store.groupCounts(matching: all, by: .hour, per: nil, utcOffsetSeconds: -18_000) == [
            GroupCount(key: "", count: 1), GroupCount(key: "09", count: 1), GroupCount(key: "10", count: 2),
            GroupCount(key: "13", count: 1), GroupCount(key: "18", count: 1), GroupCount(key: "23", count: 1),
        ])
    }
}
