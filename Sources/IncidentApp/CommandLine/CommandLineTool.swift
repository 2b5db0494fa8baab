import Foundation
import IncidentNetworking

/// Runs a root ``Command`` against the process arguments: help, version, usage errors, dispatch,
/// and the one place where an error becomes an exit status and a message (``Failure``).
public enum CommandLineTool {
    /// How a tool reports failures on stderr.
    public enum ReportStyle: Sendable {
        /// `error: MESSAGE` (the query tool, for people).
        case plain
        /// A log line `level=error event=… error="MESSAGE"` in the command's `--log-format`
        /// (the scheduler, whose stderr is a log).
        case log
    }

    /// Parses `arguments` (without the program name), runs the command, and returns the exit
    /// status. Help goes to stdout (status 0); a usage error prints one line and a hint to
    /// stderr (status 64) in both styles; every other failure is reported in `style`.
    public static func main(_ root: Command, arguments: [String], context: Context,
                            style: ReportStyle) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try root.parse(arguments)
        } catch {
            return report(Failure(error, commandPath: error.path), arguments: ParsedArguments(), context: context, style: style)
        }
        switch invocation {
        case .help(let text):
            context.output(text)
            return ExitStatus.success
        case .version:
            context.output("\(root.name) \(BuildInfo.description)\n")
            return ExitStatus.success
        case .run(let command, let parsed):
            guard let run = command.run else { return ExitStatus.usage }
            if command.cancellable { ProcessSignals.cancelOnSignal() }
            do {
                try await run(parsed)
                return ExitStatus.success
            } catch {
                return report(Failure(error, commandPath: parsed.commandPath), arguments: parsed, context: context, style: style)
            }
        }
    }

    /// Writes `failure` to stderr and returns its status.
    static func report(_ failure: Failure, arguments: ParsedArguments, context: Context, style: ReportStyle) -> Int32 {
        // Under systemd, the journal records these lines as errors (`<3>`, sd-daemon(3)).
        let error = context.stderrIsJournal ? "<\(Logger.Level.error.syslogPriority)>error: " : "error: "
        if let path = failure.usagePath {
            StandardError.writeLine(error + Redaction.redact(failure.message ?? "bad command line"))
            StandardError.writeLine((context.stderrIsJournal ? "<\(Logger.Level.info.syslogPriority)>" : "")
                                    + "hint: see '\(path.joined(separator: " ")) --help'")
        } else if let message = failure.message {
            switch style {
            case .plain:
                StandardError.writeLine(error + Redaction.redact(message))
            case .log:
                let logger = (try? arguments.logger(context)) ?? Logger(clock: context.clock, syslogPriorities: context.stderrIsJournal)
                logger.log(failure.level, failure.event, ["error": message])
            }
        }
        return failure.status
    }
}

/// Whole-line writes to stderr, so lines from concurrent tasks never interleave.
enum StandardError {
    private static let lock = NSLock()

    static func writeLine(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
