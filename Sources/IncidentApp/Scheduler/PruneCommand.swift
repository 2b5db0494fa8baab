import Foundation
import IncidentCore

/// `incident-scheduler prune --older-than DURATION`: delete old cleared incidents and runs.
enum PruneCommand {
    static let olderThan = ValueOption<Int64>("older-than", placeholder: "duration", help: "The horizon, e.g. 90d.",
                                              what: "a duration") { try ValueParsers.duration($0) }

    static func command(_ context: Context) -> Command {
        Command(
            name: "prune",
            abstract: "Delete incidents cleared, and runs finished, longer ago than a horizon.",
            discussion: "Works in small batches so an ingest or a query never waits long. Each source's latest run is kept.",
            options: [olderThan, CommonOptions.database, CommonOptions.config, CommonOptions.envFile, CommonOptions.logFormat, CommonOptions.logLevel],
            run: { arguments in try await run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) async throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let seconds = try arguments.required(olderThan, "e.g. 90d")
        let path = try context.databasePath(arguments)
        try SchedulerTool.requireDatabase(path)
        try await SchedulerTool.withStore(path: path, context: context) { store in
            let horizon = context.clock.now().adding(seconds: -seconds)
            let counts: PruneCounts
            do {
                counts = try store.prune(before: horizon)
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            context.output("deleted \(Plural.count(counts.incidents, "incident")), \(Plural.count(counts.revisions, "revision")) and "
                           + "\(Plural.count(counts.runs, "run")) older than \(horizon.rfc3339)\n")
        }
    }
}
