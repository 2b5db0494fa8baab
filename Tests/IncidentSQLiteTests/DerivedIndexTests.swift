import Foundation
import IncidentCore
@testable import IncidentSQLite
import Testing

/// The full-text index, the R*Tree and incident_counts hold exactly what `incidents` holds after
/// every kind of write: new incidents, changes of each derived column, reopening, clearing,
/// duplicates, rejected records, dry runs, failed polls and pruning.
@Suite("Derived structures in step with incidents (issue 13.1–13.3)")
struct DerivedIndexTests {
    /// Fails unless every derived structure equals one rebuilt from `incidents` now.
    static func expectInStep(_ store: SQLiteStore, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = try store.incidents(matching: IncidentQuery(now: QueryFixture.now, order: .source))
        try store.withDatabase { (db: Database) throws in
            // Counts: recounted in Swift from the rows.
            var expected: [String: Int] = [:]
            for stored in rows {
                let incident = stored.incident
                let minute = incident.startedAt.map { String($0.rfc3339.dropFirst(11).prefix(5)) } ?? ""
                for key in ["source\t\(incident.source)", "category\t\(incident.category.rawValue)", "road\t\(incident.road ?? "")",
                            "road_ref\t\(incident.roadRef ?? "")", "start_minute\t\(minute)"] {
                    expected[key, default: 0] += 1
                }
            }
            var counts: [String: Int] = [:]
            try db.query("SELECT dimension, key, incidents FROM incident_counts") { counts["\($0.string(at: 0) ?? "")\t\($0.string(at: 1) ?? "")"] = $0.int(at: 2) }
            #expect(counts == expected, "counts after \(step)", sourceLocation: sourceLocation)

            // R*Tree: one box per positioned incident, holding its extent (its geometry's box, or
            // its position), rounded outwards by at most a float step.
            var boxes: [Int64: (Double, Double, Double, Double)] = [:]
            try db.query("SELECT id, min_longitude, max_longitude, min_latitude, max_latitude FROM incidents_bbox") {
                boxes[$0.int64(at: 0) ?? 0] = ($0.double(at: 1) ?? 0, $0.double(at: 2) ?? 0, $0.double(at: 3) ?? 0, $0.double(at: 4) ?? 0)
            }
            let positioned = rows.filter { $0.incident.coordinate != nil }
            #expect(Set(boxes.keys) == Set(positioned.map(\.id)), "R*Tree ids after \(step)", sourceLocation: sourceLocation)
            for stored in positioned {
                guard let e = stored.incident.extent, let box = boxes[stored.id] else { continue }
                #expect(box.0 <= e.minLongitude && e.maxLongitude <= box.1 && box.2 <= e.minLatitude && e.maxLatitude <= box.3
                        && (box.1 - box.0) - (e.maxLongitude - e.minLongitude) < 1e-4 && (box.3 - box.2) - (e.maxLatitude - e.minLatitude) < 1e-4,
                        "box of \(stored.id) after \(step)", sourceLocation: sourceLocation)
            }

            // Full-text index: every term of an index rebuilt from incidents lists the same rows.
            try db.execute("""
                CREATE VIRTUAL TABLE temp_rebuilt USING fts5(description, location, content = 'incidents', content_rowid = 'id',
                    tokenize = 'trigram', detail = 'none', columnsize = 0);
                INSERT INTO temp_rebuilt (temp_rebuilt) VALUES ('rebuild');
                CREATE VIRTUAL TABLE temp_rebuilt_terms USING fts5vocab(temp_rebuilt, 'row');
                CREATE VIRTUAL TABLE temp_search_terms USING fts5vocab(incidents_search, 'row');
                """)
            func terms(_ table: String) throws -> [String: Int] {
                var terms: [String: Int] = [:]
                try db.query("SELECT term, doc FROM \(table)") { terms[$0.string(at: 0) ?? ""] = $0.int(at: 1) }
                return terms
            }
            let rebuilt = try terms("temp_rebuilt_terms")
            #expect(try terms("temp_search_terms") == rebuilt, "full-text terms after \(step)", sourceLocation: sourceLocation)
            for term in rebuilt.keys.sorted().prefix(200) {
                func ids(_ table: String) throws -> [Int64] {
                    var ids: [Int64] = []
                    try db.query("SELECT rowid FROM \(table) WHERE \(table) MATCH :term ORDER BY rowid",
                                 ["term": .text("\"" + term.replacingOccurrences(of: "\"", with: "\"\"") + "\"")]) { ids.append($0.int64(at: 0) ?? 0) }
                    return ids
                }
                #expect(try ids("incidents_search") == ids("temp_rebuilt"), "rows of \(term) after \(step)", sourceLocation: sourceLocation)
            }
            try db.execute("DROP TABLE temp_search_terms; DROP TABLE temp_rebuilt_terms; DROP TABLE temp_rebuilt;")
        }
    }

    static func varied(_ id: String, description: String = "[사고] 경부고속도로 잠실대교 추돌", road: String? = "경부고속도로",
                       category: IncidentCategory = .accident, coordinate: Coordinate? = Coordinate(latitude: 37.27, longitude: 127.05),
                       startedAt: UTCInstant? = UTCInstant(rfc3339: "2023-03-21T05:13:00Z"), location: String? = "(서울방향) 수원IC") -> Incident {
        Incident(source: "gits", externalID: id, category: category, description: description, road: road, location: location,
                 coordinate: coordinate, startedAt: startedAt)
    }

    @Test("after inserts, changes of every derived column, reopening, clearing, duplicates, rejects, dry runs, failed polls and pruning")
    func inStep() throws {
        let store = try memoryStore()
        let poll = { (records: [FeedRecord], time: UTCInstant, dryRun: Bool) in
            _ = try store.ingest(PollContext(source: "gits", startedAt: time, dryRun: dryRun), ListProducer(records: records).callAsFunction)
        }
        let base = ["A", "B", "C", "D", "E"].map { Self.varied($0) }
        try poll(base.map(FeedRecord.incident), t0, false)
        try Self.expectInStep(store, "the first poll")

        // Each incident changes one derived column; E is not listed (cleared); A is listed twice.
        let changed: [Incident] = [
            Self.varied("A", description: "[공사] 방음벽 보수"),
            Self.varied("B", road: "강변북로"),
            Self.varied("C", category: .roadwork, coordinate: Coordinate(latitude: 35.1, longitude: 129.0)),
            Self.varied("D", coordinate: nil, startedAt: UTCInstant(rfc3339: "2023-03-22T23:59:00Z"), location: nil),
            Self.varied("A", description: "listed twice: the first is kept"),
            Self.varied("F", road: nil, startedAt: nil),
        ]
        try poll(changed.map(FeedRecord.incident) + [.rejected(RejectedRecord(externalID: "B", position: "itemList 7", reason: "bad date"))], t1, false)
        try Self.expectInStep(store, "changes, a duplicate, a reject and a clearing")
        #expect(try allRows(store).first { $0.incident.externalID == "E" }?.clearedAt == t1)

        // A dry run and a failed poll leave everything as it was.
        try poll([.incident(Self.varied("G")), .incident(Self.varied("C", description: "dry"))], t2, true)
        #expect(throws: ListProducer.Boom.self) {
            _ = try store.ingest(PollContext(source: "gits", startedAt: t2),
                                 ListProducer(incidents: [Self.varied("H"), Self.varied("A", description: "failed"), Self.varied("I")],
                                              failAfter: 2).callAsFunction)
        }
        try Self.expectInStep(store, "a dry run and a failed poll")

        // E comes back with new values (reopened), the rest unchanged; then everything clears and is pruned.
        try poll((changed.prefix(4) + [Self.varied("E", description: "다시 [사고] 올림픽대로", road: "올림픽대로"), changed[5]]).map(FeedRecord.incident),
                 t2, false)
        try Self.expectInStep(store, "a reopening")
        try poll([.incident(Self.varied("A", description: "[공사] 방음벽 보수"))], t2.adding(seconds: 60), false)
        _ = try store.prune(before: t2.adding(seconds: 120), batchSize: 2)
        #expect(try allRows(store).map(\.incident.externalID) == ["A"])
        try Self.expectInStep(store, "pruning in batches")
    }

    @Test("the 400-incident fixture is in step, and a poll's new incidents are searchable at once")
    func fixtureInStep() throws {
        let store = try QueryFixture.store()
        try Self.expectInStep(store, "the fixture")
        try QueryFixture.poll(store, "gits", [Self.varied("new-1", description: "[사고] 서해대교 다중추돌")], at: QueryFixture.now)
        var query = QueryFixture.query()
        query.search = "서해대교"
        #expect(try store.incidents(matching: query).map(\.incident.externalID) == ["new-1"])
        query.search = "다중추돌 서해"
        query.limit = 1
        #expect(try store.incidents(matching: query).map(\.incident.externalID) == ["new-1"])
    }
}

@Suite("stats from incident_counts and the active-set index (issue 13.4)")
struct StatisticsTests {
    @Test("a cut road list says of how many; the counts path and the grouped path agree exactly", arguments: [0, 9 * 3600, 5 * 3600 + 1800, -(3 * 3600 + 1800), 14 * 3600])
    func topOfMany(utcOffsetSeconds: Int) throws {
        let store = try memoryStore()
        // 35 roads: road Rn has n + 1 incidents; some have no road or no start.
        var incidents: [Incident] = []
        for road in 0..<35 {
            for k in 0...road {
                let i = incidents.count
                incidents.append(Incident(source: i % 3 == 0 ? "its" : "gits", externalID: "\(i)", category: k % 4 == 0 ? .weather : .accident,
                                          road: String(format: "R%02d", road), startedAt: UTCInstant(secondsSince1970: 1_679_000_000 + Int64(i) * 1_337),
                                          endedAt: i % 5 == 0 ? t0 : nil))
            }
        }
        incidents.append(Incident(source: "gits", externalID: "no-road", category: .other))
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0), ListProducer(incidents: incidents.filter { $0.source == "gits" }).callAsFunction)
        _ = try store.ingest(PollContext(source: "its", startedAt: t0), ListProducer(incidents: incidents.filter { $0.source == "its" }).callAsFunction)
        // A later complete its poll lists a third of its incidents.
        let its = incidents.filter { $0.source == "its" }
        _ = try store.ingest(PollContext(source: "its", startedAt: t1), ListProducer(incidents: Array(its.prefix(its.count / 3))).callAsFunction)

        let now = t2
        let fast = try store.statistics(matching: IncidentQuery(now: now), utcOffsetSeconds: utcOffsetSeconds)
        var everything = IncidentQuery(now: now)
        everything.seenSince = UTCInstant(secondsSince1970: 0)  // a filter that keeps every row
        let grouped = try store.statistics(matching: everything, utcOffsetSeconds: utcOffsetSeconds)
        #expect(fast == grouped)

        let rows = try allRows(store)
        #expect(fast.total == 631 && rows.count == 631)
        #expect(fast.active == rows.filter { $0.isActive(at: now) }.count)
        #expect(fast.cleared == rows.filter { $0.clearedAt != nil }.count && fast.cleared > 0)
        #expect(fast.distinctRoads == 36)
        #expect(fast.byRoad.count == 20)
        #expect(fast.byRoad.first! == ("R34", 35) && fast.byRoad.last! == ("R15", 16))
        #expect(fast.bySource.map(\.0) == ["gits", "its"] && fast.bySource.map(\.1).reduce(0, +) == 631)
        var hours: [String: Int] = [:]
        for row in rows {
            guard let start = row.incident.startedAt else { hours["", default: 0] += 1; continue }
            let local = ((Int(start.secondsSince1970) + utcOffsetSeconds) % 86_400 + 86_400) % 86_400
            hours[String(format: "%02d", local / 3600), default: 0] += 1
        }
        #expect(fast.byHour.map(\.0) == hours.keys.sorted())
        #expect(fast.byHour.map(\.1) == hours.keys.sorted().map { hours[$0] ?? 0 })
        #expect(fast.byHour.first?.0 == "")
    }

    @Test("filtered stats count exactly the rows the listing returns", arguments: QueryPlanTests.cases.map(\.name))
    func filtered(_ name: String) throws {
        let store = try QueryPlanTests.store.get()
        var query = try #require(QueryPlanTests.cases.first { $0.name == name }).query
        query.limit = nil
        let rows = try store.incidents(matching: query)
        let stats = try store.statistics(matching: query, utcOffsetSeconds: 0)
        #expect(stats.total == rows.count)
        #expect(stats.active == rows.filter { $0.isActive(at: query.now) }.count)
        #expect(stats.cleared == rows.filter { $0.clearedAt != nil }.count)
        #expect(stats.byCategory.map(\.1).reduce(0, +) == rows.count)
        #expect(stats.distinctRoads == Set(rows.map { $0.incident.road ?? "" }).count)
    }
}

/// A poll into a database with no incidents drops the indexes of `incidents` for its load and
/// creates them again from the loaded rows (issue 23): the schema after it is the migrated one,
/// whether the poll commits, fails or is a dry run, and the structures are in step.
@Suite("A first poll builds the indexes of incidents after its load (issue 23)")
struct FreshLoadIndexTests {
    /// The indexes of `incidents` (name and SQL), their root pages (new when an index is
    /// created again) and the schema version.
    static func schema(_ store: SQLiteStore) throws -> (indexes: [String], rootPages: [Int64], version: Int64) {
        try store.withDatabase { (db: Database) throws in
            var indexes: [String] = [], rootPages: [Int64] = []
            try db.query("SELECT name, coalesce(sql, ''), rootpage FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'incidents' ORDER BY name") {
                indexes.append("\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")")
                rootPages.append($0.int64(at: 2) ?? 0)
            }
            return (indexes, rootPages, try db.scalarInt("PRAGMA schema_version") ?? -1)
        }
    }

    @Test("dropped and created again only for a poll into an empty table; kept by a failed poll and a dry run")
    func rebuiltAfterFreshLoad() throws {
        let store = try memoryStore()
        let migrated = try Self.schema(store)
        #expect(migrated.indexes.count == 11)  // the unique key and the ten of migrations 0005–0010, 0014, 0015 and 0017
        let intervalIndexes = "SELECT name || ' ' || sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'incident_listed_open' ORDER BY name"
        func indexesOfIntervals() throws -> [String] {
            try store.withDatabase { (db: Database) throws in
                var lines: [String] = []
                try db.query(intervalIndexes) { lines.append($0.string(at: 0) ?? "") }
                return lines
            }
        }
        let migratedIntervalIndexes = try indexesOfIntervals()
        #expect(migratedIntervalIndexes.count == 4)  // 0013, 0016 (two) and 0017
        let records = ["A", "B", "C"].map { DerivedIndexTests.varied($0) }

        #expect(throws: ListProducer.Boom.self) {
            _ = try store.ingest(PollContext(source: "gits", startedAt: t0), ListProducer(incidents: records, failAfter: 2).callAsFunction)
        }
        #expect(try Self.schema(store) == migrated)
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0, dryRun: true), ListProducer(incidents: records).callAsFunction)
        #expect(try Self.schema(store) == migrated)
        #expect(try allRows(store).isEmpty)

        // The first poll: each of the ten dropped and created (two schema changes each), and
        // the four of the open intervals (incident_listed_open is empty too).
        _ = try store.ingest(PollContext(source: "gits", startedAt: t0), ListProducer(incidents: records).callAsFunction)
        let afterFirst = try Self.schema(store)
        #expect(afterFirst.indexes == migrated.indexes)
        #expect(afterFirst.version == migrated.version + 28)
        #expect(try indexesOfIntervals() == migratedIntervalIndexes)
        try DerivedIndexTests.expectInStep(store, "a first poll")
        try store.withDatabase { (db: Database) throws in
            #expect(try db.queryPlan("SELECT id FROM incidents WHERE road = '경부고속도로'").joined().contains("incidents_by_road"))
            var integrity = ""
            try db.query("PRAGMA integrity_check") { integrity = $0.string(at: 0) ?? "" }
            #expect(integrity == "ok")
        }

        // A later poll (a new incident, one not listed: cleared through incidents_active) keeps the indexes.
        let second = try store.ingest(PollContext(source: "gits", startedAt: t1),
                                      ListProducer(incidents: [records[0], records[1], DerivedIndexTests.varied("D")]).callAsFunction)
        #expect(second.counts.inserted == 1 && second.counts.cleared == 1)
        let afterSecond = try Self.schema(store)
        #expect(afterSecond.indexes == afterFirst.indexes && afterSecond.rootPages == afterFirst.rootPages)
        try DerivedIndexTests.expectInStep(store, "a second poll")
    }
}
