import Foundation
import IncidentCore

/// The incident store on SQLite, one file per host (or `:memory:` in tests): it implements
/// every store port (``IngestStore``, ``IncidentReader``, ``StoreAdministration``).
///
/// One instance owns one connection; calls are serialized by a lock, so the store may be shared
/// between tasks. Processes are serialized by SQLite's file locks and the busy timeout.
public final class SQLiteStore: StoreFile, StoreExecution, @unchecked Sendable {  // all state is behind `lock`
    private(set) var db: Database
    private let lock = NSLock()
    /// The threads its calls run on from async code (``StoreExecution``): each waits there
    /// for the connection (`lock`) or another process's lock, not on the cooperative pool.
    public let executor = StoreExecutor(name: "sqlite", threads: StoreExecutor.storeThreads)
    let clock: UTCClock
    let columns: ContentColumns
    let migrator: Migrator
    private let busyTimeout: Double
    /// The -wal file SQLite opened with the database (``reopen()``); nil without one.
    private var logIdentity: FileIdentity?

    /// Opens the database for ingestion, creating it and applying pending migrations.
    ///
    /// - Parameters:
    ///   - path: a file path, or `:memory:`.
    ///   - busyTimeout: seconds to wait for another process's lock.
    ///   - fields: the content fields (tests add one to prove the list drives every statement).
    /// - Throws: ``SQLiteError`` (cannot open, not a database), ``MigrationError``.
    public init(path: String, clock: UTCClock, busyTimeout: Double = 10,
                fields: [IncidentField] = IncidentField.content, migrator: Migrator? = nil) throws {
        let migrator = try migrator ?? Migrator.bundled()
        try Self.checkAccepted(path, migrator: migrator, busyTimeout: busyTimeout)
        // The migration lock is taken before the file is created, so a reader that finds the
        // file also finds the lock while the schema is being made.
        db = try Self.openMigrated(path, mode: .readWriteCreate, busyTimeout: busyTimeout, migrator: migrator, clock: clock)
        self.clock = clock
        self.columns = ContentColumns(fields)
        self.migrator = migrator
        self.busyTimeout = busyTimeout
        self.logIdentity = path == ":memory:" ? nil : FileIdentity(path: path + "-wal")
    }

    /// Opens the file at `path` and applies pending migrations.
    private static func openMigrated(_ path: String, mode: Database.Mode, busyTimeout: Double, migrator: Migrator,
                                     clock: UTCClock) throws -> Database {
        // The migration lock is taken before the file is created, so a reader that finds the
        // file also finds the lock while the schema is being made.
        try MigrationLock.whileMigrating(path) {
            let db = try Database(path: path, mode: mode, busyTimeout: busyTimeout)
            if try !migrator.migrate(db, now: clock.now()).isEmpty { db.checkpoint() }
            return db
        }
    }

    /// Opens an existing database for queries only. Never creates or migrates it; when a
    /// migration is under way in another process, waits for it (up to `busyTimeout`).
    ///
    /// - Throws: ``StoreOpenError/missing(path:)`` when there is no file,
    ///   ``MigrationError/pending(names:)`` when `incident-scheduler migrate` must run first,
    ///   ``MigrationError/newerSchema(databaseVersion:knownVersion:)``, ``SQLiteError``.
    public init(readingFrom path: String, clock: UTCClock, busyTimeout: Double = 10) throws {
        if path != ":memory:" && !FileManager.default.fileExists(atPath: path) {
            throw StoreOpenError.missing(path: path)
        }
        db = try Database(path: path, mode: .readOnly, busyTimeout: busyTimeout)
        self.clock = clock
        self.columns = ContentColumns()
        self.migrator = try Migrator.bundled()
        self.busyTimeout = busyTimeout
        try MigrationLock.waitWhileMigrating(path, seconds: busyTimeout) {
            try migrator.verifyUpToDate(db)
        }
    }

    /// Opens the database for schema administration: neither applies nor requires
    /// migrations (``StoreAdministration/migrationStates()`` reads, ``StoreAdministration/migrate()``
    /// applies). `create` makes the file when missing; otherwise it is opened read-only.
    public init(inspecting path: String, clock: UTCClock, create: Bool, busyTimeout: Double = 10) throws {
        if create { try Self.checkAccepted(path, migrator: try Migrator.bundled(), busyTimeout: busyTimeout) }
        db = try Database(path: path, mode: create ? .readWriteCreate : .readOnly, busyTimeout: busyTimeout)
        self.clock = clock
        self.columns = ContentColumns()
        self.migrator = try Migrator.bundled()
        self.busyTimeout = busyTimeout
    }

    /// Checks, through a read-only connection, that an existing database at `path` is one this
    /// binary may write (``Migrator/verifyAccepted(_:)``) before anything opens it for writing:
    /// opening for writing switches the file to WAL mode and a migration takes its
    /// `.migrating` lock file, so a database that is then refused (a newer schema, an edited
    /// migration, not a database) would not be left byte for byte as it was. Nothing to check
    /// when there is no file yet (or `:memory:`).
    /// - Throws: ``MigrationError``, ``SQLiteError``.
    public static func checkAccepted(_ path: String, migrator: Migrator, busyTimeout: Double = 10) throws {
        guard path != ":memory:", !path.isEmpty, FileManager.default.fileExists(atPath: path) else { return }
        let db = try Database(path: path, mode: .readOnly, busyTimeout: busyTimeout)
        try migrator.verifyAccepted(db)
    }

    /// Runs `body` with exclusive use of the connection.
    public func withDatabase<T>(_ body: (Database) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(db)
    }

    // MARK: StoreFile

    /// Whether the database's path still names the file this store has open: SQLite compares
    /// the inode of the file it opened (`fstat` at open) with the path's (`stat`)
    /// (`SQLITE_FCNTL_HAS_MOVED`, <https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html>).
    /// A file deleted, or replaced by another (`mv backup.sqlite incidents.sqlite`), under a
    /// running process keeps being written through the open descriptor, where nobody sees it.
    /// Always ``StoreFileState/same`` for `:memory:`.
    public func fileState() -> StoreFileState {
        withDatabase { db in
            guard db.path != ":memory:", !db.path.isEmpty, db.hasMoved else { return .same }
            return FileManager.default.fileExists(atPath: db.path) ? .replaced : .deleted
        }
    }

    /// Closes the connection and opens the file the path names now (a restored backup),
    /// applying pending migrations, as ``init(path:clock:busyTimeout:fields:migrator:)`` does
    /// but without creating a file. The old connection is closed first: SQLite's -wal and -shm
    /// files are found by path, and one process must not have two database files open over them.
    ///
    /// The old file's log must not be read into the new one (SQLite would: "mispairing",
    /// <https://www.sqlite.org/howtocorrupt.html>, 1.4). SQLite does not checkpoint a moved file
    /// when it closes it (pager.c, `databaseIsUnchanged`), so the log is checkpointed into it
    /// first, waiting up to the busy timeout for readers; when a reader (another process) still
    /// keeps it, the -wal and -shm files of the old file (the -wal SQLite opened with it) are
    /// unlinked: that process keeps them open, the new file starts with none. A -wal that came
    /// with the new file is its own, and kept.
    /// - Throws: ``SQLiteError``, ``MigrationError``; the store then refuses every statement
    ///   (it is open on nothing) until it is reopened.
    public func reopen() throws {
        lock.lock()
        defer { lock.unlock() }
        let path = db.path
        let log = path + "-wal"
        try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db = try Database(path: ":memory:", mode: .readOnly)  // closes the old connection
        if let oldLog = logIdentity, FileIdentity(path: log) == oldLog,
           ((try? FileManager.default.attributesOfItem(atPath: log))?[.size] as? Int ?? 0) > 0 {
            unlink(log)
            unlink(path + "-shm")
        }
        db = try Self.openMigrated(path, mode: .readWrite, busyTimeout: busyTimeout, migrator: migrator, clock: clock)
        logIdentity = FileIdentity(path: log)
    }
}

/// Why a database could not be opened for reading.
public enum StoreOpenError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(path: String)

    public var description: String {
        switch self {
        case .missing(let path):
            return "no incidents database at \(path)"
        }
    }
}

// MARK: - StoreAdministration

extension SQLiteStore: StoreAdministration {
    public func migrate() throws -> [String] {
        try withDatabase { db in
            try MigrationLock.whileMigrating(db.path) {
                let applied = try migrator.migrate(db, now: clock.now()).map(\.name)
                if !applied.isEmpty { db.checkpoint() }
                return applied
            }
        }
    }

    public func migrationStates() throws -> [MigrationState] {
        try withDatabase { db in
            try migrator.status(db).map {
                MigrationState(version: $0.migration.version, name: $0.migration.name,
                               appliedAt: $0.appliedAt.flatMap { UTCInstant(rfc3339: $0) })
            }
        }
    }

    /// Deletes what is older than `horizon`: incidents cleared before it (with their revisions
    /// and transitions) and runs finished before it (with their rejected records), except each
    /// source's latest run. Both are found through their indexes (0010), so a prune that deletes
    /// nothing reads a few index entries, however long the history. Works in batches of
    /// `batchSize` rows, each its own short transaction, so an ingest or a reader never waits
    /// long behind a large prune. The rows that foreign keys would delete along (revisions,
    /// transitions, rejected records) are deleted by their own statements, which count them.
    public func prune(before horizon: UTCInstant) throws -> PruneCounts {
        try prune(before: horizon, batchSize: 1000)
    }

    /// The incidents a prune deletes: cleared before `:cutoff`.
    static let prunedIncidents = """
        SELECT id FROM incidents INDEXED BY incidents_by_cleared WHERE cleared_at IS NOT NULL AND cleared_at < :cutoff
        """
    /// The runs a prune deletes: finished before `:cutoff`, with a later run of their source.
    static let prunedRuns = """
        SELECT id FROM ingest_runs r WHERE finished_at < :cutoff
          AND EXISTS (SELECT 1 FROM ingest_runs later WHERE later.source = r.source AND later.id > r.id)
        """

    func prune(before horizon: UTCInstant, batchSize: Int) throws -> PruneCounts {
        var counts = PruneCounts()
        let arguments: [String: SQLiteValue] = ["cutoff": .text(horizon.rfc3339), "batch": .integer(Int64(batchSize))]
        while true {
            let batch = try withDatabase { db in
                try db.writeTransaction { () throws -> PruneCounts in
                    try db.run("CREATE TEMP TABLE IF NOT EXISTS prune_batch (id INTEGER PRIMARY KEY)")
                    try db.run("DELETE FROM temp.prune_batch")
                    try db.run("INSERT INTO temp.prune_batch (id) \(Self.prunedIncidents) LIMIT :batch", arguments)
                    var batch = PruneCounts()
                    try db.run("DELETE FROM incident_revisions WHERE incident_id IN (SELECT id FROM temp.prune_batch)")
                    batch.revisions = db.changes
                    // The intervals are found through the log: removed before it.
                    try PollTransitions.removeIntervals(ofPruneBatch: db)
                    try db.run("DELETE FROM incident_transitions WHERE incident_id IN (SELECT id FROM temp.prune_batch)")
                    batch.transitions = db.changes
                    try DerivedIndexes.remove(.pruneBatch, in: db)
                    try db.run("DELETE FROM incidents WHERE id IN (SELECT id FROM temp.prune_batch)")
                    batch.incidents = db.changes
                    return batch
                }
            }
            counts.incidents += batch.incidents
            counts.revisions += batch.revisions
            counts.transitions += batch.transitions
            if batch.incidents < batchSize { break }
        }
        while true {
            let batch = try withDatabase { db in
                try db.writeTransaction { () throws -> PruneCounts in
                    try db.run("CREATE TEMP TABLE IF NOT EXISTS prune_runs (id INTEGER PRIMARY KEY)")
                    try db.run("DELETE FROM temp.prune_runs")
                    try db.run("INSERT INTO temp.prune_runs (id) \(Self.prunedRuns) LIMIT :batch", arguments)
                    var batch = PruneCounts()
                    try db.run("DELETE FROM rejected_records WHERE run_id IN (SELECT id FROM temp.prune_runs)")
                    batch.rejectedRecords = db.changes
                    try db.run("DELETE FROM ingest_runs WHERE id IN (SELECT id FROM temp.prune_runs)")
                    batch.runs = db.changes
                    return batch
                }
            }
            counts.runs += batch.runs
            counts.rejectedRecords += batch.rejectedRecords
            if batch.runs < batchSize { break }
        }
        withDatabase { $0.checkpoint() }
        return counts
    }

    /// What ``prune(before:)`` would delete, counted in one read-only statement through the
    /// prune's own selections; deletes nothing.
    public func pruneCounts(before horizon: UTCInstant) throws -> PruneCounts {
        try withDatabase { db in
            var counts = PruneCounts()
            try db.query(PruneSQL.counts(incidents: Self.prunedIncidents, runs: Self.prunedRuns), ["cutoff": .text(horizon.rfc3339)]) { row in
                counts = PruneCounts(incidents: row.int(at: 0) ?? 0, revisions: row.int(at: 1) ?? 0, transitions: row.int(at: 2) ?? 0,
                                     runs: row.int(at: 3) ?? 0, rejectedRecords: row.int(at: 4) ?? 0)
            }
            return counts
        }
    }

    public func clearQuota(source: String) throws -> Bool {
        try withDatabase { db in
            try db.writeTransaction {
                try db.run("UPDATE source_state SET exhausted_until = NULL WHERE source = :source AND exhausted_until IS NOT NULL",
                           ["source": .text(source)])
                return db.changes == 1
            }
        }
    }
}
