import IncidentCore

/// The run log's rows (`ingest_runs`), bound and read by column name.
enum RunRow {
    static let columns = """
        id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened, cleared, \
        rejected, duplicates, error, origin, file, observed_at, warnings, host, published_at
        """

    static func arguments(_ run: IngestRun) -> [String: SQLiteValue] {
        let c = run.counts
        let file: String? = if case .file(let path, _) = run.origin { path } else { nil }
        return [
            "source": .text(run.source), "started_at": .text(run.startedAt.rfc3339), "finished_at": .text(run.finishedAt.rfc3339),
            "status": .text(run.status.rawValue), "fetched": .integer(Int64(c.fetched)), "inserted": .integer(Int64(c.inserted)),
            "updated": .integer(Int64(c.updated)), "unchanged": .integer(Int64(c.unchanged)),
            "reopened": .integer(Int64(c.reopened)), "cleared": .integer(Int64(c.cleared)),
            "rejected": .integer(Int64(c.rejected)), "duplicates": .integer(Int64(c.duplicates)),
            "error": .optional(run.error), "origin": .text(file == nil ? "live" : "file"), "file": .optional(file),
            "observed_at": .text(run.observedAt.rfc3339),
            "warnings": .optional(run.warnings.isEmpty ? nil : run.warnings.joined(separator: "\n")), "host": .optional(run.host),
            "published_at": .optional(run.publishedAt?.rfc3339),
        ]
    }

    /// Inserts `run`; `running` leaves it `running` with no finish time (a poll under way,
    /// finished in the same transaction). Returns its id.
    static func insert(_ run: IngestRun, running: Bool, db: Database) throws -> Int64 {
        var values = arguments(run)
        if running {
            values["status"] = .text("running")
            values["finished_at"] = .null
        }
        let names = values.keys.sorted()
        try db.run("INSERT INTO ingest_runs (\(names.joined(separator: ", "))) VALUES (\(names.map { ":" + $0 }.joined(separator: ", ")))",
                   values)
        return db.lastInsertRowID
    }

    /// Writes the outcome of a run inserted as `running`.
    static func finish(_ run: IngestRun, db: Database) throws {
        guard let id = run.id else { return }
        var values = arguments(run)
        values["source"] = nil
        values["started_at"] = nil
        let names = values.keys.sorted()
        values["id"] = .integer(id)
        try db.run("UPDATE ingest_runs SET \(names.map { "\($0) = :\($0)" }.joined(separator: ", ")) WHERE id = :id", values)
    }

    /// Reads the current row of a statement that selected ``columns``.
    static func decode(_ s: Statement) throws -> IngestRun {
        func text(_ name: String) throws -> String? { s.string(at: try s.column(name)) }
        func count(_ name: String) throws -> Int { s.int(at: try s.column(name)) ?? 0 }
        let started = try s.instant(at: s.column("started_at")) ?? UTCInstant(secondsSince1970: 0)
        let file = try text("file")
        return IngestRun(
            id: try s.int64(at: s.column("id")), source: try text("source") ?? "", startedAt: started,
            finishedAt: try s.instant(at: s.column("finished_at")) ?? started,
            status: RunStatus(rawValue: try text("status") ?? "") ?? .failed,
            counts: IngestCounts(fetched: try count("fetched"), inserted: try count("inserted"), updated: try count("updated"),
                                 unchanged: try count("unchanged"), reopened: try count("reopened"), cleared: try count("cleared"),
                                 rejected: try count("rejected"), duplicates: try count("duplicates")),
            origin: try text("origin") == "file" ? .file(path: file ?? "", complete: false) : .live,
            observedAt: try s.instant(at: s.column("observed_at")),
            error: try text("error"),
            warnings: try text("warnings").map { $0.split(separator: "\n").map(String.init) } ?? [],
            host: try text("host"), publishedAt: try s.instant(at: s.column("published_at")))
    }
}
