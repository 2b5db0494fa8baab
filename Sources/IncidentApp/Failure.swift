import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// Process exit statuses, shared by both executables (docs/operator.md, "Exit statuses"). Values above
/// 63 follow sysexits.h so that cron and systemd users recognise them. Commands never return
/// these: they throw, and ``Failure/init(_:commandPath:)`` chooses the status.
enum ExitStatus {
    /// Everything asked for succeeded.
    static let success: Int32 = 0
    /// Something failed (a source's poll, the database, a query); the message says what.
    static let failure: Int32 = 1
    /// `run --once`: nothing failed, but some source's data is not complete or fresh (skipped
    /// because its quota is exhausted, or an incomplete response that cleared nothing).
    /// `status`: some source is stale.
    static let notFresh: Int32 = 3
    /// Bad command line (EX_USAGE).
    static let usage: Int32 = 64
    /// The input file is malformed or a provider error envelope (EX_DATAERR).
    static let dataError: Int32 = 65
    /// An input file or the database does not exist (EX_NOINPUT).
    static let noInput: Int32 = 66
    /// Another incident-scheduler holds the database's lock; try later (EX_TEMPFAIL).
    static let locked: Int32 = 75
    /// The configuration is invalid or missing, or a key is missing (EX_CONFIG).
    static let configuration: Int32 = 78
    /// Stopped by SIGINT (128 + 2) before finishing; ``ProcessSignals`` turns it into 128 + the
    /// signal actually received (143 for SIGTERM). Nothing is half-written.
    static let interrupted: Int32 = 130
    /// Stopped by SIGTERM (128 + 15).
    static let terminated: Int32 = 143
}

extension ExitStatus {
    /// Every status with its meaning, for the man pages (docs/operator.md, "Exit statuses", has the
    /// same table with the log events).
    static let documented: [(status: Int32, meaning: String)] = [
        (success, "Everything succeeded (run --loop: stopped by SIGTERM or SIGINT)."),
        (failure, "A source failed, or the run's deadline passed (the other sources were still stored); the metrics file could not be written; the database could not be opened, locked or read; status: a source is failing now (and none is stale); incidents show: no such id."),
        (notFresh, "run --once: nothing failed, but a source was skipped (its quota is exhausted) or its response was incomplete; status: a source is stale; migrate --check: migrations are pending."),
        (usage, "Bad command line, or a query the database cannot run as given."),
        (dataError, "ingest --file: the file is not a good answer (malformed, another document, a provider error envelope)."),
        (noInput, "The input file or the database does not exist (run: it was deleted while the scheduler ran)."),
        (locked, "Another incident-scheduler is working on this database; this run did nothing."),
        (configuration, "The configuration file is missing, unreadable or invalid, or a key variable or file is missing, unreadable or wrong."),
        (interrupted, "Stopped by SIGINT; the poll under way was rolled back and recorded as cancelled (a read stops at once, its --output file not written)."),
        (terminated, "Stopped by SIGTERM (run --once); the poll under way was rolled back and recorded as cancelled (a read stops at once, its --output file not written)."),
    ]
}

/// How an error ends the process: its exit status and what is reported.
///
/// This is the one mapping from error types to exit statuses, used by every command of both
/// executables (``CommandLineTool/main(_:arguments:context:style:)``): the same kind of
/// failure exits the same way whichever command met it.
struct Failure: Equatable, Sendable {
    var status: Int32
    var level: Logger.Level
    /// The log event (`incident-scheduler` reports failures as log lines).
    var event: String
    /// One line saying what failed and what to do, keys redacted; nil when it was already
    /// logged (each failed source has its own `ingest.failed` line).
    var message: String?
    /// For a usage error: the command path for the hint line.
    var usagePath: [String]?

    init(status: Int32, level: Logger.Level = .error, event: String, message: String?, usagePath: [String]? = nil) {
        self.status = status
        self.level = level
        self.event = event
        self.message = message
        self.usagePath = usagePath
    }

    /// The failure for `error`, thrown by the command at `commandPath`.
    init(_ error: any Error, commandPath: [String]) {
        switch error {
        case let error as CommandLineError:
            self.init(status: ExitStatus.usage, event: "usage", message: error.usage.message, usagePath: error.path)
        case let error as UsageError:
            self.init(status: ExitStatus.usage, event: "usage", message: error.message, usagePath: commandPath)
        case let error as QueryError:
            // Search text or a filter the store cannot use: the user's input, never an SQL error.
            self.init(status: ExitStatus.usage, event: "usage", message: Redaction.redact(error.message), usagePath: commandPath)
        case let error as ConfigurationError:
            self.init(status: ExitStatus.configuration, event: "config.invalid", message: Redaction.redact(error.message))
        case let error as StoreMissing:
            self.init(status: ExitStatus.noInput, event: "database.missing", message: error.description)
        case let error as InputFileMissing:
            self.init(status: ExitStatus.noInput, event: "input.missing", message: error.description)
        case let error as MapAssetsMissing:
            self.init(status: ExitStatus.noInput, event: "input.missing", message: error.description)
        case let error as SchedulerLocked:
            self.init(status: ExitStatus.locked, level: .warning, event: "scheduler.locked", message: error.description)
        case let error as StaleSources:
            self.init(status: ExitStatus.notFresh, level: .warning, event: "status.stale", message: error.description)
        case let error as MigrationsPending:
            self.init(status: ExitStatus.notFresh, level: .warning, event: "migrate.pending", message: error.description)
        case let error as FailingSources:
            self.init(status: ExitStatus.failure, level: .warning, event: "status.failing", message: error.description)
        case let error as RoundOutcome:
            self.init(status: error.status, level: error.status == ExitStatus.notFresh ? .warning : .error,
                      event: "run.incomplete", message: nil)
        case let error as IngestFailed:
            self.init(status: Self.status(ofFailedIngest: error.cause), event: "ingest.failed", message: nil)
        case is CancellationError:
            self.init(status: ExitStatus.interrupted, level: .warning, event: "cancelled", message: nil)
        case let error as StoreFileLost:
            switch error {
            case .deleted: self.init(status: ExitStatus.noInput, event: "database.deleted", message: error.description)
            case .lockTaken: self.init(status: ExitStatus.locked, event: "scheduler.lock_lost", message: error.description)
            case .unusable: self.init(status: ExitStatus.failure, event: "database.unavailable", message: error.description)
            }
        case let error as DatabaseFailure:
            self.init(status: ExitStatus.failure, event: "database.unavailable", message: error.description)
        default:
            self.init(status: ExitStatus.failure, event: "failed", message: ErrorText.describe(error))
        }
    }

    /// `ingest --file`: a file that is not a good answer is a data error (65); a file that
    /// cannot be read is a missing input (66); a signal is 130; anything else (the database)
    /// is a failure (1), as in every other command.
    static func status(ofFailedIngest cause: (any Error)?) -> Int32 {
        switch cause {
        case let error as FeedError:
            return error.kind == .unreadableFile ? ExitStatus.noInput : ExitStatus.dataError
        case is CancellationError:
            return ExitStatus.interrupted
        default:
            return ExitStatus.failure
        }
    }
}

/// Log-safe text for errors, with the advice that belongs to this program's command line
/// (command, flag and configuration field names). The typed errors of the other targets state
/// facts; what to type about them is added here.
enum ErrorText {
    /// The error's description, keys redacted, plus what to do about it on this command line.
    /// - Parameter origin: where the failed poll's response came from, when it was a poll.
    @Sendable static func describe(_ error: any Error) -> String {
        describe(error, origin: nil)
    }

    /// A ``NetworkError`` keeps its request last (``NetworkError/description(adding:)``), so that
    /// a line cut short still says what is wrong.
    static func describe(_ error: any Error, origin: FeedOrigin?) -> String {
        if let error = error as? NetworkError { return Redaction.redact(error.description(adding: advice(for: error, origin: origin))) }
        let text = String(describing: error)
        guard let advice = advice(for: error, origin: origin) else { return Redaction.redact(text) }
        return Redaction.redact(text + "; " + advice)
    }

    /// What to change, naming configuration fields in backticks (each one the configuration
    /// accepts: IncidentAppTests, "Hints").
    static func advice(for error: any Error, origin: FeedOrigin?) -> String? {
        if let error = error as? NetworkError {
            switch error.code {
            case .timedOut: return "if this repeats, raise the source's `timeout`"
            case .attemptTimedOut: return "if this repeats, raise the source's `attemptTimeout`"
            case .cannotConnect, .tooManyRedirects, .unacceptableStatus(404): return "the URL comes from the source's `baseURL`"
            case .unacceptableStatus(401), .unacceptableStatus(403): return "the key comes from the source's `keyEnv` or `keyFile`"
            case .unacceptableStatus(429): return "the source's `retry` sets the retries and their delays"
            default: return nil
            }
        }
        if let error = error as? FeedError {
            switch error.kind {
            case .invalidKey: return "check the key that the source's `keyEnv` or `keyFile` gives"
            case .missingKey: return "set `keyEnv` or `keyFile` for the source in the configuration"
            case .unexpectedResponse, .malformedBody:
                if case .file = origin { return "check the file and --source" }
                return nil
            default: return nil
            }
        }
        switch Stores.problem(error) {
        case .migrationsPending: return "run `incident-scheduler migrate` first"
        case .newerSchema: return "use a newer incident-scheduler and incidents"
        case nil: return nil
        }
    }

    /// A `run.error`-style description for a poll of `origin`, for ``IngestIncidents``.
    static func describer(origin: FeedOrigin) -> @Sendable (any Error) -> String {
        { describe($0, origin: origin) }
    }
}

/// An input file given on the command line does not exist or cannot be read (exit 66).
struct InputFileMissing: Error, CustomStringConvertible {
    var path: String
    var description: String { "cannot read \(path): no such file, a directory, or not readable" }
}

/// Another scheduler holds the database's lock (exit 75).
struct SchedulerLocked: Error, CustomStringConvertible {
    var database: String
    var holder: String?
    var description: String {
        "another incident-scheduler is working on this database (\(database)\(holder.map { ", held by \($0)" } ?? "")); this run did nothing"
    }
}

/// The database could not be opened, locked or read (exit 1).
struct DatabaseFailure: Error, CustomStringConvertible {
    var database: String
    var cause: any Error
    var description: String { "the incidents database \(database) failed: \(ErrorText.describe(cause))" }
}

/// `ingest --file` stored nothing; the run (already logged) and what made it fail.
struct IngestFailed: Error {
    var run: IngestRun
    var cause: (any Error)?
}

/// `run --once` ended with some source not stored cleanly; each was logged on its own line.
struct RoundOutcome: Error {
    /// 1 when a source failed or the deadline passed, 130 when a signal stopped the run, 3 when
    /// nothing failed but a source was skipped or its response was incomplete.
    var status: Int32
}
