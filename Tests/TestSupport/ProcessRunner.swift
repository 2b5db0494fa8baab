import Foundation

/// Runs the package's built executables the way a user does, for end-to-end tests.
public enum Executables {
    /// The directory holding the built products: beside the running test bundle.
    public static let directory: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            TestPaths.packageRoot.appendingPathComponent(".build/debug"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("incidents").path) }
            ?? candidates[2]
    }()

    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
}

/// The result of a finished process.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Whether the process ended by a signal (status then holds the signal number).
    public var signaled: Bool
}

/// A started process whose output goes to files (no pipe can fill up and block it).
public final class RunningProcess: @unchecked Sendable {
    public let process: Process
    let stdoutURL: URL
    let stderrURL: URL
    private let exit = ExitMoment()

    /// When the process ended, on ``monotonicNow()``'s clock; nil while it runs. Taken by
    /// Foundation's termination handler (on a Dispatch thread, soon after `isRunning` turns
    /// false: waited for up to 2 s), so a test that times a stop (SIGTERM to exit) times the
    /// process, not its own wake-up, which on a loaded machine can come seconds late (CI
    /// measured 10.5 s for two hosts that logged their stop within a second of the signal).
    public var exitedAt: Double? { process.isRunning ? nil : exit.moment(waitingUpTo: 2) }

    /// Starts `executable` with `arguments`; `environment` is added to a minimal environment
    /// (PATH, HOME, LANG) so the tests never depend on the developer's variables.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                currentDirectory: URL? = nil) throws {
        let directory = try TestPaths.temporaryDirectory("process")
        stdoutURL = directory.appendingPathComponent("stdout")
        stderrURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                   "HOME": directory.path, "LANG": "C.UTF-8"]
        env.merge(environment) { $1 }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.terminationHandler = { [exit] _ in exit.record() }
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (e.g. SIGTERM).
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the end, up to `timeout` seconds (then kills it and records the failure).
    public func wait(timeout: Double = 120) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return ProcessResult(status: -1, stdout: output(stdoutURL),
                                 stderr: output(stderrURL) + "\n[test: killed after \(timeout) s]", signaled: true)
        }
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, stdout: output(stdoutURL), stderr: output(stderrURL),
                             signaled: process.terminationReason == .uncaughtSignal)
    }

    /// What the process has written to stderr so far.
    public var stderrSoFar: String { output(stderrURL) }

    /// What the process has written to stdout so far.
    public var stdoutSoFar: String { output(stdoutURL) }

    private func output(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }
}

/// The moment a process ended (``RunningProcess/exitedAt``).
final class ExitMoment: @unchecked Sendable {  // `value` is behind `condition`
    private let condition = NSCondition()
    private var value: Double?

    func moment(waitingUpTo seconds: Double) -> Double? {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while value == nil && condition.wait(until: deadline) {}
        return value
    }

    func record() {
        let now = monotonicNow()
        condition.lock()
        defer { condition.unlock() }
        if value == nil { value = now }
        condition.broadcast()
    }
}

/// Runs a built executable to completion.
public func run(_ name: String, _ arguments: [String], environment: [String: String] = [:],
                timeout: Double = 120) throws -> ProcessResult {
    try RunningProcess(Executables.url(name), arguments, environment: environment).wait(timeout: timeout)
}
