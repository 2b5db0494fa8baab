import Foundation
import IncidentCore

/// `incident-scheduler watches`: each configured watch's position in the change feed, its lag
/// and its last error (README, "Watches").
enum WatchesCommand {
    static func command(_ context: Context) -> Command {
        Command(
            name: "watches",
            abstract: "Show each configured watch's position in the change feed, its lag and its last error.",
            discussion: """
            CURSOR is the last transition the watch delivered or passed over (0: none yet), LAG how far the change feed's
            last cursor is beyond it (transitions it wants and those it does not), LAST ERROR its last failed delivery and when.
            Exit 78 when the configuration is invalid, 66 when the database does not exist yet.
            """,
            options: [CommonOptions.config, CommonOptions.envFile, CommonOptions.database, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let path = try context.databasePath(arguments, configured: configuration.database)
        let entries = try WatchState.read(try configuration.watchStatePath(database: path))
        let last: Int64
        do {
            guard let feed = try Stores.openForReading(path, clock: context.clock) as? any ChangeFeedReader else {
                throw QueryError("this store has no change feed")
            }
            last = try feed.lastCursor()
        } catch let error as StoreMissing {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        var rows = [["WATCH", "CURSOR", "LAG", "LAST ERROR"]]
        for watch in configuration.watches {
            let entry = entries[watch.name] ?? .init()
            rows.append([watch.name, String(entry.cursor), String(max(0, last - entry.cursor)),
                         entry.lastError.map { "\($0) at \(entry.lastErrorAt ?? "?")" } ?? "-"])
        }
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                        flexible: [3], droppable: []))
    }
}
