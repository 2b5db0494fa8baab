import Foundation
import IncidentCore
import IncidentFeeds

/// `incidents`: query the incidents `incident-scheduler` stored. Never changes them (the only
/// write is bringing the derived search index up to date for `--search`). Each subcommand is
/// its own file; this one holds the root and what they share.
public enum QueryTool {
    public static func command(_ context: Context) -> Command {
        Command(
            name: "incidents",
            abstract: "Query the traffic incidents stored by incident-scheduler.",
            discussion: """
            Reads a consistent snapshot; safe while an ingest is writing (it sees the last committed poll).
            Instants: RFC 3339 (2023-03-21T05:13:00Z), a date (2023-03-21), a local time ("2023-03-21 14:13")
            read in --tz, or a duration ago (90s, 15m, 2h, 7d). Times are shown in --tz (default UTC).
            """,
            subcommands: [ListCommand.command(context), ShowCommand.command(context), StatsCommand.command(context),
                          MapCommand.command(context), RunsCommand.command(context),
                          ServeCommand.command(context),
                          // History and changes (issue 22).
                          ChangesCommand.command(context), TimelineCommand.command(context)])
    }

    /// `--database` and `--config` (whose `database` is used), as for the scheduler.
    static let databaseOptions: [any OptionDeclaration] = [CommonOptions.database, CommonOptions.queryConfig]

    // MARK: Filters shared by list, stats and map

    /// The filter options, one per parameter of the catalogue (``IncidentFilter/Parameter``):
    /// their names, value syntax, help and defaults are the catalogue's.
    static let filterOptions: [any OptionDeclaration] = IncidentFilter.Parameter.allCases.map(\.option)

    /// Parses the shared filters (the validate step: nothing is opened before this succeeds),
    /// but for those named in `excluding` (options a command gives another meaning).
    /// - Throws: ``UsageError`` naming the option (`--since: 'x' is not an instant …`).
    static func query(_ arguments: ParsedArguments, _ context: Context,
                      excluding: Set<String> = []) throws -> (IncidentQuery, zone: DisplayZone) {
        let zone = try arguments.timeZone()
        do {
            return (try IncidentQuery(parameters: arguments.filterParameters.filter { !excluding.contains($0.name) },
                                      context: zone.filterContext(now: context.clock.now())), zone)
        } catch let error as QueryParameterError {
            throw UsageError("--\(error.parameter): \(error.reason)")
        }
    }

    /// Opens the store for reading and runs `body` with it. A store error is a
    /// ``DatabaseFailure`` naming the database (exit 1); a query the store cannot run as given
    /// stays a ``QueryError`` (exit 64), and an output file that cannot be written an ``OutputFailure``.
    /// - Throws: ``StoreMissing`` when the database does not exist (exit 66).
    static func reading<Result>(_ arguments: ParsedArguments, _ context: Context,
                                _ body: (any IncidentReader) throws -> Result) throws -> Result {
        let path = try context.databasePath(arguments)
        do {
            return try body(try Stores.openForReading(path, clock: context.clock))
        } catch let error as StoreMissing {
            throw error
        } catch let error as QueryError {
            throw error
        } catch let error as OutputFailure {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
    }
}

extension IncidentFilter.Parameter {
    /// The parameter as a command-line option: `--road <text>`.
    var option: Option {
        switch kind {
        case .flag: .flag(name, help: help)
        case .value: .value(name, placeholder: placeholder, help: help, default: defaultValue)
        case .repeatable: .repeating(name, placeholder: placeholder, help: help)
        }
    }
}

extension ParsedArguments {
    /// The filter options given, as catalogue parameters: a flag as `true`, a single-valued
    /// option's last occurrence (the last one wins), every value of a repeatable one.
    var filterParameters: [(name: String, values: [String])] {
        IncidentFilter.Parameter.allCases.compactMap { parameter in
            switch parameter.kind {
            case .flag: flags.contains(parameter.name) ? (parameter.name, ["true"]) : nil
            case .value: values[parameter.name]?.last.map { (parameter.name, [$0]) }
            case .repeatable: values[parameter.name].map { (parameter.name, $0) }
            }
        }
    }
}
