import Foundation
import IncidentCore

/// `incident-scheduler copy --from SQLITE --to POSTGRESQL`: move a store that outgrew one
/// machine into PostgreSQL, keeping its history.
enum CopyCommand {
    static let from = ValueOption<String>("from", placeholder: "path", help: "The SQLite database to copy (it is only read).",
                                          what: "a path") { $0 }
    static let to = ValueOption<String>("to", placeholder: "postgresql://…",
                                        help: "The PostgreSQL database to copy into: a connection URI or libpq keyword string, without a password.",
                                        what: "a connection string") { $0 }

    static func command(_ context: Context) -> Command {
        Command(
            name: "copy",
            abstract: "Copy an SQLite database (incidents, revisions, runs, quota state) into an empty PostgreSQL database.",
            discussion: """
            Creates the PostgreSQL schema when missing, copies every row in one transaction with ids kept, then compares the \
            counts of every table with the SQLite database's and undoes the copy when one differs. Stop the schedulers that \
            write to the SQLite database first. The password comes from PGPASSWORD or ~/.pgpass, never from --to.
            """,
            options: [from, to, CommonOptions.logFormat, CommonOptions.logLevel],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let source = try arguments.required(from, "the SQLite database to copy")
        let target = try arguments.required(to, "the PostgreSQL database to copy into")
        try Stores.requireSQLitePath(source, option: "--from")
        try SchedulerTool.requireDatabase(source)
        try Stores.checkSetting(target)
        let counts: StoreCounts
        do {
            counts = try Stores.copy(from: source, to: target, clock: context.clock)
        } catch let error as UsageError {
            throw error
        } catch let error as StoreMissing {
            throw error
        } catch {
            throw DatabaseFailure(database: Stores.displayName(target), cause: error)
        }
        context.output("copied \(counts) from \(source) into \(Stores.displayName(target)); every table's count matches\n")
    }
}
