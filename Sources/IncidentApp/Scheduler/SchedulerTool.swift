import Foundation
import IncidentCore

/// `incident-scheduler`: ingests the configured sources into the store (from cron, or a loop).
/// Each subcommand is its own file; this one holds the root and what they share.
///
/// Every command file of both tools has the same shape on purpose: its options as static
/// constants, `command(_:)` declaring them with the help text, and `run(_:_:)` doing the work
/// and throwing typed errors. Those parallel declarations are the pattern a new subcommand
/// copies, not repeated logic.
public enum SchedulerTool {
    public static func command(_ context: Context) -> Command {
        Command(
            name: "incident-scheduler",
            abstract: "Ingest public traffic-incident feeds into SQLite or PostgreSQL.",
            discussion: """
            Run it from cron with `run --once`, or as a service with `run --loop`. Logs go to stderr,
            one line per event; results go to stdout. Exit statuses are listed in docs/operator.md ("Exit statuses") and the man page.
            """,
            subcommands: [RunCommand.command(context), IngestCommand.command(context), SourcesCommand.command(context),
                          StatusCommand.command(context), CheckConfigCommand.command(context), MigrateCommand.command(context),
                          PruneCommand.command(context), CopyCommand.command(context),
                          WatchesCommand.command(context), SourceNamesCommand.command(context)])
    }

    /// `--config FILE` (or `/etc/trafficincidents/config.json` when it exists:
    /// ``Context/configurationFile(_:)``), or the GITS source of `$GITS_SERVICE_KEY` without one.
    /// - Throws: ``ConfigurationError``.
    static func loadConfiguration(_ arguments: ParsedArguments, _ context: Context, requireKeys: Bool) throws -> Configuration {
        try loadConfiguration(file: try context.configurationFile(arguments), environment: context.environment, requireKeys: requireKeys)
    }

    /// The configuration of `file`, or without one the GITS source of `$GITS_SERVICE_KEY`
    /// (`incidents serve` reads it for each `/status` request, as `status` does for each run).
    /// - Throws: ``ConfigurationError``.
    static func loadConfiguration(file: String?, environment: [String: String], requireKeys: Bool) throws -> Configuration {
        if let file {
            return try Configuration.load(from: URL(fileURLWithPath: file), environment: environment, requireKeys: requireKeys)
        }
        return try Configuration.fromEnvironment(environment, requireKeys: requireKeys)
    }

    /// Opens (creating and migrating when needed) the store and runs `body` with it, on the
    /// store's own threads (``StoreExecutor/runAsync(_:)``). With
    /// `scheduler` (`run --once`, `run --loop`), first takes the scheduling lock of an SQLite
    /// database, released when `body` returns or throws: one scheduler service per SQLite
    /// database, a second one exits 75. `ingest` and `prune` do not take it: each of their writes
    /// is a transaction that SQLite serializes with the scheduler's polls, so a backfill or a
    /// prune runs while the service runs (issue 14, point 3). A PostgreSQL store has no such
    /// lock: schedulers on several hosts share it, one poll per source at a time through the
    /// store's source leases.
    /// - Throws: ``SchedulerLocked`` when another scheduler holds the lock (exit 75);
    ///   ``DatabaseFailure`` when the database or its lock cannot be opened (exit 1); what
    ///   `body` throws.
    static func withStore<Result>(path: String, context: Context, scheduler: Bool = false, leaseSeconds: Int64? = nil,
                                  _ body: (Stores.Writable) async throws -> Result) async throws -> Result {
        try await withStore(path: path, context: context, scheduler: scheduler, leaseSeconds: leaseSeconds) { store, _ in try await body(store) }
    }

    /// ``withStore(path:context:scheduler:leaseSeconds:_:)``, giving `body` the scheduling lock
    /// too (nil without `scheduler`, or for PostgreSQL); `concurrency`: the most polls at once
    /// (``Stores/openForWriting(_:clock:leaseSeconds:concurrency:)``).
    /// With `logger` (`run`), the migrations the open applies are applied first, each logged
    /// (`migration.applied`), so an upgrade's log says what it changed. `connectWithin`: how long
    /// to keep trying to reach a PostgreSQL server (``Stores/reconnectSeconds`` by default).
    static func withStore<Result>(path: String, context: Context, scheduler: Bool, leaseSeconds: Int64? = nil, concurrency: Int? = nil,
                                  logger: Logger? = nil, connectWithin: Double? = nil,
                                  _ body: (Stores.Writable, (any HeldLock)?) async throws -> Result) async throws -> Result {
        do {
            try createParentDirectory(of: path)
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        var lock: (any HeldLock)?
        if scheduler, let locks = Stores.schedulingLocks(path) {
            // A database this binary refuses gets no lock file beside it either.
            do {
                try Stores.checkAccepted(path)
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            do {
                guard let taken = try locks.tryLock("scheduler") else {
                    throw SchedulerLocked(database: path, holder: locks.holder(of: "scheduler"))
                }
                lock = taken
            } catch let error as SchedulerLocked {
                throw error
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
        }
        defer { lock?.release() }
        let store: Stores.Writable
        do {
            if let logger {
                for name in try Stores.openForInspection(path, clock: context.clock, create: true, connectWithin: connectWithin).migrate() {
                    logger.log(.info, "migration.applied", ["database": Stores.displayName(path), "migration": name])
                }
            }
            store = try Stores.openForWriting(path, clock: context.clock, leaseSeconds: leaseSeconds, concurrency: concurrency,
                                              connectWithin: connectWithin)
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        // Its calls run on the store's own threads: one blocked in the database holds none
        // of the cooperative pool's.
        return try await store.executor.runAsync { try await body(store, lock) }
    }

    /// Makes the directory an SQLite database at `path` goes in; nothing for `:memory:` or a
    /// PostgreSQL connection string (`migrate --database postgresql://…` made directories named
    /// after the URI).
    static func createParentDirectory(of path: String) throws {
        guard path != ":memory:", !Stores.isPostgreSQL(path) else { return }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Fails with ``StoreMissing`` (exit 66) unless the database at `path` exists: for commands
    /// that change an existing database but must not create one.
    static func requireDatabase(_ path: String) throws {
        guard Stores.mayExist(path) else { throw StoreMissing(database: path) }
    }
}
