import Foundation
import IncidentCore

/// `incident-scheduler migrate [--status]`: apply or list schema migrations.
enum MigrateCommand {
    static let status = Flag("status", help: "List every migration and when it was applied; change nothing.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "migrate",
            abstract: "Apply pending schema migrations (or list them with --status).",
            options: [CommonOptions.database, CommonOptions.config, status],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let path = try context.databasePath(arguments)
        if arguments[status] {
            try SchedulerTool.requireDatabase(path)
            var rows = [["VERSION", "NAME", "APPLIED AT"]]
            do {
                for state in try Stores.openForInspection(path, clock: context.clock).migrationStates() {
                    rows.append([String(state.version), state.name, state.appliedAt?.rfc3339 ?? "pending"])
                }
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment)))
            return
        }
        let applied: [String]
        do {
            try SchedulerTool.createParentDirectory(of: path)
            applied = try Stores.openForInspection(path, clock: context.clock, create: true).migrate()
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        context.output(applied.isEmpty ? "up to date\n" : applied.map { "applied \($0)\n" }.joined())
    }
}
