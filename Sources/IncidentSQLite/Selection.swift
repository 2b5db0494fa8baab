import Foundation
import IncidentCore

/// The incidents a query selects, as SQL shared by the listing and the statistics: the table
/// (with the index that must drive it), the conditions and their named arguments.
///
/// SQLite plans without statistics here (no ANALYZE), so the shape of the SQL decides which
/// index drives; `QueryPlanTests` pins the plan of every filter:
/// - `--active`: the active-set index `incidents_active` always drives. It holds only the
///   incidents now listed by their sources, few whatever the length of the history, while the
///   other indexes range over the whole history; the other filters are checked on its rows.
/// - otherwise SQLite picks among the indexes the conditions offer: the R*Tree for
///   `--bbox`/`--near`, the full-text index for a `--search` term that is rare (see
///   ``searchDrives(_:limit:db:)``), `incidents_by_road`/`_by_source`/`_by_category` for one
///   value, `incidents_by_start`/`_by_seen` for time windows, or the index of the order.
struct Selection {
    var from = "incidents"
    var conditions: [String] = []
    var arguments: [String: SQLiteValue] = [:]

    /// ` WHERE …`, or empty.
    var whereClause: String { conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ") }

    /// - Throws: ``QueryError`` for search text the store cannot use; ``SQLiteError``.
    init(_ query: IncidentQuery, db: Database) throws {
        if query.activeOnly {
            from = "incidents INDEXED BY incidents_active"
            // StoredIncident.isActive(at:), in SQL.
            conditions.append("cleared_at IS NULL AND (ended_at IS NULL OR ended_at > :now)")
            arguments["now"] = .text(query.now.rfc3339)
        }
        if !query.sources.isEmpty {
            conditions.append("source IN " + list("source", query.sources))
        }
        if !query.categories.isEmpty {
            conditions.append("category IN " + list("category", query.categories.map(\.rawValue)))
        }
        if let since = query.startedSince {
            conditions.append("started_at >= :since")
            arguments["since"] = .text(since.rfc3339)
        }
        if let until = query.startedUntil {
            conditions.append("started_at < :until")
            arguments["until"] = .text(until.rfc3339)
        }
        if let seen = query.seenSince {
            conditions.append("last_seen_at >= :seen_since")
            arguments["seen_since"] = .text(seen.rfc3339)
        }
        if let road = query.roadContains {
            // The distinct road names are the `road` keys of incident_counts: a few thousand
            // at most, searched instead of every incident; their incidents come from the index.
            var names: [String] = []
            try db.query("""
                SELECT key FROM incident_counts WHERE dimension = 'road' AND key <> '' AND instr(key, :road) > 0 ORDER BY key
                """, ["road": .text(road.nfc)]) { names.append($0.string(at: 0) ?? "") }
            conditions.append("road IN " + list("road", names))
        }
        for (name, box) in [("bbox", query.boundingBox), ("near", query.near.map { BoundingBox.around($0, meters: query.radiusMeters) })] {
            guard let box else { continue }
            conditions.append("""
                id IN (SELECT id FROM incidents_bbox WHERE min_longitude <= :\(name)_max_lon AND max_longitude >= :\(name)_min_lon \
                AND min_latitude <= :\(name)_max_lat AND max_latitude >= :\(name)_min_lat)
                """)
            conditions.append("latitude BETWEEN :\(name)_min_lat AND :\(name)_max_lat AND longitude BETWEEN :\(name)_min_lon AND :\(name)_max_lon")
            arguments["\(name)_min_lat"] = .real(box.minLatitude)
            arguments["\(name)_max_lat"] = .real(box.maxLatitude)
            arguments["\(name)_min_lon"] = .real(box.minLongitude)
            arguments["\(name)_max_lon"] = .real(box.maxLongitude)
        }
        if let text = query.search {
            let search = try SearchText(text)
            if let match = search.trigramQuery, try Self.searchDrives(match, limit: query.limit, db: db) {
                conditions.append("id IN (SELECT rowid FROM incidents_search WHERE incidents_search MATCH :match)")
                arguments["match"] = .text(match)
            }
            for (index, term) in search.terms.enumerated() {
                // Each term occurs in the description or the location (LIKE: ASCII letters match
                // either case). The full-text index, when it drives, only narrows the rows.
                conditions.append("(description LIKE :term\(index) ESCAPE '\\' OR location LIKE :term\(index) ESCAPE '\\')")
                arguments["term\(index)"] = .text(SearchText.likePattern(term))
            }
        }
    }

    /// `(:name0, :name1, …)` bound to `values`; `()` (matches nothing) when there are none.
    private mutating func list(_ name: String, _ values: [String]) -> String {
        for (index, value) in values.enumerated() { arguments["\(name)\(index)"] = .text(value) }
        return "(" + values.indices.map { ":\(name)\($0)" }.joined(separator: ", ") + ")"
    }

    /// Whether the full-text index should drive the query rather than the order's index (with
    /// each row checked). For m rows matching among N incidents, a page of L rows costs about m
    /// lookups when the index drives, and L·N/m rows read in order otherwise; without a limit,
    /// m against N. So the index drives while m < √(L·N) (or m < N), which a read of at most
    /// that many matches from the index tells, whatever the term.
    static func searchDrives(_ match: String, limit: Int?, db: Database) throws -> Bool {
        let incidents = try db.scalarInt("SELECT coalesce(sum(incidents), 0) FROM incident_counts WHERE dimension = 'source'") ?? 0
        let threshold = limit.map { Int64((Double($0) * Double(incidents)).squareRoot()) } ?? incidents
        let matches = try db.scalarInt("""
            SELECT count(*) FROM (SELECT rowid FROM incidents_search WHERE incidents_search MATCH :match LIMIT :threshold)
            """, ["match": .text(match), "threshold": .integer(threshold)]) ?? 0
        return matches < threshold
    }
}

/// The words of a `--search` text, checked, in the form the store looks for them.
struct SearchText {
    /// The longest text searched, in Unicode code points (SQLite bounds a LIKE pattern at
    /// 50,000 bytes: <https://www.sqlite.org/limits.html#max_like_pattern_length>).
    static let maxCodePoints = 256

    /// The whitespace-separated words, in NFC.
    let terms: [String]

    /// - Throws: ``QueryError`` when the text has no words, is longer than ``maxCodePoints``,
    ///   or holds a control character (which SQLite's text functions end at).
    init(_ text: String) throws {
        let text = text.nfc
        if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control && !$0.properties.isWhitespace }) {
            throw QueryError("the search text contains the control character U+\(String(format: "%04X", control.value)); search for printable text")
        }
        let length = text.unicodeScalars.count
        guard length <= Self.maxCodePoints else {
            throw QueryError("the search text is \(length) characters long; search for at most \(Self.maxCodePoints)")
        }
        terms = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !terms.isEmpty else { throw QueryError("the search text has no words; give at least one") }
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
