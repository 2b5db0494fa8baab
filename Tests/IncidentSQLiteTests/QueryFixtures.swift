import Foundation
import IncidentCore
@testable import IncidentSQLite

/// 400 incidents stored by three polls, shaped so that every filter has a rare value (a few
/// rows) and a common one (most rows): 300 from `its`, 100 from `gits`; then a complete `its`
/// poll lists only 10, so 290 are cleared. Positions on a 20 × 20 grid of 0.05° from
/// 37.0N 127.0E; starts one hour apart from `start` (every 80th has none).
enum QueryFixture {
    static let start = UTCInstant(rfc3339: "2024-03-01T00:00:00Z")!
    static let pollA = UTCInstant(rfc3339: "2024-03-20T00:00:00Z")!
    static let pollB = pollA.adding(seconds: 600)
    static let pollC = pollA.adding(seconds: 1200)
    static let now = pollA.adding(seconds: 3600)

    static func incident(_ i: Int) -> Incident {
        let rare = i % 80
        return Incident(
            source: i < 300 ? "its" : "gits", externalID: "E\(i)",
            category: rare == 7 ? .weather : (i % 2 == 0 ? .roadwork : .accident),
            providerCategory: "공사",
            description: rare == 9 ? "[공사] 잠실대교 보수 Work" : "[공사] 방음벽 보수 공사 IC",
            road: rare == 3 ? "강변북로" : (rare == 4 ? nil : "경부고속도로"),
            location: "(서울방향) 수원IC → 신갈JC",
            restriction: "1차로",
            coordinate: Coordinate(latitude: 37.0 + Double(i / 20) * 0.05, longitude: 127.0 + Double(i % 20) * 0.05),
            linkID: nil,
            startedAt: rare == 5 ? nil : start.adding(seconds: Int64(i) * 3600),
            endedAt: rare == 6 ? start : nil)
    }

    static func store(path: String = ":memory:") throws -> SQLiteStore {
        let store = try SQLiteStore(path: path, clock: .fixed(now))
        try poll(store, "its", (0..<300).map(incident), at: pollA)
        try poll(store, "gits", (300..<400).map(incident), at: pollB)
        try poll(store, "its", (0..<10).map(incident), at: pollC)
        return store
    }

    static func poll(_ store: SQLiteStore, _ source: String, _ incidents: [Incident], at time: UTCInstant,
                     dryRun: Bool = false) throws {
        _ = try store.ingest(PollContext(source: source, startedAt: time, dryRun: dryRun),
                             ListProducer(incidents: incidents).callAsFunction)
    }

    /// `query` with `change` applied.
    static func query(limit: Int? = nil, order: IncidentOrder = .started, _ change: (inout IncidentQuery) -> Void = { _ in }) -> IncidentQuery {
        var query = IncidentQuery(now: now, order: order, limit: limit)
        change(&query)
        return query
    }
}

/// What a query must return, computed from every stored row in Swift: the meaning of each
/// filter and order, independent of SQL and of the index that drives it.
enum Reference {
    static func list(_ all: [StoredIncident], _ query: IncidentQuery) -> [StoredIncident] {
        let selected = all.filter { matches($0, query) }.sorted { before($0, $1, query) }
        return Array(selected.prefix(query.limit ?? selected.count))
    }

    static func matches(_ stored: StoredIncident, _ query: IncidentQuery) -> Bool {
        let incident = stored.incident
        if query.activeOnly && !stored.isActive(at: query.now) { return false }
        if !query.sources.isEmpty && !query.sources.contains(incident.source) { return false }
        if !query.categories.isEmpty && !query.categories.contains(incident.category) { return false }
        if let since = query.startedSince, !(incident.startedAt.map { $0 >= since } ?? false) { return false }
        if let until = query.startedUntil, !(incident.startedAt.map { $0 < until } ?? false) { return false }
        if let seen = query.seenSince, stored.lastSeenAt < seen { return false }
        if let interval = query.inForce, !stored.isInForce(during: interval) { return false }
        // Listed at the instant: the fixture reopens nothing, so an incident was listed from its first sighting
        // until its clear, unless its provider's end came first.
        if let at = query.listedAt, !(stored.firstSeenAt <= at && (stored.clearedAt.map { at < $0 } ?? true)
                                      && (incident.endedAt.map { at < $0 } ?? true)) { return false }
        if let after = query.afterID, stored.id <= after { return false }
        if let before = query.beforeID, stored.id >= before { return false }
        if let road = query.roadContains, !contains(incident.road ?? "", road.nfc, foldingASCII: false) { return false }
        if let box = query.boundingBox, !(incident.coordinate.map(box.contains) ?? false) { return false }
        if let center = query.near, !(incident.coordinate.map { $0.distance(to: center) <= query.radiusMeters } ?? false) {
            return false
        }
        if let search = query.search {
            for term in search.nfc.split(whereSeparator: \.isWhitespace).map(String.init)
            where !contains(incident.description ?? "", term, foldingASCII: true) && !contains(incident.location ?? "", term, foldingASCII: true) {
                return false
            }
        }
        return true
    }

    /// Whether the UTF-8 bytes of `term` occur in those of `text` (SQLite's `instr`, or `LIKE`
    /// with its ASCII-only case folding).
    static func contains(_ text: String, _ term: String, foldingASCII: Bool) -> Bool {
        func bytes(_ s: String) -> [UInt8] {
            foldingASCII ? s.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 } : Array(s.utf8)
        }
        return bytes(text).firstRange(of: bytes(term)) != nil
    }

    static func before(_ a: StoredIncident, _ b: StoredIncident, _ query: IncidentQuery) -> Bool {
        func start(_ s: StoredIncident) -> Int64? { s.incident.startedAt?.secondsSince1970 }
        switch query.order {
        case .distance where query.near != nil:
            let center = query.near ?? Coordinate(latitude: 0, longitude: 0)!
            let da = a.incident.coordinate?.distance(to: center) ?? .infinity, db = b.incident.coordinate?.distance(to: center) ?? .infinity
            return da != db ? da < db : a.id < b.id
        case .started, .distance:
            switch (start(a), start(b)) {
            case let (x?, y?) where x != y: return x > y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return a.id > b.id
            }
        case .startedAscending:
            switch (start(a), start(b)) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return a.id < b.id
            }
        case .lastSeen:
            return a.lastSeenAt != b.lastSeenAt ? a.lastSeenAt > b.lastSeenAt : a.id > b.id
        case .source:
            return a.incident.source != b.incident.source ? a.incident.source < b.incident.source
                : a.incident.externalID < b.incident.externalID
        case .id:
            return a.id < b.id
        case .idDescending:
            return a.id > b.id
        }
    }
}
