import Foundation
import IncidentCore

/// The incidents a query selects, as SQL shared by the listing and the statistics: the table
/// with the index that drives the query, the conditions and their named arguments.
///
/// SQLite plans without statistics here (no ANALYZE runs), so it would take an equality on any
/// value for a rare one and sort all the rows of a common one. The driving index is picked here
/// instead, and pinned with `INDEXED BY` (`NOT INDEXED` for the R*Tree and the full-text index,
/// which reach rows by id), so every database is planned the same way (`QueryPlanTests`):
///
/// Each filter that has an index is a candidate: `--active` (the active set), `--source`,
/// `--category`, `--road`, `--since`/`--until`, `--seen-since`, `--bbox`/`--near` (the R*Tree),
/// a `--search` term of three or more characters (the full-text index) and `--at` (the listed
/// intervals of migration 0013, which drive unless a rarer filter's index does: the incidents
/// listed at an instant lie together in start order, not spread through it). For a listing, reading
/// the rows a candidate matches, m of N incidents, and sorting them costs about m; reading in
/// the order's index and checking each row costs about L·N/m for a page of L rows, and N
/// without a limit. So the candidate with the fewest matches drives when m < √(L·N) (without a
/// limit, m < N/2: sorting m rows costs about as much as reading them); otherwise the order's
/// index does, every filter checked on the rows it reads. For counting, a candidate drives when m < N/8, otherwise the table is read in rowid
/// order (``Reading/unordered``). A candidate's m is counted by reading at most that bound of
/// its index entries, so the choice costs a few thousand index entries for a page.
struct Selection {
    var from = "incidents"
    var conditions: [String] = []
    var arguments: [String: SQLiteValue] = [:]
    /// The index that drives the query: an index name, `incidents_bbox` or `incidents_search`.
    private(set) var driver = ""

    /// ` WHERE …`, or empty.
    var whereClause: String { conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ") }

    /// A filter's index: how to read the table through it, a condition that only it needs (the
    /// R*Tree's or the full-text index's ids), and the rows it matches (for counting them).
    private struct Candidate {
        var index: String
        var from: String
        var condition: String?
        var matches: String
        /// Arguments of `condition` and `matches` that no other condition uses.
        var arguments: [String: SQLiteValue] = [:]
        /// Drives unless a rarer filter's index does, however many rows it matches (`--at`'s intervals).
        var preferred = false
    }

    /// ``StoredIncident/status(at:)`` in SQL, at `:now`: `'active'`, `'planned'`, `'suspended'`,
    /// `'ended'` or `'cleared'` (RFC 3339 UTC text compares in time order).
    static let status = """
        CASE WHEN cleared_at IS NOT NULL THEN 'cleared' WHEN ended_at <= :now THEN 'ended' \
        WHEN validity = 'suspended' THEN 'suspended' \
        WHEN started_at > :now OR (started_at IS NULL AND validity = 'planned') THEN 'planned' ELSE 'active' END
        """

    /// The great-circle distance in meters from a position to the `--near` point (`:near_lat`,
    /// `:near_lon`): the haversine formula of ``Coordinate/distance(to:)``, in
    /// SQLite's math functions (<https://www.sqlite.org/lang_mathfunc.html>).
    static func distanceFromNear(latitude: String, longitude: String) -> String {
        """
        (2 * \(Coordinate.earthRadiusMeters) * asin(min(1, sqrt(power(sin(radians(\(latitude) - :near_lat) / 2), 2) \
        + cos(radians(:near_lat)) * cos(radians(\(latitude))) * power(sin(radians(\(longitude) - :near_lon) / 2), 2)))))
        """
    }

    /// The distance in meters from an incident to the `--near` point: to its line or points when
    /// it has a geometry (``Geometry/distance(to:)``, through the SQL function
    /// `geometry_distance` every connection registers), else to its position.
    static let incidentDistance = """
        CASE WHEN geometry IS NULL THEN \(distanceFromNear(latitude: "latitude", longitude: "longitude")) \
        ELSE geometry_distance(geometry, :near_lat, :near_lon) END
        """

    /// The ORDER BY of a listing: nearest first for `distance` (with a `--near` point; newest
    /// first without one), ties and every other order broken by id.
    static func orderClause(_ order: IncidentOrder, near: Coordinate?) -> String {
        switch order {
        case .distance where near != nil: return "\(incidentDistance), id"
        case .started, .distance: return "started_at DESC NULLS LAST, id DESC"
        case .startedAscending: return "started_at ASC NULLS LAST, id ASC"
        case .lastSeen: return "last_seen_at DESC, id DESC"
        case .source: return "source, external_id"
        case .id: return "id"
        case .idDescending: return "id DESC"
        }
    }

    /// The index of each order (the implicit index of UNIQUE (source, external_id) for `source`).
    static func orderIndex(_ order: IncidentOrder) -> String {
        switch order {
        case .started, .startedAscending, .distance: return "incidents_by_start"
        case .lastSeen: return "incidents_by_seen"
        case .source: return "sqlite_autoindex_incidents_1"
        case .id, .idDescending: return "incidents"  // the table itself, in rowid order
        }
    }

    /// How the caller reads the selected rows, which weighs the choice of the driving index.
    enum Reading {
        /// In the query's order, at most `limit` rows (nil: all): a listing.
        case ordered(limit: Int?)
        /// Every row, in any order: counting. Without a rare enough filter, the table is read
        /// in rowid order, which costs about an eighth of reading the same rows through an
        /// index (measured: 0.3 s for 1,000,000 rows against 1.6 s for 700,000 through one).
        case unordered
    }

    /// - Throws: ``QueryError`` for search text the store cannot use; ``SQLiteError``.
    init(_ query: IncidentQuery, reading: Reading, db: Database) throws {
        var candidates: [Candidate] = []
        func indexed(_ index: String, _ condition: String) {
            conditions.append(condition)
            candidates.append(Candidate(index: index, from: "incidents INDEXED BY \(index)", condition: nil,
                                        matches: "SELECT 1 FROM incidents INDEXED BY \(index) WHERE \(condition)"))
        }
        var near: (center: Coordinate, radius: Double, condition: String, candidate: Int)?
        for filter in query.filters {
            switch filter {
            case .status(let statuses):
                // StoredIncident.status(at:), in SQL; the states of incidents still listed read the active set.
                arguments["now"] = .text(query.now.rfc3339)
                let condition = "\(Self.status) IN " + list("status", statuses.map(\.rawValue))
                if statuses.contains(.cleared) {
                    conditions.append(condition)
                } else {
                    indexed("incidents_active", "cleared_at IS NULL AND " + condition)
                }
            case .source(let sources):
                indexed("sqlite_autoindex_incidents_1", "source IN " + list("source", sources))
            case .category(let categories):
                indexed("incidents_by_category", "category IN " + list("category", categories.map(\.rawValue)))
            case .road(let road, let reference):
                // The distinct road names, and canonical names, are the `road` and `road_ref` keys
                // of incident_counts: a few thousand at most, searched instead of every incident;
                // their incidents come from the indexes. A canonical name matches when it contains
                // the text or is the road the text names (`--road 경부고속도로` finds ITS's 경부선).
                var names: [String] = [], references: [String] = []
                try db.query("""
                    SELECT dimension, key FROM incident_counts
                    WHERE (dimension = 'road' AND key <> '' AND instr(key, :road) > 0)
                       OR (dimension = 'road_ref' AND key <> '' AND (instr(key, :road) > 0 OR key = :road_reference))
                    ORDER BY dimension, key
                    """, ["road": .text(try SearchTerms.printable(road, what: "road")), "road_reference": .optional(reference)]) { row in
                    if row.string(at: 0) == "road" { names.append(row.string(at: 1) ?? "") } else { references.append(row.string(at: 1) ?? "") }
                }
                if references.isEmpty {
                    indexed("incidents_by_road", "road IN " + list("road", names))
                } else {
                    let byName = "road IN " + list("road", names), byReference = "road_ref IN " + list("road_ref", references)
                    conditions.append("(\(byName) OR \(byReference))")
                    let matching = "SELECT id FROM incidents INDEXED BY incidents_by_road WHERE \(byName) "
                        + "UNION SELECT id FROM incidents INDEXED BY incidents_by_road_ref WHERE \(byReference)"
                    candidates.append(Candidate(index: "incidents_by_road", from: "incidents NOT INDEXED", condition: "id IN (\(matching))",
                                                matches: matching))
                }
            case .started(let since, let until):
                var window: [String] = []
                if let since {
                    window.append("started_at >= :since")
                    arguments["since"] = .text(since.rfc3339)
                }
                if let until {
                    window.append("started_at < :until")
                    arguments["until"] = .text(until.rfc3339)
                }
                indexed("incidents_by_start", window.joined(separator: " AND "))
            case .seenSince(let seen):
                arguments["seen_since"] = .text(seen.rfc3339)
                indexed("incidents_by_seen", "last_seen_at >= :seen_since")
            case .boundingBox(let box):
                // The R*Tree's boxes are rounded outwards: each row's exact extent (its geometry's
                // box, or its position) is checked against the box.
                conditions.append("""
                    coalesce(min_latitude, latitude) <= :bbox_max_lat AND coalesce(max_latitude, latitude) >= :bbox_min_lat \
                    AND coalesce(min_longitude, longitude) <= :bbox_max_lon AND coalesce(max_longitude, longitude) >= :bbox_min_lon
                    """)
                arguments.merge(Self.arguments(box, as: "bbox")) { $1 }
                let overlapping = Self.overlapping("bbox")
                candidates.append(Candidate(index: "incidents_bbox", from: "incidents NOT INDEXED", condition: "id IN (\(overlapping))",
                                            matches: overlapping))
            case .near(let center, let radiusMeters):
                arguments["near_lat"] = .real(center.latitude)
                arguments["near_lon"] = .real(center.longitude)
                arguments["near_radius"] = .real(radiusMeters)
                let condition = "\(Self.incidentDistance) <= :near_radius"
                conditions.append(condition)
                // The boxes in the circle's bounding box (a distance for each would cost about as
                // much as reading the row it spares).
                let overlapping = Self.overlapping("near")
                near = (center, radiusMeters, condition, candidates.count)
                candidates.append(Candidate(index: "incidents_bbox", from: "incidents NOT INDEXED", condition: "id IN (\(overlapping))",
                                            matches: overlapping, arguments: Self.arguments(BoundingBox.around(center, meters: radiusMeters), as: "near")))
            case .search(let text):
                let search = try SearchText(text)
                for (index, term) in search.terms.enumerated() {
                    // Each term occurs in the description or the location (LIKE: ASCII letters match
                    // either case). The full-text index, when it drives, only narrows the rows.
                    conditions.append("(description LIKE :term\(index) ESCAPE '\\' OR location LIKE :term\(index) ESCAPE '\\')")
                    arguments["term\(index)"] = .text(SearchText.likePattern(term))
                }
                if let match = search.trigramQuery {
                    let matching = "SELECT rowid FROM incidents_search WHERE incidents_search MATCH :match"
                    candidates.append(Candidate(index: "incidents_search", from: "incidents NOT INDEXED", condition: "id IN (\(matching))",
                                                matches: matching, arguments: ["match": .text(match)]))
                }
            }
        }
        // The server's `datetime` interval and keyset paging: not filters of the catalogue but
        // properties every front end's query may carry.
        if let interval = query.inForce {
            // StoredIncident.isInForce(during:): the end, the earlier of ended_at and
            // cleared_at, is after the interval's start when each of them that is set is.
            if let from = interval.from {
                arguments["in_force_from"] = .text(from.rfc3339)
                conditions.append("(ended_at IS NULL OR ended_at >= :in_force_from) AND (cleared_at IS NULL OR cleared_at >= :in_force_from)")
            }
            if let until = interval.until {
                arguments["in_force_until"] = .text(until.rfc3339)
                conditions.append("coalesce(started_at, first_seen_at) <= :in_force_until")
            }
        }
        if let after = query.afterID {
            // A rowid range: read in the table's own order, from the first id after it.
            arguments["after_id"] = .integer(after)
            conditions.append("id > :after_id")
        }
        if let before = query.beforeID {
            arguments["before_id"] = .integer(before)
            conditions.append("id < :before_id")
        }
        if let instant = query.listedAt {
            // `incidents list --at`: listed at that instant by the transition log (issue 22), as the
            // index of its listed intervals (migration 0013) states it.
            arguments["listed_at"] = .text(instant.rfc3339)
            arguments["listed_seconds"] = .integer(PollTransitions.intervalSeconds(instant))
            let intervals = PollTransitions.listedIntervals(containing: ":listed_seconds")
            conditions.append(PollTransitions.seenAndNotEnded(at: ":listed_at"))
            conditions.append("id IN (\(intervals))")
            candidates.append(Candidate(index: "incident_listed_intervals", from: "incidents NOT INDEXED", condition: nil,
                                        matches: intervals, preferred: true))
        }
        if let near, conditions == [near.condition], query.order == .distance, case .ordered(let limit?) = reading {
            // Only the nearest `limit`: k nearest neighbours from the R*Tree alone, so a page
            // reads a few more rows than it shows. Their distance is at most the limit-th
            // smallest distance to a box plus a box's size, so only the boxes nearer than that
            // are read, in a circle small enough to hold about 4 × limit boxes when one that size
            // surely holds `limit` incidents.
            let radius = try Self.nearestRadius(near.center, limit: limit, radius: near.radius, db: db)
            candidates[near.candidate].arguments = Self.arguments(BoundingBox.around(near.center, meters: radius), as: "near")
            candidates[near.candidate].arguments["near_rank"] = .integer(Int64(limit - 1))
            candidates[near.candidate].condition = """
                id IN (WITH boxes AS MATERIALIZED (SELECT id, \(Self.nearestInBox) AS nearest FROM incidents_bbox \
                WHERE \(Self.overlaps("near"))) SELECT id FROM boxes WHERE nearest <= coalesce((SELECT nearest FROM boxes \
                ORDER BY nearest LIMIT 1 OFFSET :near_rank), 1e308) + \(Self.boxRoundingMeters))
                """
        }
        try choose(among: candidates, order: query.order, reading: reading, db: db)
    }

    /// The R*Tree's boxes overlapping the box `name` (`:name_min_lon` …).
    static func overlaps(_ name: String) -> String {
        "min_longitude <= :\(name)_max_lon AND max_longitude >= :\(name)_min_lon AND min_latitude <= :\(name)_max_lat AND max_latitude >= :\(name)_min_lat"
    }

    static func overlapping(_ name: String) -> String {
        "SELECT id FROM incidents_bbox WHERE " + overlaps(name)
    }

    /// `:name_min_lat` … of `box`.
    private static func arguments(_ box: BoundingBox, as name: String) -> [String: SQLiteValue] {
        ["\(name)_min_lat": .real(box.minLatitude), "\(name)_max_lat": .real(box.maxLatitude),
         "\(name)_min_lon": .real(box.minLongitude), "\(name)_max_lon": .real(box.maxLongitude)]
    }

    /// The radius, at most `radius`, of a circle around `center` that surely holds the `limit`
    /// nearest incidents: if the incidents in the circle's box were spread evenly, one about 4 ×
    /// `limit` of them, when at least `limit` boxes lie within it by a margin; otherwise `radius`.
    static func nearestRadius(_ center: Coordinate, limit: Int, radius: Double, db: Database) throws -> Double {
        func count(_ sql: String, within meters: Double, upTo bound: Int) throws -> Int {
            var values = arguments(BoundingBox.around(center, meters: meters), as: "near")
            values.merge(["near_lat": .real(center.latitude), "near_lon": .real(center.longitude), "bound": .integer(Int64(bound))]) { $1 }
            let statement = try db.prepare("SELECT count(*) FROM (\(sql) LIMIT :bound)")
            try statement.bind(values.filter { statement.hasParameter($0.key) })
            return try statement.step() ? statement.int(at: 0) ?? 0 : 0
        }
        let inBox = try count(overlapping("near"), within: radius, upTo: 100 * limit)
        guard inBox > 16 * limit else { return radius }
        let smaller = radius * (16 * Double(limit) / (Double.pi * Double(inBox))).squareRoot()
        let sure = try count("SELECT 1 FROM incidents_bbox WHERE \(overlaps("near")) AND \(nearestInBox) <= \(smaller - boxRoundingMeters)",
                             within: smaller, upTo: limit)
        return sure >= limit ? smaller : radius
    }

    /// The distance in meters from the `--near` point to the nearest point of an R*Tree box: no
    /// more than the distance to anything in the box.
    static let nearestInBox = distanceFromNear(latitude: "max(min_latitude, min(max_latitude, :near_lat))",
                                               longitude: "max(min_longitude, min(max_longitude, :near_lon))")

    /// How far, in meters, a point can be from the nearest point of its R*Tree box (at most one
    /// 32-bit float step of each coordinate, under 3 m for WGS84 degrees), with room to spare.
    static let boxRoundingMeters = 5.0

    private mutating func choose(among candidates: [Candidate], order: IncidentOrder, reading: Reading, db: Database) throws {
        switch reading {
        case .ordered:
            driver = Self.orderIndex(order)
            from = driver == "incidents" ? "incidents NOT INDEXED" : "incidents INDEXED BY \(driver)"
        case .unordered:
            driver = "incidents"
            from = "incidents NOT INDEXED"
        }
        guard !candidates.isEmpty else { return }
        let incidents = try db.scalarInt("SELECT coalesce(sum(incidents), 0) FROM incident_counts WHERE dimension = 'source'") ?? 0
        var fewest: Int64
        switch reading {
        case .ordered(let limit?): fewest = Int64((Double(limit) * Double(incidents)).squareRoot())
        case .ordered(nil): fewest = incidents / 2
        case .unordered: fewest = incidents / 8
        }
        // `--at`: the incidents listed at an instant lie around it in start order, not spread
        // through it, so a page read in the order's index would read every incident started
        // since; the intervals that contain the instant cost what the answer does.
        if candidates.contains(where: \.preferred) { fewest = incidents + 1 }
        // A preferred candidate alone drives without being counted (tens of thousands of matches
        // at 1,000,000 incidents); beside others it is counted first, and they only up to its matches.
        let alone = candidates.count == 1 && candidates[0].preferred
        var best: Candidate? = alone ? candidates[0] : nil
        for candidate in alone ? [] : candidates.filter(\.preferred) + candidates.filter({ !$0.preferred }) {
            // Each count stops at the fewest so far: a later candidate only has to beat it.
            let statement = try db.prepare("SELECT count(*) FROM (\(candidate.matches) LIMIT :fewest)")
            var values = arguments.merging(candidate.arguments) { $1 }.filter { statement.hasParameter($0.key) }
            values["fewest"] = .integer(fewest)
            try statement.bind(values)
            if try statement.step(), let matches = statement.int64(at: 0), matches < fewest {
                fewest = matches
                best = candidate
            }
        }
        guard let best else { return }
        driver = best.index
        from = best.from
        if let condition = best.condition { conditions.insert(condition, at: 0) }
        arguments.merge(best.arguments) { $1 }
    }

    /// `(:name0, :name1, …)` bound to `values`; `()` (matches nothing) when there are none.
    private mutating func list(_ name: String, _ values: [String]) -> String {
        for (index, value) in values.enumerated() { arguments["\(name)\(index)"] = .text(value) }
        return "(" + values.indices.map { ":\(name)\($0)" }.joined(separator: ", ") + ")"
    }
}

/// The words of a `--search` text, checked (``SearchTerms``, the rule both stores share), in
/// the form the store looks for them.
struct SearchText {
    /// The whitespace-separated words, in NFC.
    let terms: [String]

    /// - Throws: ``QueryError`` (``SearchTerms/init(_:)``).
    init(_ text: String) throws {
        terms = try SearchTerms(text).terms
    }

    /// `%term%` with `%`, `_` and `\` escaped (for `LIKE … ESCAPE '\'`).
    static func likePattern(_ term: String) -> String {
        "%" + term.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    /// The most windows taken from one term: enough to narrow the rows, few enough for any
    /// term length.
    static let maxWindowsPerTerm = 8

    /// An FTS5 query that every row containing all the terms matches: 3-code-point windows of
    /// each term ANDed (the trigram tokenizer works on code points, not user-perceived
    /// characters, and the index keeps no positions, so a multi-token phrase cannot be asked
    /// for; the LIKE that follows checks the exact substring). Each window is an FTS5 string,
    /// so no character of the text is FTS5 syntax. Nil when no term is as long as a trigram.
    var trigramQuery: String? {
        let windows = terms.flatMap(Self.windows)
        return windows.isEmpty ? nil : windows.joined(separator: " AND ")
    }

    /// A term's 3-code-point windows that do not overlap, plus the last one, at most
    /// ``maxWindowsPerTerm`` spread over the term, each quoted as an FTS5 string.
    static func windows(_ term: String) -> [String] {
        let scalars = Array(term.unicodeScalars).map(String.init)
        guard scalars.count >= 3 else { return [] }
        var starts = Array(stride(from: 0, through: scalars.count - 3, by: 3))
        if starts.last != scalars.count - 3 { starts.append(scalars.count - 3) }
        if starts.count > maxWindowsPerTerm {
            starts = (0..<maxWindowsPerTerm).map { starts[$0 * (starts.count - 1) / (maxWindowsPerTerm - 1)] }
        }
        return starts.map { start in
            "\"" + scalars[start..<start + 3].joined().replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
    }
}

extension SQLiteStore {
    /// The index that can drive a query with each filter parameter (docs/analyst.md's filter table;
    /// ``Selection`` picks among them).
    public static func index(for parameter: IncidentFilter.Parameter) -> String {
        switch parameter {
        case .active: "`incidents_active` (partial: the rows no poll cleared)"
        case .status: "`incidents_active` unless `cleared` is asked for"
        case .source: "`UNIQUE (source, external_id)`"
        case .category: "`incidents_by_category`"
        case .since, .until: "`incidents_by_start` (also the default order)"
        case .seenSince: "`incidents_by_seen`"
        case .road: "`incidents_by_road`, `incidents_by_road_ref`, the distinct names in `incident_counts`"
        case .bbox: "R*Tree `incidents_bbox`"
        case .near: "R*Tree `incidents_bbox` (nearest first: k nearest neighbours)"
        case .radius: "with `near`"
        case .search: "FTS5 trigram index, kept up to date by each poll"
        }
    }
}
