import Foundation
import IncidentCore

/// `incident-scheduler prune [--older-than DURATION] [--dry-run | --vacuum]`: delete old
/// cleared incidents and runs, or say what that would delete.
enum PruneCommand {
    static let olderThan = ValueOption<Int64>("older-than", placeholder: "duration", help: "The horizon, e.g. 90d.",
                                              default: "the configuration's retention", what: "a duration") { try ValueParsers.duration($0) }
    static let dryRun = Flag("dry-run", help: "Say what a prune would delete now (rows of each kind), deleting nothing; the database is opened read-only.")
    static let vacuum = Flag("vacuum", help: "SQLite: then rewrite the file without its free pages, giving the space back (needs free disk about the database's size; polls wait while it runs).")

    static func command(_ context: Context) -> Command {
        Command(
            name: "prune",
            abstract: "Delete incidents cleared, and runs finished, longer ago than a horizon (default: the configuration's retention).",
            discussion: """
            Works in small batches so an ingest or a query never waits long. Each source's latest run is kept; with the
            incidents go their revisions and transitions, with the runs the records they set aside (quarantined). The space
            freed is reused by later polls; --vacuum gives it back to the file system (SQLite). --dry-run prints the counts
            the prune would print, as "would delete …", and changes nothing.
            """,
            options: [olderThan, dryRun, vacuum, CommonOptions.database, CommonOptions.config, CommonOptions.envFile, CommonOptions.logFormat,
                      CommonOptions.logLevel],
            run: { arguments in try await run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) async throws {
        let context = try context.loadingEnvironmentFile(arguments)
        // The configuration says what to keep, as it says where the data goes (issue 20: the
        // crontab's weekly `prune --older-than 90d` repeated what the configuration said).
        let configuration = try context.configurationFile(arguments).map {
            try Configuration.load(from: URL(fileURLWithPath: $0), environment: context.environment, requireKeys: false)
        }
        guard let seconds = try arguments.value(olderThan) ?? configuration?.retentionSeconds else {
            throw UsageError("say how old: --older-than DURATION (e.g. 90d), or set \"retention\" in the configuration")
        }
        if arguments[vacuum] && arguments[dryRun] {
            throw UsageError("--dry-run deletes nothing, so --vacuum would have nothing to give back; give one or the other")
        }
        let path = try context.databasePath(arguments, configured: configuration?.database)
        try SchedulerTool.requireDatabase(path)
        if arguments[vacuum] && Stores.isPostgreSQL(path) {
            throw UsageError("--vacuum is for SQLite; PostgreSQL's autovacuum reuses the space a prune frees (VACUUM FULL in psql gives it back, locking the tables)")
        }
        let horizon = context.clock.now().adding(seconds: -seconds)
        if arguments[dryRun] {
            // Opened as the queries open it (read-only, never created or migrated), so the dry
            // run cannot change the database.
            let counts: PruneCounts
            do {
                guard let store = try Stores.openForReading(path, clock: context.clock) as? any StoreAdministration else {
                    throw QueryError("this store cannot count what a prune would delete")
                }
                counts = try store.pruneCounts(before: horizon)
            } catch let error as StoreMissing {
                throw error
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            context.output("would delete \(text(counts)) older than \(horizon.rfc3339)\n")
            return
        }
        try await SchedulerTool.withStore(path: path, context: context) { store in
            do {
                let counts = try store.prune(before: horizon)
                context.output("deleted \(text(counts)) older than \(horizon.rfc3339)\n")
                if arguments[vacuum], let (before, after) = try Stores.vacuum(store) {
                    context.output("vacuumed: \(before) bytes before, \(after) after\n")
                }
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
        }
    }

    /// `1 incident, 0 revisions, 2 transitions, 3 runs and 1 quarantined record`: the rows of
    /// each kind, in one phrase for the prune and its dry run.
    static func text(_ counts: PruneCounts) -> String {
        "\(Plural.count(counts.incidents, "incident")), \(Plural.count(counts.revisions, "revision")), "
            + "\(Plural.count(counts.transitions, "transition")), \(Plural.count(counts.runs, "run")) and "
            + "\(Plural.count(counts.rejectedRecords, "quarantined record"))"
    }
}
