import Foundation
import IncidentCore

/// `incident-scheduler prune [--older-than DURATION] [--vacuum]`: delete old cleared incidents
/// and runs.
enum PruneCommand {
    static let olderThan = ValueOption<Int64>("older-than", placeholder: "duration", help: "The horizon, e.g. 90d.",
                                              default: "the configuration's retention", what: "a duration") { try ValueParsers.duration($0) }
    static let vacuum = Flag("vacuum", help: "SQLite: then rewrite the file without its free pages, giving the space back (needs free disk about the database's size; polls wait while it runs).")

    static func command(_ context: Context) -> Command {
        Command(
            name: "prune",
            abstract: "Delete incidents cleared, and runs finished, longer ago than a horizon (default: the configuration's retention).",
            discussion: """
            Works in small batches so an ingest or a query never waits long. Each source's latest run is kept. The space
            freed is reused by later polls; --vacuum gives it back to the file system (SQLite).
            """,
            options: [olderThan, vacuum, CommonOptions.database, CommonOptions.config, CommonOptions.envFile, CommonOptions.logFormat,
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
        let path = try context.databasePath(arguments, configured: configuration?.database)
        try SchedulerTool.requireDatabase(path)
        if arguments[vacuum] && Stores.isPostgreSQL(path) {
            throw UsageError("--vacuum is for SQLite; PostgreSQL's autovacuum reuses the space a prune frees (VACUUM FULL in psql gives it back, locking the tables)")
        }
        try await SchedulerTool.withStore(path: path, context: context) { store in
            let horizon = context.clock.now().adding(seconds: -seconds)
            do {
                let counts = try store.prune(before: horizon)
                context.output("deleted \(Plural.count(counts.incidents, "incident")), \(Plural.count(counts.revisions, "revision")) and "
                               + "\(Plural.count(counts.runs, "run")) older than \(horizon.rfc3339)\n")
                if arguments[vacuum], let (before, after) = try Stores.vacuum(store) {
                    context.output("vacuumed: \(before) bytes before, \(after) after\n")
                }
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
        }
    }
}
