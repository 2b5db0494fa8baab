import Foundation
import IncidentCore

/// The incident store on PostgreSQL, shared by every scheduler host and reader: it implements
/// the same ports as the SQLite store (``IngestStore``, ``IncidentReader``,
/// ``StoreAdministration``) plus ``SourceLeases``, with the same meaning; the commands do not
/// know which store they talk to.
///
/// One instance keeps a small pool of connections (one per poll or query under way); calls may
/// come from any task. Polls of one source are serialized in the database (a transaction-level
/// advisory lock per source), whichever host runs them.
public final class PostgresStore: StoreExecution, Sendable {
    /// What the store is opened for.
    public enum Access: Sendable {
        /// Ingest and administration: pending migrations are applied when opening.
        case write
        /// Queries only: the schema must be up to date (never migrated); every transaction is
        /// `READ ONLY`, so a reader role with SELECT rights suffices.
        case read
        /// Schema administration: migrations are neither applied nor required.
        case inspect
    }

    public let location: PostgresLocation
    let pool: ConnectionPool
    let clock: UTCClock
    let columns: PostgresColumns
    let migrator: PostgresMigrator
    /// The threads its calls run on from async code (``StoreExecution``): each waits there
    /// for a connection of the pool or for the server, not on the cooperative pool.
    public let executor = StoreExecutor(name: "postgres", threads: StoreExecutor.storeThreads)

    /// Connects to `location` (libpq finds the password: PGPASSWORD, PGPASSFILE, ~/.pgpass) and
    /// prepares the store for `access`.
    ///
    /// - Parameters:
    ///   - connections: the most connections this store opens at once.
    ///   - reconnectSeconds: how long to keep trying while the server cannot be reached (opening
    ///     the store included: it fails after about this long).
    ///   - timeouts: the time limits of every transaction (``PostgresTimeouts``).
    ///   - fields: the content fields (tests add one to prove the list drives every statement).
    /// - Throws: ``PostgresError`` (cannot connect, no such database: ``PostgresError/isMissingDatabase``),
    ///   ``MigrationError``.
    public init(_ location: PostgresLocation, clock: UTCClock, access: Access = .write,
                connections: Int = 4, reconnectSeconds: Double = 10, timeouts: PostgresTimeouts = .standard,
                fields: [IncidentField] = IncidentField.content, migrator: PostgresMigrator? = nil) throws {
        let migrator = try migrator ?? PostgresMigrator.bundled()
        self.location = location
        self.clock = clock
        self.columns = PostgresColumns(fields)
        self.migrator = migrator
        pool = ConnectionPool(capacity: connections, reconnectSeconds: reconnectSeconds) { seconds in
            try Connection(location: location, readOnly: access == .read, timeouts: timeouts, connectSeconds: seconds)
        }
        try pool.withConnection { connection in
            switch access {
            case .write: _ = try migrator.migrate(connection, now: clock.now())
            case .read: try migrator.verifyUpToDate(connection)
            case .inspect: break
            }
        }
    }

    /// Runs `body` with a connection of the pool, lent for the work on `source` (which
    /// ``interrupt(source:)`` can stop).
    func withConnection<T>(source: String? = nil, reconnect: Bool = true, _ body: (Connection) throws -> T) throws -> T {
        try pool.withConnection(label: source, reconnect: reconnect, body)
    }
}

// MARK: - StoreInterruption

extension PostgresStore: StoreInterruption {
    /// Stops the statements under way for `source` (all when nil) from another thread: the
    /// server is asked to cancel them and their connections are shut down, so a call blocked
    /// by a network that stopped answering returns at once (``Connection/interrupt()``).
    public func interrupt(source: String?) {
        pool.interrupt(label: source)
    }
}

// MARK: - StoreAdministration

extension PostgresStore: StoreAdministration {
    public func migrate() throws -> [String] {
        try withConnection { try migrator.migrate($0, now: clock.now()).map(\.name) }
    }

    public func migrationStates() throws -> [MigrationState] {
        try withConnection { connection in
            try migrator.status(connection).map {
                MigrationState(version: $0.migration.version, name: $0.migration.name, appliedAt: $0.appliedAt)
            }
        }
    }

    /// Deletes incidents cleared before `horizon` (with their revisions and transitions) and
    /// runs finished before it (with their rejected records), except each source's latest run,
    /// in batches of 1,000 rows, each its own short transaction. The rows that foreign keys
    /// would delete along are deleted by their own statements, which count them.
    public func prune(before horizon: UTCInstant) throws -> PruneCounts {
        try prune(before: horizon, batchSize: 1000)
    }

    /// The incidents a prune deletes: cleared before `:horizon`.
    static let prunedIncidents = "SELECT id FROM incidents WHERE cleared_at IS NOT NULL AND cleared_at < :horizon"
    /// The runs a prune deletes: finished before `:horizon`, with a later run of their source:
    /// the next entry of ingest_runs_by_source after it is of the same source, one seek per
    /// run. As `EXISTS (… later.id > r.id)` the planner joined every run of the log by a hash,
    /// and as `id < (SELECT max(id) … WHERE source = r.source)` it walked the primary key back
    /// from the newest run: for a source polled no more, every run since its last (20,000 rows,
    /// PostgresPlanTests). A row comparison is answered by no other index.
    static let prunedRuns = """
        SELECT id FROM ingest_runs r WHERE finished_at < :horizon
          AND (SELECT later.source FROM ingest_runs later WHERE (later.source, later.id) > (r.source, r.id)
               ORDER BY later.source, later.id LIMIT 1) = r.source
        """

    func prune(before horizon: UTCInstant, batchSize: Int) throws -> PruneCounts {
        var counts = PruneCounts()
        let arguments: [String: PostgresValue] = ["horizon": .instant(horizon), "batch_size": .integer(Int64(batchSize))]
        /// Picks up to a batch of ids by `selection` into the temporary table `batch`, then runs
        /// `deletes` (each reading `batch`, counted into its key path) in one transaction, until a
        /// batch's last delete removes fewer rows than a batch.
        func inBatches(_ batch: String, _ selection: String, context: String,
                       before: (_ connection: Connection) throws -> Void = { _ in },
                       _ deletes: [(WritableKeyPath<PruneCounts, Int>, String, String)]) throws {
            while true {
                let removed = try withConnection { connection in
                    try connection.transaction(context: context) { () throws -> [Int] in
                        try connection.execute("CREATE TEMP TABLE \(batch) (id bigint PRIMARY KEY) ON COMMIT DROP", context: context)
                        try connection.query("INSERT INTO \(batch) \(selection) LIMIT :batch_size FOR UPDATE", named: arguments, context: context)
                        // Its true size (at most a batch) for the planner, which otherwise guesses
                        // thousands and may join it to incidents by reading the primary key whole.
                        try connection.execute("ANALYZE \(batch)", context: context)
                        try before(connection)
                        return try deletes.map { _, statement, context in try connection.query(statement, context: context).affectedRows }
                    }
                }
                for ((count, _, _), rows) in zip(deletes, removed) { counts[keyPath: count] += rows }
                if (removed.last ?? 0) < batchSize { return }
            }
        }
        try inBatches("prune_batch", Self.prunedIncidents, context: "pruning incidents", before: { connection in
            try PostgresCounts.apply(PostgresCounts.keys(of: "incidents x JOIN prune_batch USING (id)", sign: -1),
                                     connection: connection, context: "uncounting the pruned incidents")
        }, [
            (\.revisions, "DELETE FROM incident_revisions WHERE incident_id IN (SELECT id FROM prune_batch)", "pruning revisions"),
            (\.transitions, "DELETE FROM incident_transitions WHERE incident_id IN (SELECT id FROM prune_batch)", "pruning transitions"),
            (\.incidents, "DELETE FROM incidents WHERE id IN (SELECT id FROM prune_batch)", "pruning incidents"),
        ])
        try inBatches("prune_runs", Self.prunedRuns, context: "pruning runs", [
            (\.rejectedRecords, "DELETE FROM rejected_records WHERE run_id IN (SELECT id FROM prune_runs)", "pruning rejected records"),
            (\.runs, "DELETE FROM ingest_runs WHERE id IN (SELECT id FROM prune_runs)", "pruning runs"),
        ])
        return counts
    }

    /// What ``prune(before:)`` would delete, counted in one statement of a read-only
    /// transaction through the prune's own selections; deletes nothing.
    public func pruneCounts(before horizon: UTCInstant) throws -> PruneCounts {
        try withConnection { connection in
            try connection.transaction("BEGIN READ ONLY", context: "counting what a prune would delete") {
                let row = try connection.query(PruneSQL.counts(incidents: Self.prunedIncidents, runs: Self.prunedRuns),
                                               named: ["horizon": .instant(horizon)], context: "counting what a prune would delete")
                return PruneCounts(incidents: row.int(0, 0) ?? 0, revisions: row.int(0, 1) ?? 0, transitions: row.int(0, 2) ?? 0,
                                   runs: row.int(0, 3) ?? 0, rejectedRecords: row.int(0, 4) ?? 0)
            }
        }
    }

    public func clearQuota(source: String) throws -> Bool {
        try withConnection { connection in
            try connection.query("UPDATE source_state SET exhausted_until = NULL WHERE source = :source AND exhausted_until IS NOT NULL",
                                 named: ["source": .text(source)], context: "clearing the quota pause of \(source)").affectedRows == 1
        }
    }
}
