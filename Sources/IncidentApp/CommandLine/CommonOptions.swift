import Foundation
import IncidentCore

/// Options that several commands of both executables share, declared once.
enum CommonOptions {
    static let database = ValueOption<String>(
        "database", placeholder: "path",
        help: "SQLite database file, or a PostgreSQL connection string (postgresql://user@host/dbname, no password). Without it: the configuration's database, else $INCIDENTS_DATABASE, else the default. With a configuration that names a database, it must name the same one (else exit 78).",
        default: "$XDG_DATA_HOME/trafficincidents/incidents.sqlite", what: "a path") { $0.isEmpty ? nil : $0 }

    static let config = ValueOption<String>(
        "config", short: "c", placeholder: "file",
        help: "JSON configuration (sources, database). Without it: /etc/trafficincidents/config.json when it exists, else one GITS source from $GITS_SERVICE_KEY.",
        what: "a path") { $0.isEmpty ? nil : $0 }

    static let envFile = ValueOption<String>(
        "env-file", placeholder: "file",
        help: "Read variables (the API keys that keyEnv names, PGPASSWORD) from this file of NAME=value lines before anything else; its values win over the environment. Errors exit 78.",
        what: "a path") { $0.isEmpty ? nil : $0 }

    /// `--config` for the query commands, which use only its `database`: the same option as
    /// ``config`` (one name, one value) with the help these commands need.
    static let queryConfig = ValueOption<String>(
        "config", short: "c", placeholder: "file", help: "The scheduler's JSON configuration; its database setting is used (default: /etc/trafficincidents/config.json when it exists).",
        what: "a path") { $0.isEmpty ? nil : $0 }

    static let logFormat = ValueOption<Logger.Format>(choice: "log-format", help: "Format of the log lines on stderr.",
                                                      default: "logfmt")

    static let logLevel = ValueOption<Logger.Level>(choice: "log-level",
                                                    help: "Leave out log lines below this level (debug shows what --verbose shows).",
                                                    default: "info")

    static let verbose = Flag("verbose", short: "v",
                              help: "Also log HTTP attempts that succeeded at once (retries and failures are always logged).")

    /// `--wide` for tables fitted to the terminal.
    static let wide = Flag("wide", help: "Show every column in full, however wide the terminal (output that is not a terminal is never cut).")

    static let dryRun = Flag("dry-run", help: "Fetch and parse, then roll back: report what would be written, write nothing.")

    static let timeZone = ValueOption<DisplayZone>(
        "tz", placeholder: "zone",
        help: "Time zone for local times given and shown: UTC, KST, +09:00, or a name such as America/New_York (daylight saving applied per instant).",
        default: "UTC", what: "a time zone") { try ValueParsers.timeZone($0) }

    /// `--format table|json` (default table) for the commands that show a table.
    static let tableOrJSON = ValueOption<TableOrJSON>(choice: "format", help: "Output format.", default: "table")

    /// `--limit N`, a whole number of at least 1.
    static func limit(help: String, default defaultDescription: String? = nil) -> ValueOption<Int> {
        ValueOption("limit", short: "n", placeholder: "count", help: help, default: defaultDescription,
                    what: "a whole number of at least 1") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
    }
}

/// The two forms of `--format` with one text form and JSON.
enum TextOrJSON: String, CaseIterable, Sendable {
    case text, json
}

enum TableOrJSON: String, CaseIterable, Sendable {
    case table, json
}

extension ParsedArguments {
    /// The logger the options ask for (`--log-format`, `--log-level`, `--verbose`).
    func logger(_ context: Context) throws -> Logger {
        var logger = Logger(format: try value(CommonOptions.logFormat) ?? .logfmt, verbose: self[CommonOptions.verbose], clock: context.clock,
                            syslogPriorities: context.stderrIsJournal)
        logger.minimumLevel = try value(CommonOptions.logLevel) ?? .info
        return logger
    }

    /// `--tz`, UTC when absent.
    func timeZone() throws -> DisplayZone {
        try value(CommonOptions.timeZone) ?? .utc
    }
}
