/// The structures derived from `incidents` that SQLite does not keep in step by itself
/// (migration 0005), kept in step by the store in the transaction that changes the rows:
///
/// - `incidents_search`, the FTS5 trigram index of description and location. It has external
///   content (it stores the index only), so a row must be removed with the values it was
///   indexed with (<https://www.sqlite.org/fts5.html#external_content_tables>);
/// - `incidents_bbox`, the R*Tree of each incident's bounding box;
/// - `incident_counts`, incidents by source, category, road, canonical road and minute of start,
///   for `stats` and the road names `--road` searches.
///
/// ``addSearchAndBoxes(_:in:)`` and ``addCounts(_:in:)`` run after rows were inserted or
/// changed, ``remove(_:in:)`` before rows change or are deleted. Statements over a set of rows,
/// not triggers: a trigger runs a sub-program per row, which cost 300,000 new incidents 1.3 s
/// more CPU (0.5 s for the full-text index, 0.8 s for the R*Tree) than adding them at the end of
/// the poll with one statement per structure.
enum DerivedIndexes {
    /// Some incidents: an SQL condition on `incidents` and its arguments.
    struct Rows {
        let condition: String
        let arguments: [String: SQLiteValue]

        /// The incidents with an id above `id`: the ones inserted since `id` was the largest
        /// (SQLite gives a new row the largest rowid plus one: <https://www.sqlite.org/autoinc.html>).
        static func after(_ id: Int64) -> Rows { Rows(condition: "id > :derived_after", arguments: ["derived_after": .integer(id)]) }
        /// One incident.
        static func id(_ id: Int64) -> Rows { Rows(condition: "id = :derived_id", arguments: ["derived_id": .integer(id)]) }
        /// The incidents listed in `temp.prune_batch` (pruning).
        static let pruneBatch = Rows(condition: "id IN (SELECT id FROM temp.prune_batch)", arguments: [:])
    }

    /// The bounding box of an incident (`min_longitude, max_longitude, min_latitude,
    /// max_latitude`, WGS84 degrees) and when it has one: its geometry's box (0006), else its
    /// position (a box with no area). An incident with a geometry always has a position.
    static let boundingBox = (columns: "coalesce(min_longitude, longitude), coalesce(max_longitude, longitude), "
                                + "coalesce(min_latitude, latitude), coalesce(max_latitude, latitude)",
                              exists: "latitude IS NOT NULL AND longitude IS NOT NULL",
                              // Each coordinate of the box, with `@` for the table's alias.
                              parts: ["coalesce(@min_longitude, @longitude)", "coalesce(@max_longitude, @longitude)",
                                      "coalesce(@min_latitude, @latitude)", "coalesce(@max_latitude, @latitude)"])

    /// What `incident_counts` counts: each dimension and the expression of its key (an absent
    /// value is ''). `stats` groups by the same expressions when it has to count rows.
    static let countedKeys: [(dimension: String, key: String)] = [
        ("source", "source"),
        ("category", "category"),
        ("road", "coalesce(road, '')"),
        ("road_ref", "coalesce(road_ref, '')"),
        ("start_minute", "coalesce(substr(started_at, 12, 5), '')"),  // HH:MM of the RFC 3339 UTC text
    ]

    /// Adds `rows`, as they are now, to the search index and the R*Tree (``addCounts(_:in:)``
    /// adds them to the counts: apart, so that a poll can give each its own page cache).
    static func addSearchAndBoxes(_ rows: Rows, in db: Database) throws {
        try db.run("""
            INSERT INTO incidents_search (rowid, description, location)
            SELECT id, description, location FROM incidents WHERE \(rows.condition) ORDER BY id
            """, rows.arguments)
        try db.run("""
            INSERT INTO incidents_bbox (id, min_longitude, max_longitude, min_latitude, max_latitude)
            SELECT id, \(boundingBox.columns) FROM incidents WHERE \(rows.condition) AND \(boundingBox.exists)
            """, rows.arguments)
    }

    /// Adds `rows`, as they are now, to the counts, one dimension at a time: for many rows (a
    /// poll's new incidents), in less memory.
    static func addCounts(_ rows: Rows, in db: Database) throws {
        try count(rows, by: 1, separately: true, in: db)
    }

    /// Removes `rows`, as they are now (before they change or are deleted), from every structure.
    static func remove(_ rows: Rows, in db: Database) throws {
        try db.run("""
            INSERT INTO incidents_search (incidents_search, rowid, description, location)
            SELECT 'delete', id, description, location FROM incidents WHERE \(rows.condition)
            """, rows.arguments)
        try db.run("DELETE FROM incidents_bbox WHERE id IN (SELECT id FROM incidents WHERE \(rows.condition))", rows.arguments)
        try count(rows, by: -1, in: db)
        // Through the partial index of keys at zero (0010), not every key.
        try db.run("DELETE FROM incident_counts WHERE incidents = 0")
    }

    /// Before a poll changes `rows` (one incident, changed or reopened): keeps what its derived
    /// entries were made from in `temp.changed_incidents`, until ``finishChanges(in:)`` moves
    /// every structure over for all of the poll's changes at once. Removing and adding each
    /// changed incident as the feed listed it made FTS5 flush its pending terms before every
    /// rowid lower than the last one (a new segment each, merged into the large ones: 4 ms per
    /// change at 1,000,000 stored), and rebuilt R*Tree entries whose box had not moved (47 % of
    /// the SQL time of a 100,000-record poll in which every description changed) (issue 23).
    static func removeBeforeChange(_ rows: Rows, in db: Database) throws {
        try db.run("""
            INSERT INTO temp.changed_incidents (\(changedColumns))
            SELECT \(changedColumns) FROM incidents WHERE \(rows.condition)
            """, rows.arguments)
    }

    /// Makes `temp.changed_incidents` ready for ``removeBeforeChange(_:in:)`` (once per poll,
    /// not per change).
    static func prepareChanges(in db: Database) throws {
        try db.execute(createChanged)
    }

    /// Moves the derived structures over for the incidents changed since the last call, each
    /// only for those whose values it is made from changed: the search index for a new
    /// description or location (their old text out, then their new text in, each in rowid order:
    /// two FTS5 flushes per poll, not two per change), the R*Tree for a box that moved, and the
    /// counts for a new key (old keys out, new keys in, one statement each). A new end time
    /// moves none of them, a new description only the search index (the counts of a poll in
    /// which all 100,000 descriptions changed were 7 % of its SQL time, for the same counts).
    static func finishChanges(in db: Database) throws {
        try db.execute(createChanged)
        let retexted = changed(in: ["@description", "@location"])
        try db.run("""
            INSERT INTO incidents_search (incidents_search, rowid, description, location)
            SELECT 'delete', id, description, location FROM temp.changed_incidents WHERE \(retexted.condition) ORDER BY id
            """)
        try db.run("""
            INSERT INTO incidents_search (rowid, description, location)
            SELECT id, description, location FROM incidents WHERE \(retexted.condition) ORDER BY id
            """)
        let moved = changed(in: boundingBox.parts)
        try db.run("DELETE FROM incidents_bbox WHERE \(moved.condition)")
        try db.run("""
            INSERT INTO incidents_bbox (id, min_longitude, max_longitude, min_latitude, max_latitude)
            SELECT id, \(boundingBox.columns) FROM incidents WHERE \(moved.condition) AND \(boundingBox.exists)
            """)
        let recounted = changed(in: countedColumns.map { "@" + $0 })
        try count(recounted, by: -1, from: "temp.changed_incidents", in: db)
        try count(recounted, by: 1, in: db)
        try db.run("DELETE FROM incident_counts WHERE incidents = 0")
        try db.run("DELETE FROM temp.changed_incidents")
    }

    /// The changed incidents (`temp.changed_incidents`) one of whose `parts` (expressions over
    /// `incidents`' columns, `@` for the table's alias) is not what it was.
    private static func changed(in parts: [String]) -> Rows {
        let differs = parts.map { "\($0.replacingOccurrences(of: "@", with: "was.")) IS NOT \($0.replacingOccurrences(of: "@", with: "i."))" }
        return Rows(condition: """
            id IN (SELECT was.id FROM temp.changed_incidents was JOIN incidents i ON i.id = was.id
                   WHERE \(differs.joined(separator: " OR ")))
            """, arguments: [:])
    }

    /// The columns the keys of ``countedKeys`` are made from.
    private static let countedColumns = ["source", "category", "road", "road_ref", "started_at"]

    /// The columns of `incidents` the derived structures are made from.
    private static let changedColumns = "id, description, location, source, category, road, road_ref, started_at, "
        + "latitude, longitude, min_longitude, max_longitude, min_latitude, max_latitude"
    private static let createChanged = "CREATE TEMP TABLE IF NOT EXISTS changed_incidents (id INTEGER PRIMARY KEY, "
        + changedColumns.split(separator: ",").dropFirst().joined(separator: ",") + ")"

    /// `NOT INDEXED`: the rows are found by rowid, never by another index. Left to itself,
    /// SQLite grouped `source` and `category` by reading their covering indexes whole, in key
    /// order, and skipping the rows outside `rows` — every stored incident, each poll (259 ms of
    /// a poll at 3,000,000 incidents; 0.1 ms by rowid).
    /// `separately`: one statement per dimension, not one for all: each `GROUP BY` sorts in a
    /// buffer the size of the page cache, and a statement keeps its sorters until it ends (the
    /// counts of 300,000 new incidents took a fresh ingest's peak memory up by 10 MiB at once,
    /// 2 MiB a statement).
    private static func count(_ rows: Rows, by sign: Int64, from table: String = "incidents NOT INDEXED",
                              separately: Bool = false, in db: Database) throws {
        let selects = countedKeys.map { dimension, key in
            "SELECT '\(dimension)', \(key), :sign * count(*) FROM \(table) WHERE \(rows.condition) GROUP BY 2"
        }
        var arguments = rows.arguments
        arguments["sign"] = .integer(sign)
        for group in separately ? selects.map { [$0] } : [selects] {
            try db.run("""
                INSERT INTO incident_counts (dimension, key, incidents)
                \(group.joined(separator: "\nUNION ALL "))
                ON CONFLICT (dimension, key) DO UPDATE SET incidents = incidents + excluded.incidents
                """, arguments)
        }
    }
}
