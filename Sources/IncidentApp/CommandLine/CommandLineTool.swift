import Foundation
import IncidentNetworking

/// Process exit statuses, shared by both executables (documented in README.md, "Exit statuses").
/// Values above 63 follow sysexits.h so that cron and systemd users recognise them.
public enum ExitStatus {
    /// Everything asked for succeeded.
    public static let success: Int32 = 0
    /// Something failed (a source's poll, a query); the log says what.
    public static let failure: Int32 = 1
    /// `run --once`: nothing failed, but a source was skipped (its quota is exhausted until a
    /// known time) so its data is not fresh.
    public static let skipped: Int32 = 3
    /// Bad command line (EX_USAGE).
    public static let usage: Int32 = 64
    /// The input file is malformed or a provider error envelope (EX_DATAERR).
    public static let dataError: Int32 = 65
    /// An input file or the database does not exist (EX_NOINPUT).
    public static let noInput: Int32 = 66
    /// Another incident-scheduler holds the database's lock; try later (EX_TEMPFAIL).
    public static let locked: Int32 = 75
    /// The configuration is invalid or a key is missing (EX_CONFIG).
    public static let configuration: Int32 = 78
    /// Stopped by SIGINT (128 + 2) or SIGTERM (128 + 15) before finishing; nothing half-written.
    public static let interrupted: Int32 = 130
    public static let terminated: Int32 = 143
}

/// Runs a root ``Command`` against the process arguments: help, version, usage errors, dispatch.
public enum CommandLineTool {
    /// Parses `arguments` (without the program name), runs the command, and returns the exit status.
    /// Help goes to stdout (status 0); a usage error prints one line and a hint to stderr (status 64).
    public static func main(_ root: Command, version: String, arguments: [String]) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try root.parse(arguments)
        } catch {
            return reportUsage(error.usage, path: error.path)
        }
        switch invocation {
        case .help(let text):
            print(text, terminator: "")
            return ExitStatus.success
        case .version:
            print("\(root.name) \(version)")
            return ExitStatus.success
        case .run(let command, let parsed):
            guard let run = command.run else { return ExitStatus.usage }
            do {
                return try await run(parsed)
            } catch let usage as UsageError {
                return reportUsage(usage, path: parsed.commandPath)
            } catch let error as CommandLineError {
                return reportUsage(error.usage, path: error.path)
            } catch {
                StandardError.writeLine("error: \(Redaction.redact(String(describing: error)))")
                return ExitStatus.failure
            }
        }
    }

    static func reportUsage(_ error: UsageError, path: [String]) -> Int32 {
        StandardError.writeLine("error: \(Redaction.redact(error.message))")
        StandardError.writeLine("hint: see '\(path.joined(separator: " ")) --help'")
        return ExitStatus.usage
    }
}

/// Whole-line writes to stderr, so lines from concurrent tasks never interleave.
public enum StandardError {
    private static let lock = NSLock()

    public static func writeLine(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
