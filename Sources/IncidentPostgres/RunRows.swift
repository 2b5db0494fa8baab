import IncidentCore

/// The run log's rows (`ingest_runs`), written and read by column name.
enum RunRows {
    static let columns = """
        id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened, cleared, \
        rejected, duplicates, error, origin, file, observed_at, warnings, host, published_at
        """

    /// The columns ``values(_:)`` writes, in order.
    static let valueColumns = values(IngestRun(source: "", startedAt: UTCInstant(secondsSince1970: 0),
                                               finishedAt: UTCInstant(secondsSince1970: 0), status: .failed))
        .map(\.column).joined(separator: ", ")

    /// Every column but `id`, with its value.
    static func values(_ run: IngestRun) -> [(column: String, value: PostgresValue)] {
        let c = run.counts
        let file: String? = if case .file(let path, _) = run.origin { path } else { nil }
        return [
            ("source", .text(run.source)), ("started_at", .instant(run.startedAt)), ("finished_at", .instant(run.finishedAt)),
            ("status", .text(run.status.rawValue)), ("fetched", .integer(Int64(c.fetched))), ("inserted", .integer(Int64(c.inserted))),
            ("updated", .integer(Int64(c.updated))), ("unchanged", .integer(Int64(c.unchanged))),
            ("reopened", .integer(Int64(c.reopened))), ("cleared", .integer(Int64(c.cleared))),
            ("rejected", .integer(Int64(c.rejected))), ("duplicates", .integer(Int64(c.duplicates))),
            ("error", .optional(run.error)), ("origin", .text(file == nil ? "live" : "file")), ("file", .optional(file)),
            ("observed_at", .instant(run.observedAt)),
            ("warnings", .optional(run.warnings.isEmpty ? nil : run.warnings.joined(separator: "\n"))), ("host", .optional(run.host)),
            ("published_at", .optional(run.publishedAt)),
        ]
    }

    /// Inserts `run` (with its `id` when set, as the SQLite copy does); `running` leaves it
    /// `running` with no finish time (a poll under way, finished in the same transaction).
    /// Returns its id.
    static func insert(_ run: IngestRun, running: Bool, connection: Connection) throws -> Int64 {
        var values = self.values(run)
        if running {
            values = values.map { $0.column == "status" ? ($0.column, .text("running")) : $0.column == "finished_at" ? ($0.column, .null) : $0 }
        }
        if let id = run.id { values.append(("id", .integer(id))) }
        let columns = values.map(\.column)
        let result = try connection.query("""
            INSERT INTO ingest_runs (\(columns.joined(separator: ", "))) VALUES (\(columns.map { ":" + $0 }.joined(separator: ", "))) RETURNING id
            """, named: Dictionary(uniqueKeysWithValues: values.map { ($0.column, $0.value) }), context: "recording a run of \(run.source)")
        guard let id = result.int64(0, 0) else {
            throw PostgresError(message: "the run was inserted without an id", context: "recording a run of \(run.source)")
        }
        return id
    }

    /// Writes the outcome of a run inserted as `running`.
    static func finish(_ run: IngestRun, connection: Connection) throws {
        guard let id = run.id else { return }
        let values = self.values(run).filter { $0.column != "source" && $0.column != "started_at" }
        let assignments = values.map { "\($0.column) = :\($0.column)" }.joined(separator: ", ")
        try connection.query("UPDATE ingest_runs SET \(assignments) WHERE id = :run_id",
                             named: Dictionary(uniqueKeysWithValues: values.map { ($0.column, $0.value) } + [("run_id", .integer(id))]), context: "recording the run of \(run.source)")
    }

    /// Reads one row of a result that selected ``columns``.
    static func decode(_ r: Result, _ row: Int32) throws -> IngestRun {
        func text(_ name: String) throws -> String? { r.string(row, try r.column(name)) }
        func count(_ name: String) throws -> Int { r.int(row, try r.column(name)) ?? 0 }
        let started = r.instant(row, try r.column("started_at")) ?? UTCInstant(secondsSince1970: 0)
        let file = try text("file")
        return IngestRun(
            id: r.int64(row, try r.column("id")), source: try text("source") ?? "", startedAt: started,
            finishedAt: r.instant(row, try r.column("finished_at")) ?? started,
            status: RunStatus(rawValue: try text("status") ?? "") ?? .failed,
            counts: IngestCounts(fetched: try count("fetched"), inserted: try count("inserted"), updated: try count("updated"),
                                 unchanged: try count("unchanged"), reopened: try count("reopened"), cleared: try count("cleared"),
                                 rejected: try count("rejected"), duplicates: try count("duplicates")),
            origin: try text("origin") == "file" ? .file(path: file ?? "", complete: false) : .live,
            observedAt: r.instant(row, try r.column("observed_at")),
            error: try text("error"),
            warnings: try text("warnings").map { $0.split(separator: "\n").map(String.init) } ?? [],
            host: try text("host"), publishedAt: r.instant(row, try r.column("published_at")))
    }
}

/// Quarantined records (`rejected_records`).
enum RejectionRows {
    static let columns = "id, run_id, source, external_id, position, reason, excerpt, rejected_at"

    static func decode(_ r: Result, _ row: Int32) throws -> StoredRejection {
        func text(_ name: String) throws -> String? { r.string(row, try r.column(name)) }
        return StoredRejection(
            runID: r.int64(row, try r.column("run_id")) ?? 0, source: try text("source") ?? "",
            rejectedAt: r.instant(row, try r.column("rejected_at")) ?? UTCInstant(secondsSince1970: 0),
            record: RejectedRecord(externalID: try text("external_id"), position: try text("position") ?? "",
                                   reason: try text("reason") ?? "", excerpt: try text("excerpt")))
    }
}
