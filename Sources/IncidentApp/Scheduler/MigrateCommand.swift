import Foundation
import IncidentCore

/// `incident-scheduler migrate [--status]`: apply or list schema migrations.
enum MigrateCommand {
    static let status = Flag("status", help: "List every migration and when it was applied; change nothing.")
    static let check = Flag("check", help: "Change nothing; exit 3 when migrations are pending (an upgrade's binary is newer than its database), 0 when none is.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "migrate",
            abstract: "Apply pending schema migrations (or list them with --status, or check for them with --check).",
            options: [CommonOptions.database, CommonOptions.config, CommonOptions.envFile, status, check],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let path = try context.databasePath(arguments)
        if arguments[status] || arguments[check] {
            try SchedulerTool.requireDatabase(path)
            let states: [MigrationState]
            do {
                states = try Stores.openForInspection(path, clock: context.clock).migrationStates()
            } catch {
                throw DatabaseFailure(database: path, cause: error)
            }
            if arguments[status] {
                let rows = [["VERSION", "NAME", "APPLIED AT"]] + states.map { [String($0.version), $0.name, $0.appliedAt?.rfc3339 ?? "pending"] }
                context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment)))
            }
            let pending = states.filter { $0.appliedAt == nil }.map(\.name)
            if arguments[check] {
                guard pending.isEmpty else { throw MigrationsPending(database: Stores.displayName(path), names: pending) }
                if !arguments[status] { context.output("up to date\n") }
            }
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

/// `migrate --check` found migrations this binary would apply (exit 3: the database is not
/// ready for this binary, and nothing was changed).
struct MigrationsPending: Error, CustomStringConvertible {
    var database: String
    var names: [String]
    var description: String {
        "\(Plural.count(names.count, "migration")) pending on \(database): \(names.joined(separator: ", ")); back the database up, then run "
            + "`incident-scheduler migrate` (docs/operator.md, \"Upgrading\")"
    }
}
