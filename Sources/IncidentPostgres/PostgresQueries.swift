import Foundation
import IncidentCore

extension PostgresStore: IncidentReader {
    /// With a `--near` point the SQL selects the incidents whose extent overlaps the circle's
    /// bounding box (the GiST index); the exact distance (``Incident/distance(to:)``: to the
    /// line or points of a geometry) then keeps those within the radius, the nearest first for
    /// ``IncidentOrder/distance`` (ties by id), and the limit applies after both.
    ///
    /// Nearest first, the rows come in order of their extent's planar distance to the point
    /// (`box <-> point`, a nearest-first scan of the same GiST index), and reading stops once
    /// that distance, as meters (``metersBelow(planarDegrees:box:)``), exceeds the limit-th
    /// exact distance found: no row read later can come nearer. Issue 23: carrying every row
    /// of the box to the client cost 105 ms for 8,461 rows at 1,000,000 incidents.
    public func forEachIncident(matching query: IncidentQuery, _ row: (StoredIncident) throws -> Void) throws {
        let (sql, arguments, nearestFirst) = try listing(query)
        let near = query.near.map { center in (center, query.radiusMeters) }
        var nearest: [(distance: Double, stored: StoredIncident)] = []
        var emitted = 0
        struct Enough: Error {}
        do {
            try withConnection { connection in
                var decoder: StoredIncidentDecoder?
                var planarColumn: Int32?
                // Without `--near`, a limit is the SQL's (`listing`): its rows in one FETCH.
                let firstBatch = query.near == nil ? query.limit.flatMap { $0 < 4096 ? Int32($0 + 1) : nil } ?? 64 : 64
                try connection.forEachRow(sql, named: arguments, context: "listing incidents", firstBatch: firstBatch) { result, index in
                    let decode = try decoder ?? StoredIncidentDecoder(result, columns: columns)
                    decoder = decode
                    // Once `limit` rows are within the radius (kept sorted), the limit-th is the bar.
                    if let (box, limit) = nearestFirst, nearest.count == limit {
                        let column = try planarColumn ?? result.column("planar_distance")
                        planarColumn = column
                        if let planar = result.double(index, column),
                           Self.metersBelow(planarDegrees: planar, box: box) > nearest[limit - 1].distance { throw Enough() }
                    }
                    let stored = decode.stored(result, index)
                    guard let (center, radius) = near else { return try row(stored) }
                    guard let distance = stored.incident.distance(to: center), distance <= radius else { return }
                    if query.order == .distance {
                        nearest.append((distance, stored))
                        if let (_, limit) = nearestFirst, nearest.count >= limit {
                            nearest.sort(by: Self.nearer)
                            nearest.removeLast(nearest.count - limit)
                        }
                    } else if query.limit.map({ emitted < $0 }) ?? true {
                        emitted += 1
                        try row(stored)
                    }
                }
            }
        } catch is Enough {}
        nearest.sort(by: Self.nearer)
        for entry in nearest.prefix(query.limit ?? Int.max) { try row(entry.stored) }
    }

    /// The SQL of a listing (``forEachIncident(matching:_:)``), its arguments, and for `--near`
    /// nearest first with a limit, the circle's box and the limit (where reading may stop).
    func listing(_ query: IncidentQuery) throws -> (sql: String, arguments: [String: PostgresValue], nearestFirst: (box: BoundingBox, limit: Int)?) {
        var filter = try Filter(query)
        let selected = "\(StoredIncidentDecoder.lifecycleColumns), \(columns.list())"
        let order = Self.orderClause(query.order)
        var nearestFirst: (box: BoundingBox, limit: Int)?
        var sql = "SELECT \(selected) FROM incidents\(filter.clause) ORDER BY " + order
        if let center = query.near, query.order == .distance {
            let planar = "\(Filter.extent) <-> point(\(filter.bind("near_lon", .real(center.longitude))), \(filter.bind("near_lat", .real(center.latitude))))"
            // The ids nearest first from the covering GiST index alone (0012), each row then
            // by its id as the client reads: as one query, the planner (estimating 62 rows
            // of the 8,440 in the circle's box at 1,000,000 incidents) read every row of the
            // box from the heap and sorted them (86-140 ms, issue 23). By the distance alone:
            // with `, id` after it the index cannot give the order. The order is the outer
            // query's only: with its own ORDER BY the id subquery was planned apart, for all its
            // rows, and the planner (still estimating 62) read the box's 8,453 ids through a
            // bitmap scan of the heap and sorted them (27-72 ms, session 12); flattened, the
            // cursor's fast start (`cursor_tuple_fraction`) makes it read them nearest first.
            sql = """
                SELECT i.*, c.planar_distance
                FROM (SELECT id, \(planar) AS planar_distance FROM incidents\(filter.clause)) AS c
                CROSS JOIN LATERAL (SELECT \(selected) FROM incidents WHERE id = c.id) AS i ORDER BY c.planar_distance
                """
            if let limit = query.limit, limit > 0 { nearestFirst = (BoundingBox.around(center, meters: query.radiusMeters), limit) }
        } else if let limit = query.limit, query.near == nil {
            let bound = filter.bind("limit", .integer(Int64(limit)))
            if query.boundingBox != nil {
                // The first ids in order from the covering GiST index (0012) alone, then their
                // rows: read with the rest, every row of the box came from the heap before
                // the sort (8,234 heap pages for 100 rows, 188-233 ms at 1,000,000, issue 23).
                sql = "SELECT \(selected) FROM incidents WHERE id IN (SELECT id FROM incidents\(filter.clause) ORDER BY \(order) LIMIT \(bound)) ORDER BY \(order)"
            } else {
                sql += " LIMIT " + bound
            }
        }
        return (sql, filter.arguments, nearestFirst)
    }

    /// Nearest first, ties by id.
    private static func nearer(_ a: (distance: Double, stored: StoredIncident), _ b: (distance: Double, stored: StoredIncident)) -> Bool {
        a.distance != b.distance ? a.distance < b.distance : a.stored.id < b.stored.id
    }

    /// A lower bound, in meters, of the exact distance (``Incident/distance(to:)``) from the
    /// point to an incident within the radius whose extent lies `planarDegrees` from it in
    /// the (longitude, latitude) plane: a degree of longitude is at least cos(φ) of a degree
    /// of latitude at every latitude φ of `box` (the circle's bounding box, where such an
    /// incident's nearest point lies); 1 % off for the haversine formula's curvature.
    static func metersBelow(planarDegrees: Double, box: BoundingBox) -> Double {
        let latitude = min(90, max(abs(box.minLatitude), abs(box.maxLatitude)))
        return 0.99 * planarDegrees * cos(latitude * .pi / 180) * Coordinate.earthRadiusMeters * .pi / 180
    }

    /// The WHERE clause of an ``IncidentQuery`` and its named arguments (``NamedParameters``). Each
    /// condition matches exactly the rows the SQLite store's does; where an index needs a
    /// looser test to be used, the looser test comes first and the exact one follows.
    struct Filter {
        private(set) var clause = ""
        private(set) var arguments: [String: PostgresValue] = [:]

        /// Binds `value` to the parameter `name`; returns its placeholder `:name`.
        mutating func bind(_ name: String, _ value: PostgresValue) -> String {
            arguments[name] = value
            return ":" + name
        }

        /// - Throws: ``QueryError`` for a search text ``SearchTerms`` refuses.
        init(_ query: IncidentQuery) throws {
            var conditions: [String] = []
            func list(_ name: String, _ values: [String]) -> String {
                "(" + values.enumerated().map { bind("\(name)\($0)", .text($1)) }.joined(separator: ", ") + ")"
            }
            func overlapping(_ name: String, _ box: BoundingBox) -> String {
                // The incident's extent (its geometry's box, else its point) overlaps the box.
                // The GiST index (0003) answers `&&` (with the geometric operators' 1e-6
                // tolerance); the comparisons after it are SQLite's exact test.
                let (minLat, maxLat) = (bind(name + "_min_lat", .real(box.minLatitude)), bind(name + "_max_lat", .real(box.maxLatitude)))
                let (minLon, maxLon) = (bind(name + "_min_lon", .real(box.minLongitude)), bind(name + "_max_lon", .real(box.maxLongitude)))
                return "\(Self.extent) && box(point(\(minLon), \(minLat)), point(\(maxLon), \(maxLat)))"
                    + " AND coalesce(min_latitude, latitude) <= \(maxLat) AND coalesce(max_latitude, latitude) >= \(minLat)"
                    + " AND coalesce(min_longitude, longitude) <= \(maxLon) AND coalesce(max_longitude, longitude) >= \(minLon)"
            }
            for filter in query.filters {
                switch filter {
                case .status(let statuses):
                    // StoredIncident.status(at:), in SQL; the states of incidents still listed also
                    // say `cleared_at IS NULL`, for the partial indexes of the active set.
                    let condition = Self.status(now: bind("now", .instant(query.now))) + " IN " + list("status", statuses.map(\.rawValue))
                    conditions.append(statuses.contains(.cleared) ? condition : "cleared_at IS NULL AND " + condition)
                case .source(let sources):
                    conditions.append("source IN " + list("source", sources))
                case .category(let categories):
                    conditions.append("category IN " + list("category", categories.map(\.rawValue)))
                case .started(let since, let until):
                    if let since { conditions.append("started_at >= " + bind("since", .instant(since))) }
                    if let until { conditions.append("started_at < " + bind("until", .instant(until))) }
                case .seenSince(let seen):
                    conditions.append("last_seen_at >= " + bind("seen_since", .instant(seen)))
                case .road(let road, let reference):
                    // A substring of the provider's road name or of the canonical name, or the
                    // canonical road the text names; case-sensitive (SQLite: instr). LIKE reads the
                    // trigram index.
                    let pattern = bind("road", .text("%" + Self.escapeLike(try SearchTerms.printable(road, what: "road")) + "%"))
                    var condition = "road LIKE \(pattern) OR road_ref LIKE \(pattern)"
                    if let reference { condition += " OR road_ref = " + bind("road_reference", .text(reference)) }
                    conditions.append("(\(condition))")
                case .boundingBox(let box):
                    conditions.append(overlapping("bbox", box))
                case .near(let center, let radiusMeters):
                    // The circle's bounding box; the exact distance is checked on the rows read
                    // (``PostgresStore/forEachIncident(matching:_:)``).
                    conditions.append(overlapping("near", BoundingBox.around(center, meters: radiusMeters)))
                case .search(let search):
                    for (index, term) in try SearchTerms(search).terms.enumerated() {
                        // Each term occurs in the description or the location, ASCII letters in
                        // either case (SQLite's LIKE). ILIKE, which the trigram indexes answer,
                        // finds a superset; the ASCII-only fold keeps exactly SQLite's matches.
                        let pattern = "%" + Self.escapeLike(term) + "%"
                        guard term.unicodeScalars.contains(where: { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }) else {
                            // Without ASCII letters, SQLite's LIKE compares exactly, as PostgreSQL's LIKE
                            // does (trigram-indexed too). In the exact form the planner estimates each
                            // term from the columns' statistics; through translate() it guessed 1 row
                            // for '안양성남 후속 정체', read 100,000 candidates of the first term
                            // by the trigram index and sorted them (209-239 ms at 1,000,000 rows), where
                            // reading in start order finds the first 20 in 1,400 rows (issue 23).
                            let exact = bind("term\(index)", .text(pattern))
                            conditions.append("(description LIKE \(exact) OR location LIKE \(exact))")
                            continue
                        }
                        let exact = bind("term\(index)", .text(Self.asciiLowercased(pattern)))
                        let fold = "'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'"
                        var condition = "(translate(description, \(fold)) LIKE \(exact) OR translate(location, \(fold)) LIKE \(exact))"
                        if Self.hasTrigram(term) {
                            let loose = bind("term\(index)_loose", .text(pattern))
                            condition = "(description ILIKE \(loose) OR location ILIKE \(loose)) AND " + condition
                        }
                        conditions.append(condition)
                    }
                }
            }
            if let interval = query.inForce {
                // StoredIncident.isInForce(during:), as SQLite's Selection.
                if let from = interval.from {
                    let value = bind("in_force_from", .instant(from))
                    conditions.append("(ended_at IS NULL OR ended_at >= \(value)) AND (cleared_at IS NULL OR cleared_at >= \(value))")
                }
                if let until = interval.until {
                    conditions.append("coalesce(started_at, first_seen_at) <= " + bind("in_force_until", .instant(until)))
                }
            }
            if let instant = query.listedAt {
                conditions.append(PollTransitionLog.listed(at: bind("listed_at", .instant(instant))))
            }
            if let after = query.afterID { conditions.append("id > " + bind("after_id", .integer(after))) }
            if let before = query.beforeID { conditions.append("id < " + bind("before_id", .integer(before))) }
            clause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        }

        /// ``StoredIncident/status(at:)`` in SQL, at the instant parameter `now` (`:now`), as
        /// SQLite's `Selection.status`.
        static func status(now: String) -> String {
            "CASE WHEN cleared_at IS NOT NULL THEN 'cleared' WHEN ended_at <= \(now) THEN 'ended' "
                + "WHEN validity = 'suspended' THEN 'suspended' "
                + "WHEN started_at > \(now) OR (started_at IS NULL AND validity = 'planned') THEN 'planned' ELSE 'active' END"
        }

        /// The expression of the GiST index `incidents_by_extent` (migration 0003; covering since 0012).
        static let extent = "box(point(coalesce(min_longitude, longitude), coalesce(min_latitude, latitude)), "
            + "point(coalesce(max_longitude, longitude), coalesce(max_latitude, latitude)))"

        /// `text` with LIKE's wildcards and its escape character (backslash) escaped.
        static func escapeLike(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
        }

        /// Whether pg_trgm draws a trigram from `term`: three letters or digits in a row. From
        /// a shorter term it draws none, and a trigram index would then read all of itself
        /// (seconds on a million rows) instead of letting the planner scan in order.
        static func hasTrigram(_ term: String) -> Bool {
            var run = 0
            for scalar in term.unicodeScalars {
                run = scalar.properties.isAlphabetic || scalar.properties.numericType != nil ? run + 1 : 0
                if run >= 3 { return true }
            }
            return false
        }

        static func asciiLowercased(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map {
                ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32) ?? $0 : $0
            }))
        }
    }

    static func orderClause(_ order: IncidentOrder) -> String {
        switch order {
        case .started, .distance: "started_at DESC NULLS LAST, id DESC"
        case .startedAscending: "started_at ASC NULLS LAST, id ASC"
        case .lastSeen: "last_seen_at DESC, id DESC"
        case .source: "source, external_id"
        case .id: "id"
        case .idDescending: "id DESC"
        }
    }

    public func history(ofIncident id: Int64) throws -> IncidentHistory? {
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "reading incident \(id)") {
                let current = try connection.query("SELECT \(StoredIncidentDecoder.lifecycleColumns), \(columns.list()) FROM incidents WHERE id = :id",
                                                   named: ["id": .integer(id)], context: "reading incident \(id)")
                guard current.rowCount == 1 else { return nil }
                let stored = try StoredIncidentDecoder(current, columns: columns).stored(current, 0)
                let history = try connection.query("""
                    SELECT revision, \(columns.list()), cleared_at, superseded_at
                    FROM incident_revisions WHERE incident_id = :id ORDER BY revision
                    """, named: ["id": .integer(id)], context: "reading the revisions of incident \(id)")
                let decoder = try columns.decoder(for: history)
                let (revision, clearedAt, supersededAt) = (try history.column("revision"), try history.column("cleared_at"),
                                                           try history.column("superseded_at"))
                let revisions = (0..<history.rowCount).map { row in
                    IncidentRevision(
                        revision: history.int(row, revision) ?? 0,
                        incident: Incident(source: stored.incident.source, externalID: stored.incident.externalID,
                                           values: decoder.values(history, row), fields: columns.fields),
                        clearedAt: history.instant(row, clearedAt),
                        supersededAt: history.instant(row, supersededAt) ?? UTCInstant(secondsSince1970: 0))
                }
                let rejected = try connection.query("""
                    SELECT \(RejectionRows.columns) FROM rejected_records
                    WHERE source = :source AND external_id = :external_id ORDER BY id DESC LIMIT 20
                    """, named: ["source": .text(stored.incident.source), "external_id": .text(stored.incident.externalID)],
                    context: "reading the records of incident \(id) set aside")
                let rejections = try (0..<rejected.rowCount).map { try RejectionRows.decode(rejected, $0) }
                return IncidentHistory(current: stored, revisions: revisions, rejections: rejections)
            }
        }
    }

    /// Counts by source, category, road (the 20 most frequent) and hour of start, read in one
    /// snapshot. Without filters, from `incident_counts` (PostgreSQL 0012, kept by every
    /// writer: ``PostgresCounts``) and, for the listed incidents' status at `now`, counts of the
    /// few that are not active through partial indexes (``listedStatusCounts``): no pass over
    /// the table (issue 23: 1.8-2.5 s at 1,000,000 incidents, at load 14-35). With filters the
    /// counts cannot answer (a count by key holds no other column), so the matching rows are
    /// counted in one scan by all keys at once (a hash aggregate, a few thousand groups).
    /// Keys, groups and their order are SQLite's (``IncidentStatistics/group(sources:categories:roads:startMinutes:utcOffsetSeconds:)``).
    public func statistics(matching query: IncidentQuery, utcOffsetSeconds: Int) throws -> IncidentStatistics {
        var filter = try Filter(query)
        let now = filter.bind("now", .instant(query.now))
        var stats = IncidentStatistics()
        var groups: [String: [String: Int]] = [:]
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "counting incidents") {
                guard filter.clause.isEmpty else {
                    try countRows(filter, now: now, into: &stats, &groups, connection: connection)
                    return
                }
                let counted = try Self.counted(now: query.now, connection: connection)
                groups = counted.groups
                stats.total = counted.statuses.values.reduce(0, +)
                (stats.active, stats.planned, stats.suspended, stats.cleared) = (counted.statuses[.active, default: 0],
                    counted.statuses[.planned, default: 0], counted.statuses[.suspended, default: 0], counted.statuses[.cleared, default: 0])
            }
        }
        stats.group(sources: groups["source", default: [:]], categories: groups["category", default: [:]], roads: groups["road", default: [:]],
                    startMinutes: groups["start_minute", default: [:]], utcOffsetSeconds: utcOffsetSeconds)
        return stats
    }

    /// `incident_counts` summed over the sources (`source`, `category`, `road`, `start_minute`,
    /// keys as stored), and every incident's status at `now` (``listedStatusCounts``), in the
    /// caller's snapshot.
    static func counted(now: UTCInstant, connection: Connection) throws
        -> (groups: [String: [String: Int]], statuses: [IncidentStatus: Int]) {
        let counts = try connection.query("SELECT source, dimension, key, incidents FROM incident_counts", context: "counting incidents")
        var groups: [String: [String: Int]] = [:]
        var (total, listed, withEnd) = (0, 0, 0)
        for row in 0..<counts.rowCount {
            let (source, dimension, key, count) = (counts.string(row, 0) ?? "", counts.string(row, 1) ?? "", counts.string(row, 2) ?? "",
                                                   counts.int(row, 3) ?? 0)
            switch dimension {
            case "listed":
                listed += count
                if key == "with_end" { withEnd += count }
            case "category":
                total += count
                groups["source", default: [:]][source, default: 0] += count
                groups["category", default: [:]][key, default: 0] += count
            default: groups[dimension, default: [:]][key, default: 0] += count
            }
        }
        let status = try connection.query(listedStatusCounts, named: ["now": .instant(now)], context: "counting incidents")
        let (endingLater, suspended, planned) = (status.int(0, 0) ?? 0, status.int(0, 1) ?? 0, status.int(0, 2) ?? 0)
        let ended = withEnd - endingLater
        let statuses: [IncidentStatus: Int] = [.cleared: total - listed, .ended: ended, .suspended: suspended, .planned: planned,
                                               .active: listed - ended - suspended - planned]
        return (groups, statuses)
    }

    /// `stats --by FIELD`: without filters and time buckets, for the fields `incident_counts`
    /// holds (source, category, road, hour of start, status), from the counts
    /// (``counted(now:connection:)``). Otherwise every matching incident is read (IncidentCore's
    /// generic grouping, ``GroupCounter``): a count by key holds no other column, no date and
    /// no filter. Keys and order as ``GroupCounter/count(_:matching:by:per:utcOffset:)``.
    public func groupCounts(matching query: IncidentQuery, by field: IncidentGrouping, per bucket: TimeBucket?,
                            utcOffsetSeconds: Int) throws -> [GroupCount] {
        let dimension: String? = switch field {
        case .source, .category, .road: field.rawValue
        case .hour: "start_minute"
        case .status: "status"
        case .providerCategory, .restriction, .day: nil
        }
        guard bucket == nil, let dimension, try Filter(query).clause.isEmpty else {
            return try GroupCounter.count(self, matching: query, by: field, per: bucket) { _ in utcOffsetSeconds }
        }
        let counted = try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "counting incidents") {
                try Self.counted(now: query.now, connection: connection)
            }
        }
        var groups: [String: Int] = [:]
        if field == .status {
            for (status, count) in counted.statuses { groups[status.rawValue] = count }
        } else {
            for (key, count) in counted.groups[dimension, default: [:]] {
                // As GroupCounter.value: empty for no road or start.
                let shown = field == .hour ? IncidentStatistics.hour(ofMinute: key, utcOffsetSeconds: utcOffsetSeconds) : key
                groups[shown, default: 0] += count
            }
        }
        return GroupCounter.sorted(groups.filter { $0.value > 0 }.map { GroupCount(key: $0.key, count: $0.value) }, by: field)
    }

    /// Of the incidents no complete poll cleared (``Filter/status(now:)`` at `:now`): how many
    /// end after `now` (the ended ones are the others of the `listed` key `with_end`), are
    /// suspended, are planned. Each through a partial index of the listed incidents (0001's
    /// `incidents_active_by_start` for a future start, 0012's for the end and the validity), so
    /// each reads only the incidents it counts, never the active or the ended ones (a source
    /// may list ended incidents for long: 30 % of the bench's 1,000,000).
    static let listedStatusCounts = """
        SELECT (SELECT count(*) FROM incidents WHERE cleared_at IS NULL AND ended_at > :now),
            (SELECT count(*) FROM incidents WHERE cleared_at IS NULL AND validity = 'suspended' AND (ended_at IS NULL OR ended_at > :now)),
            (SELECT count(*) FROM incidents WHERE cleared_at IS NULL AND started_at > :now
                AND validity IS DISTINCT FROM 'suspended' AND (ended_at IS NULL OR ended_at > :now))
            + (SELECT count(*) FROM incidents WHERE cleared_at IS NULL AND validity = 'planned' AND started_at IS NULL
                AND (ended_at IS NULL OR ended_at > :now))
        """

    /// `statistics` with filters: the matching rows counted by source, category, road, UTC
    /// minute of the day of the start and status at once (issue 23: one sequential scan, in
    /// parallel where workers are free, the minute by arithmetic instead of `to_char`, no JIT
    /// (1.2 s of compiling at 1,000,000 rows), room for the hash table (`work_mem`)).
    private func countRows(_ filter: Filter, now: String, into stats: inout IncidentStatistics, _ groups: inout [String: [String: Int]],
                           connection: Connection) throws {
        try connection.execute("SET LOCAL jit = off; SET LOCAL work_mem = '32MB'", context: "counting incidents")
        let result = try connection.query("""
            SELECT source, category, coalesce(road, ''), minute, status, count(*)
            FROM (SELECT source, category, road, mod(mod(floor(extract(epoch FROM started_at) / 60)::bigint, 1440) + 1440, 1440) AS minute,
                         \(Filter.status(now: now)) AS status
                  FROM incidents\(filter.clause)) AS matching
            GROUP BY 1, 2, 3, 4, 5
            """, named: filter.arguments, context: "counting incidents")
        for row in 0..<result.rowCount {
            let count = result.int(row, 5) ?? 0
            stats.total += count
            switch result.string(row, 4) {
            case "active": stats.active += count
            case "cleared": stats.cleared += count
            case "planned": stats.planned += count
            case "suspended": stats.suspended += count
            default: break
            }
            groups["source", default: [:]][result.string(row, 0) ?? "", default: 0] += count
            groups["category", default: [:]][result.string(row, 1) ?? "", default: 0] += count
            groups["road", default: [:]][result.string(row, 2) ?? "", default: 0] += count
            func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let minute = result.int(row, 3).map { twoDigits($0 / 60) + ":" + twoDigits($0 % 60) } ?? ""
            groups["start_minute", default: [:]][minute, default: 0] += count
        }
    }

    public func runs(source: String?, limit: Int, failuresFirst: Bool) throws -> [IngestRun] {
        var sql = "SELECT \(RunRows.columns) FROM ingest_runs"
        var arguments: [String: PostgresValue] = ["limit": .integer(Int64(limit))]
        if let source {
            arguments["source"] = .text(source)
            sql += " WHERE source = :source"
        }
        sql += " ORDER BY " + (failuresFirst ? "status IN ('succeeded', 'incomplete'), " : "") + "id DESC LIMIT :limit"
        return try withConnection { connection in
            let result = try connection.query(sql, named: arguments, context: "reading the run log")
            return try (0..<result.rowCount).map { try RunRows.decode(result, $0) }
        }
    }

    public func rejections(runID: Int64) throws -> [StoredRejection] {
        try withConnection { connection in
            let result = try connection.query("SELECT \(RejectionRows.columns) FROM rejected_records WHERE run_id = :run_id ORDER BY id",
                                              named: ["run_id": .integer(runID)], context: "reading the records run \(runID) set aside")
            return try (0..<result.rowCount).map { try RejectionRows.decode(result, $0) }
        }
    }

    /// PostgreSQL's form of ``RunLogSQL/latestRuns`` (row comparisons, which its planner needs
    /// to seek: PostgresPlanTests): per source of the run log, its last run (`last_id`) and its
    /// last run that stored records
    /// (`success_id`), as SQLite's: the sources found by seeking from one to the next in
    /// `ingest_runs_by_source`, each run from the end of its source's entries, so a status
    /// refresh reads a few entries per source, not every run (`GROUP BY source` read them all).
    /// `last_id` is the entry of `ingest_runs_by_source` before the next source's, by a row
    /// comparison that no other index answers: as `max(id) … WHERE r.source = sources.source`
    /// the planner walked the primary key back from the newest run, every run since the last
    /// of a source polled no more (PostgresPlanTests). `success_id` reads the partial index of
    /// PostgreSQL 0009.
    /// The last runs are read by a lookup per source (a lateral subquery with `LIMIT 1`, which the
    /// planner keeps as one): as `id IN (SELECT last_id …)` or a plain join it hashed the whole
    /// primary key, not knowing how few sources the CTE yields.
    static let latestRuns = """
        WITH RECURSIVE sources (source) AS (
            SELECT min(source) FROM ingest_runs
            UNION ALL SELECT (SELECT min(source) FROM ingest_runs WHERE source > sources.source) FROM sources WHERE source IS NOT NULL),
        latest AS (
            SELECT source, (SELECT id FROM ingest_runs r WHERE (r.source, r.id) <= (sources.source, 9223372036854775807)
                            ORDER BY r.source DESC, r.id DESC LIMIT 1) AS last_id,
                (SELECT id FROM ingest_runs r WHERE r.source = sources.source AND r.status IN ('succeeded', 'incomplete')
                 ORDER BY r.id DESC LIMIT 1) AS success_id
            FROM sources WHERE source IS NOT NULL)
        """

    public func sourceSummaries() throws -> [SourceSummary] {
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "summarizing the sources") {
                let context = "summarizing the sources"
                var summaries: [String: SourceSummary] = [:]
                // The last runs by a lookup per source (a lateral subquery with `LIMIT 1`, which the
                // planner keeps as one): as `id IN (SELECT last_id …)` or a plain join it hashed
                // the whole primary key, not knowing how few sources the CTE yields.
                let last = try connection.query("""
                    \(Self.latestRuns) SELECT r.* FROM latest CROSS JOIN LATERAL
                        (SELECT \(RunRows.columns) FROM ingest_runs WHERE id = latest.last_id LIMIT 1) r
                    """, context: context)
                for row in 0..<last.rowCount {
                    let run = try RunRows.decode(last, row)
                    summaries[run.source] = SourceSummary(source: run.source, lastRun: run)
                }
                let successes = try connection.query("""
                    \(Self.latestRuns)
                    SELECT source, (SELECT finished_at FROM ingest_runs WHERE id = success_id), since.*
                    FROM latest CROSS JOIN LATERAL (
                        -- The runs since the last that stored records: a range of ingest_runs_by_source
                        -- (a row comparison: as `id > coalesce(success_id, 0)` the planner read the
                        -- primary key from there, every run of every source, PostgresPlanTests).
                        SELECT count(*) FILTER (WHERE status IN ('failed', 'cancelled')),
                            min(started_at) FILTER (WHERE status IN ('failed', 'cancelled')),
                            -- stale runs since the last run that stored a current document
                            count(*) FILTER (WHERE status = 'stale')
                        FROM ingest_runs f WHERE (f.source, f.id) > (latest.source, coalesce(success_id, 0)) AND f.source = latest.source
                    ) since
                    """, context: context)
                for row in 0..<successes.rowCount {
                    guard let source = successes.string(row, 0) else { continue }
                    summaries[source, default: SourceSummary(source: source)].lastSuccessAt = successes.instant(row, 1)
                    summaries[source, default: SourceSummary(source: source)].consecutiveFailures = successes.int(row, 2) ?? 0
                    summaries[source, default: SourceSummary(source: source)].failingSince = successes.instant(row, 3)
                    summaries[source, default: SourceSummary(source: source)].staleRuns = successes.int(row, 4) ?? 0
                }
                let quota = try connection.query("SELECT source, exhausted_until FROM source_state WHERE exhausted_until IS NOT NULL",
                                                 context: context)
                for row in 0..<quota.rowCount {
                    guard let source = quota.string(row, 0) else { continue }
                    summaries[source, default: SourceSummary(source: source)].quotaExhaustedUntil = quota.instant(row, 1)
                }
                return summaries.values.sorted { $0.source < $1.source }
            }
        }
    }
}
