import IncidentCore
@testable import IncidentSQLite
import Testing

/// The plan SQLite runs for each filter of `incidents list` and `stats`, from EXPLAIN QUERY PLAN.
/// SQLite has no statistics here, so a plan does not depend on the size of the database: the
/// plans of this 400-incident fixture are those of a database of millions.
@Suite("Query plans: every filter is read through its index (issue 13.2)")
struct QueryPlanTests {
    static let store = Result { try QueryFixture.store() }

    /// How a plan reads `incidents`: its lines that name the table.
    static func incidentsLines(_ plan: [String]) -> [String] {
        plan.filter { $0 == "SCAN incidents" || $0.hasPrefix("SCAN incidents USING") || $0.hasPrefix("SEARCH incidents USING") }
    }

    /// The plan of `incidents list` for `query`, and the index the store chose to drive it.
    static func listingPlan(_ query: IncidentQuery) throws -> (driver: String, plan: [String]) {
        let store = try Self.store.get()
        return try store.withDatabase { db in
            let (sql, arguments, driver) = try store.listing(query, db: db)
            return (driver, try db.queryPlan(sql, arguments))
        }
    }

    typealias Case = (name: String, query: IncidentQuery, driver: String, reads: String)

    /// A filter whose value is rare drives through its own index; a page of a common one is read
    /// in the order's index. `reads` is the line of the plan that reads `incidents`.
    static let cases: [Case] = [
        ("no filter, newest first", QueryFixture.query(limit: 50), "incidents_by_start", "SCAN incidents USING INDEX incidents_by_start"),
        ("no filter, oldest first", QueryFixture.query(limit: 50, order: .startedAscending), "incidents_by_start",
         "SCAN incidents USING INDEX incidents_by_start"),
        ("no filter, last seen", QueryFixture.query(limit: 50, order: .lastSeen), "incidents_by_seen", "SCAN incidents USING INDEX incidents_by_seen"),
        ("no filter, by source", QueryFixture.query(limit: 50, order: .source), "sqlite_autoindex_incidents_1",
         "SCAN incidents USING INDEX sqlite_autoindex_incidents_1"),
        ("--active (110 of 400)", QueryFixture.query(limit: 50) { $0.activeOnly = true }, "incidents_active",
         "SCAN incidents USING INDEX incidents_active"),
        ("--source gits (100)", QueryFixture.query(limit: 50) { $0.sources = ["gits"] }, "sqlite_autoindex_incidents_1",
         "SEARCH incidents USING INDEX sqlite_autoindex_incidents_1 (source=?)"),
        ("--source its --source gits (400): a page in start order", QueryFixture.query(limit: 50) { $0.sources = ["its", "gits"] },
         "incidents_by_start", "SCAN incidents USING INDEX incidents_by_start"),
        ("--category weather (5)", QueryFixture.query(limit: 50) { $0.categories = [.weather] }, "incidents_by_category",
         "SEARCH incidents USING INDEX incidents_by_category (category=?)"),
        ("--category roadwork (200): a page in start order", QueryFixture.query(limit: 50) { $0.categories = [.roadwork] },
         "incidents_by_start", "SCAN incidents USING INDEX incidents_by_start"),
        ("--road 강변 (5)", QueryFixture.query(limit: 50) { $0.roadContains = "강변" }, "incidents_by_road",
         "SEARCH incidents USING INDEX incidents_by_road (road=?)"),
        ("--road 고속도로 (390): a page in start order", QueryFixture.query(limit: 50) { $0.roadContains = "고속도로" },
         "incidents_by_start", "SCAN incidents USING INDEX incidents_by_start"),
        ("--road 고속도로 without a limit (390 of 400): every row in start order", QueryFixture.query { $0.roadContains = "고속도로" },
         "incidents_by_start", "SCAN incidents USING INDEX incidents_by_start"),
        ("--road 강변 without a limit (5)", QueryFixture.query { $0.roadContains = "강변" },
         "incidents_by_road", "SEARCH incidents USING INDEX incidents_by_road (road=?)"),
        ("--source gits without a limit (100 of 400)", QueryFixture.query { $0.sources = ["gits"] },
         "sqlite_autoindex_incidents_1", "SEARCH incidents USING INDEX sqlite_autoindex_incidents_1 (source=?)"),
        // `road IN ()`: false before the first row is read (the program jumps past the loop).
        ("--road with no such road", QueryFixture.query(limit: 50) { $0.roadContains = "없는길" }, "incidents_by_road",
         "SCAN incidents USING INDEX incidents_by_road"),
        ("--since (the last 6 hours of starts)", QueryFixture.query(limit: 50) { $0.startedSince = QueryFixture.start.adding(seconds: 394 * 3600) },
         "incidents_by_start", "SEARCH incidents USING INDEX incidents_by_start (started_at>?)"),
        ("--until (the first 5 hours)", QueryFixture.query(limit: 50) { $0.startedUntil = QueryFixture.start.adding(seconds: 5 * 3600) },
         "incidents_by_start", "SEARCH incidents USING INDEX incidents_by_start (started_at<?)"),
        ("--since with --order last-seen", QueryFixture.query(limit: 50, order: .lastSeen) { $0.startedSince = QueryFixture.start.adding(seconds: 394 * 3600) },
         "incidents_by_start", "SEARCH incidents USING INDEX incidents_by_start (started_at>?)"),
        ("--seen-since the last poll (10)", QueryFixture.query(limit: 50) { $0.seenSince = QueryFixture.pollC }, "incidents_by_seen",
         "SEARCH incidents USING INDEX incidents_by_seen (last_seen_at>?)"),
        ("--bbox (4 positions)", QueryFixture.query(limit: 50) { $0.boundingBox = BoundingBox(minLongitude: 126.99, minLatitude: 36.99, maxLongitude: 127.06, maxLatitude: 37.06) },
         "incidents_bbox", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--near, nearest first", QueryFixture.query(limit: 50, order: .distance) { $0.near = Coordinate(latitude: 37.0, longitude: 127.0); $0.radiusMeters = 6000 },
         "incidents_bbox", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--near, newest first", QueryFixture.query(limit: 50) { $0.near = Coordinate(latitude: 37.0, longitude: 127.0); $0.radiusMeters = 6000 },
         "incidents_bbox", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--search 잠실대교 (5)", QueryFixture.query(limit: 20) { $0.search = "잠실대교" }, "incidents_search",
         "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--search 방음벽 (395): a page in start order", QueryFixture.query(limit: 20) { $0.search = "방음벽" }, "incidents_by_start",
         "SCAN incidents USING INDEX incidents_by_start"),
        // Two characters are shorter than a trigram: no index applies, each row is checked.
        ("--search 보수 (no index for 2 characters)", QueryFixture.query(limit: 20) { $0.search = "보수" }, "incidents_by_start",
         "SCAN incidents USING INDEX incidents_by_start"),
        ("--active --source gits", QueryFixture.query(limit: 50) { $0.activeOnly = true; $0.sources = ["gits"] },
         "sqlite_autoindex_incidents_1", "SEARCH incidents USING INDEX sqlite_autoindex_incidents_1 (source=?)"),
        ("--active --road 강변", QueryFixture.query(limit: 50) { $0.activeOnly = true; $0.roadContains = "강변" }, "incidents_by_road",
         "SEARCH incidents USING INDEX incidents_by_road (road=?)"),
        ("--active --near", QueryFixture.query(limit: 50) { $0.activeOnly = true; $0.near = Coordinate(latitude: 37.0, longitude: 127.0) },
         "incidents_bbox", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--category weather (5) --since (6): the rarer drives", QueryFixture.query(limit: 50) { $0.categories = [.weather]; $0.startedSince = QueryFixture.start.adding(seconds: 394 * 3600) },
         "incidents_by_category", "SEARCH incidents USING INDEX incidents_by_category (category=?)"),
        ("--category roadwork (200) --since (6): the rarer drives", QueryFixture.query(limit: 50) { $0.categories = [.roadwork]; $0.startedSince = QueryFixture.start.adding(seconds: 394 * 3600) },
         "incidents_by_start", "SEARCH incidents USING INDEX incidents_by_start (started_at>?)"),
        // incidents serve: keyset pages read a rowid range; the in-force interval is checked on the rows read.
        ("a keyset page in id order (serve)", QueryFixture.query(limit: 50, order: .id) { $0.afterID = 200 }, "incidents",
         "SEARCH incidents USING INTEGER PRIMARY KEY (rowid>?)"),
        ("the page before a cursor (serve)", QueryFixture.query(limit: 50, order: .idDescending) { $0.beforeID = 200 }, "incidents",
         "SEARCH incidents USING INTEGER PRIMARY KEY (rowid<?)"),
        // In force during an interval has no index of its own: it is checked on the rows another filter reads (the
        // box, as the map asks), or on the rowid range of a page.
        ("--bbox (4 positions), in force during 100 hours, in id order (serve)", QueryFixture.query(limit: 50, order: .id) {
            $0.boundingBox = BoundingBox(minLongitude: 126.99, minLatitude: 36.99, maxLongitude: 127.06, maxLatitude: 37.06)
            $0.inForce = IncidentQuery.TimeInterval(from: QueryFixture.start.adding(seconds: 100 * 3600), until: QueryFixture.start.adding(seconds: 200 * 3600))
         }, "incidents_bbox", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        // --at (and the server's datetime instant): the intervals that contain the instant (migration 0013) drive,
        // however many incidents were listed then, unless a rarer filter's index does.
        ("--at after the last poll (110 listed then)", QueryFixture.query(limit: 50) { $0.listedAt = QueryFixture.pollC.adding(seconds: 60) },
         "incident_listed_intervals", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--at between the first polls (300 listed)", QueryFixture.query(limit: 50) { $0.listedAt = QueryFixture.pollA.adding(seconds: 60) },
         "incident_listed_intervals", "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"),
        ("--at between the first polls with --category weather (5): the rarer drives",
         QueryFixture.query(limit: 50) { $0.listedAt = QueryFixture.pollA.adding(seconds: 60); $0.categories = [.weather] },
         "incidents_by_category", "SEARCH incidents USING INDEX incidents_by_category (category=? AND rowid=?)"),
    ]

    @Test("each filter, and the combinations the CLI uses, read incidents through the index chosen for it", arguments: cases)
    func listing(_ testCase: Case) throws {
        let (driver, plan) = try Self.listingPlan(testCase.query)
        #expect(driver == testCase.driver, "\(testCase.name): \(plan)")
        #expect(Self.incidentsLines(plan) == [testCase.reads], "\(testCase.name): \(plan)")
        // Never the whole table: every case has an index that applies.
        #expect(!plan.contains("SCAN incidents"), "\(testCase.name): \(plan)")
        switch driver {
        case "incidents_bbox": #expect(plan.contains { $0.hasPrefix("SCAN incidents_bbox VIRTUAL TABLE INDEX") }, "\(plan)")
        case "incidents_search": #expect(plan.contains { $0.hasPrefix("SCAN incidents_search VIRTUAL TABLE INDEX") }, "\(plan)")
        case "incident_listed_intervals":
            // A page in start order without other filters reads the ids firstListed found (firstListedPage below).
            let query = testCase.query
            let byIDs = query.filters.isEmpty && query.limit != nil && [.started, .startedAscending].contains(query.order)
            #expect(byIDs ? !plan.contains { $0.contains("incident_listed") }
                          : plan.contains { $0.hasPrefix("SCAN incident_listed_intervals VIRTUAL TABLE INDEX") }, "\(plan)")
        default: #expect(!plan.contains { $0.contains("incidents_bbox") || $0.contains("incidents_search") }, "\(plan)")
        }
    }

    @Test("--at: the listed intervals drive, the log is not read row by row, and the rows are those listed then")
    func listedAt() throws {
        let query = QueryFixture.query(order: .source) { $0.listedAt = QueryFixture.pollC.adding(seconds: 60) }
        let (driver, plan) = try Self.listingPlan(query)
        #expect(driver == "incident_listed_intervals", "\(plan)")
        #expect(!plan.contains { $0.contains("incident_transitions") }, "\(plan)")
        // The intervals that ended (the its incidents cleared at pollC) in the R*Tree; the open ones by their start.
        #expect(plan.contains { $0.hasPrefix("SEARCH incident_listed_open USING INDEX incident_listed_open_by_start (listed_from<?)") }, "\(plan)")
        // The complete its poll at pollC listed E0…E9, gits listed E300…E399 at pollB; those whose
        // provider's end (the fixture's start) had passed are not listed.
        let listed = try Self.store.get().incidents(matching: query).map(\.incident.externalID)
        let expected = (Array(0..<10) + Array(300..<400)).filter { $0 % 80 != 6 }.map { "E\($0)" }
        #expect(listed.count == expected.count && Set(listed) == Set(expected), "\(listed)")
    }

    @Test("timeline: the listed intervals of the window are read through their indexes, never the log; without filters no incident row, with them each interval's incident by its id")
    func timeline() throws {
        let store = try Self.store.get()
        let until = QueryFixture.pollC.adding(seconds: 3600)
        let buckets = TimelineBuckets(starts: Timeline.bucketStarts(per: .hour, since: QueryFixture.pollA, until: until) { _ in 0 },
                                      since: QueryFixture.pollA.secondsSince1970, until: until.secondsSince1970)
        try store.withDatabase { (db: Database) throws in
            func plan(_ query: IncidentQuery, by field: IncidentGrouping?) throws -> [String] {
                let (sql, arguments) = try SQLiteStore.timelineSteps(query, field: field, buckets: buckets, db: db)
                return try db.queryPlan(sql, arguments)
            }
            for (query, field, reads) in [(QueryFixture.query(), nil, "SEARCH incidents USING COVERING INDEX incidents_by_end (ended_at>? AND ended_at<?)"),
                                          (QueryFixture.query { $0.categories = [.weather] }, IncidentGrouping.source,
                                           "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)")] {
                let plan = try plan(query, by: field)
                #expect(Self.incidentsLines(plan) == [reads], "\(plan)")
                #expect(plan.contains { $0.hasPrefix("SCAN incident_listed_intervals VIRTUAL TABLE INDEX") }, "\(plan)")
                #expect(plan.contains("SEARCH incident_listed_open USING INDEX incident_listed_open_by_start (listed_from<?)"), "\(plan)")
                #expect(!plan.contains { $0.contains("incident_transitions") || $0.hasPrefix("SCAN incidents") }, "\(plan)")
            }
        }
        // The counts: its listed 300 at pollA and 10 of them after pollC; gits 100 from pollB; the provider's end (the
        // fixture's start, every 80th from the 6th) had passed for 4 of its (one of the 10) and 1 of gits.
        let counts = try Timeline.count(store, matching: QueryFixture.query(), by: .source, per: .hour,
                                        since: QueryFixture.pollA, until: until) { _ in 0 }
        #expect(counts.map { "\($0.bucket) \($0.key ?? "") \($0.count)" } == ["2024-03-20 00 its 296", "2024-03-20 00 gits 99", "2024-03-20 01 gits 99", "2024-03-20 01 its 9"])
    }

    @Test("list --at, a page in start order: the open candidates' starts from their indexes in start order from T's start, the ended ones' from the index of starts by id, only the page's rows read whole, the same rows as the listing's own statement")
    func firstListedPage() throws {
        let store = try Self.store.get()
        try store.withDatabase { (db: Database) throws in
            let instant = QueryFixture.pollA.adding(seconds: 60)
            let plan = try db.queryPlan(SQLiteStore.firstListedSQL(.started), [
                "listed_at": .text(instant.rfc3339), "listed_seconds": .integer(PollTransitions.intervalSeconds(instant)),
                "first": .integer(100), "limit": .integer(50)])
            #expect(plan.contains { $0.hasPrefix("SCAN incident_listed_intervals VIRTUAL TABLE INDEX") }, "\(plan)")
            // The open intervals in start order from their indexes alone (0016, 0017), from T's start down, read until the
            // first found: no sort of them. Scanning incident_listed_open_by_started from the top read every open interval
            // listed after T (500 pages for a moment of the history bench's first days, issue 22).
            #expect(plan.filter { $0.hasPrefix("SEARCH incident_listed_open USING COVERING INDEX incident_listed_open_by_started ") }
                    == ["SEARCH incident_listed_open USING COVERING INDEX incident_listed_open_by_started (started_at<?)",
                        "SEARCH incident_listed_open USING COVERING INDEX incident_listed_open_by_started (started_at=?)"], "\(plan)")
            #expect(plan.contains("SEARCH incident_listed_open USING COVERING INDEX incident_listed_open_ahead (started_at>?)"), "\(plan)")
            #expect(!plan.contains { $0.hasPrefix("SCAN incident_listed_open") }, "\(plan)")
            #expect(plan.filter { $0.hasPrefix("USE TEMP B-TREE") }.count == 2, "the first candidates', the page's: \(plan)")
            // The ended intervals' starts from the index of starts by id (0017), not from the rows (800 pages on the bench).
            #expect(Set(Self.incidentsLines(plan)) == ["SEARCH incidents USING COVERING INDEX incidents_started_by_id (id=?)",
                                                       "SEARCH incidents USING INTEGER PRIMARY KEY (rowid=?)"], "\(plan)")
        }
        // The ids found, against the listing's own statement (a filter makes it run).
        for (at, limit) in [(QueryFixture.pollA.adding(seconds: 60), 50), (QueryFixture.pollC.adding(seconds: 60), 7),
                            (QueryFixture.pollC.adding(seconds: 60), 200)] {
            for order in [IncidentOrder.started, .startedAscending] {
                let query = QueryFixture.query(limit: limit, order: order) { $0.listedAt = at }
                var own = query
                own.sources = ["its", "gits"]
                let ids = try store.withDatabase { db in try SQLiteStore.firstListed(query, try Selection(query, reading: .ordered(limit: limit), db: db), db: db) }
                #expect(ids != nil && ids?.isEmpty == false)
                #expect(try store.incidents(matching: query).map(\.id) == store.incidents(matching: own).map(\.id), "\(at.rfc3339) \(limit) \(order)")
            }
        }
    }

    @Test("list --at's \"as of\" line: each source's last run started by the moment is read back from the last run in an index that holds the start (0017), not row by row")
    func sourcesAsOf() throws {
        let store = try Self.store.get()
        try store.withDatabase { (db: Database) throws in
            let plan = try db.queryPlan("""
                WITH sources AS (SELECT DISTINCT source FROM ingest_runs)
                SELECT id FROM ingest_runs WHERE id IN (\(SourceAsOf.lastRunIDs(at: ":at")))
                """, ["at": .text(QueryFixture.pollA.rfc3339)])
            // Reading the rows back from the last run (ingest_runs_by_source, without the start) read 250 pages for a
            // moment 29 days back on the history bench (issue 22).
            #expect(plan.filter { $0.hasPrefix("SEARCH r USING") } == [
                "SEARCH r USING COVERING INDEX ingest_runs_by_source (source=?)",
                "SEARCH r USING COVERING INDEX ingest_runs_by_source_started (source=?)"]
                + Array(repeating: "SEARCH r USING COVERING INDEX ingest_runs_by_completion (source=? AND status=? AND observed_at<?)", count: 3),
                "\(plan)")
        }
    }

    @Test("a filter's own index, read in the order's: the page needs no sort; another index needs one")
    func sorting() throws {
        let sorts = { (query: IncidentQuery) in try Self.listingPlan(query).plan.contains("USE TEMP B-TREE FOR ORDER BY") }
        #expect(try !sorts(QueryFixture.query(limit: 50)))
        #expect(try !sorts(QueryFixture.query(limit: 50) { $0.startedSince = QueryFixture.start.adding(seconds: 394 * 3600) }))
        #expect(try sorts(QueryFixture.query(limit: 50) { $0.roadContains = "강변" }))
        #expect(try sorts(QueryFixture.query(limit: 50) { $0.activeOnly = true }))
    }

    @Test("stats: without filters no incident row is read; a rare filter uses its index; a common one reads the table once")
    func statistics() throws {
        let store = try Self.store.get()
        try store.withDatabase { (db: Database) throws in
            #expect(try db.queryPlan(SQLiteStore.listedCounts, ["now": .text(QueryFixture.now.rfc3339)])
                    == ["SCAN incidents USING COVERING INDEX incidents_active"])
            func plan(_ query: IncidentQuery) throws -> [String] {
                let selection = try Selection(query, reading: .unordered, db: db)
                var arguments = selection.arguments
                arguments["now"] = .text(query.now.rfc3339)
                return Self.incidentsLines(try db.queryPlan(SQLiteStore.groupedCounts(selection), arguments))
            }
            #expect(try Selection(QueryFixture.query(), reading: .unordered, db: db).conditions.isEmpty)
            #expect(try plan(QueryFixture.query { $0.categories = [.weather] }) == ["SEARCH incidents USING INDEX incidents_by_category (category=?)"])
            #expect(try plan(QueryFixture.query { $0.roadContains = "강변" }) == ["SEARCH incidents USING INDEX incidents_by_road (road=?)"])
            #expect(try plan(QueryFixture.query { $0.seenSince = QueryFixture.pollC }) == ["SEARCH incidents USING INDEX incidents_by_seen (last_seen_at>?)"])
            // 300 of 400 rows: reading the table in rowid order costs less than 300 index lookups.
            #expect(try plan(QueryFixture.query { $0.sources = ["its"] }) == ["SCAN incidents"])
        }
    }
}
