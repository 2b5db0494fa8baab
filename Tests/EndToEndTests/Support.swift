import Foundation
import TestSupport
import Testing

/// A temporary working directory with a database path and helpers to run the two executables.
struct Workspace {
    let directory: URL
    var database: String { directory.appendingPathComponent("incidents.sqlite").path }

    init() throws {
        directory = try TestPaths.temporaryDirectory("e2e")
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// `incidents list --database DB --format json ARGS…`, parsed.
    func listJSON(_ arguments: [String] = []) async throws -> [[String: Any]] {
        let result = try await run("incidents", ["list", "--database", database, "--format", "json"] + arguments)
        #expect(result.status == 0, "incidents list failed: \(result.stderr)")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(parsed as? [[String: Any]])
    }

    /// Every byte the database keeps (the file, its WAL and its shared-memory file).
    func databaseBytes() -> Data {
        ["", "-wal", "-shm"].reduce(into: Data()) { all, suffix in
            all.append((try? Data(contentsOf: URL(fileURLWithPath: database + suffix))) ?? Data())
        }
    }
}

/// The forms a key can take in text: raw, percent-encoded once and twice, `+` read as space.
func keyForms(_ raw: String) -> [String] {
    let encoded = raw.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? raw
    let twice = encoded.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? encoded
    return [raw, encoded, twice, raw.replacingOccurrences(of: "+", with: " ")]
}

/// Fails the test if any form of `key` appears in any of `texts` or in the database bytes.
func expectNoKey(_ key: String, in texts: [String], database: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    for form in keyForms(key) {
        for text in texts {
            #expect(!text.contains(form), "the key (as \(form)) leaked into: \(text.prefix(300))", sourceLocation: sourceLocation)
        }
        if let database {
            #expect(database.range(of: Data(form.utf8)) == nil, "the key (as \(form)) is stored in the database",
                    sourceLocation: sourceLocation)
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    func text(_ key: String) -> String? { self[key] as? String }
    func number(_ key: String) -> Double? { (self[key] as? NSNumber)?.doubleValue }
}

/// Runs a built executable to completion, awaiting it without holding a thread of the test
/// pool (which has one thread per core: two here). A test that blocks a thread while a process
/// runs starves every other test's timers and awaits for that long.
func run(_ name: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 120) async throws -> ProcessResult {
    await (try RunningProcess(Executables.url(name), arguments, environment: environment)).finished(timeout: timeout)
}

extension RunningProcess {
    /// Waits for the end without blocking a thread, up to `timeout` seconds (then kills it and
    /// records the failure, as ``wait(timeout:)`` does).
    func finished(timeout: Double = 120) async -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return wait(timeout: max(0, deadline.timeIntervalSinceNow))
    }
}

/// Runs `script` with `/bin/sh -c`; `$BIN` is the directory of the built executables.
func shell(_ script: String, environment: [String: String] = [:], timeout: Double = 120) async throws -> ProcessResult {
    await (try RunningProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", script],
                              environment: ["BIN": Executables.directory.path].merging(environment) { $1 })).finished(timeout: timeout)
}

/// Quotes `text` for a POSIX shell.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// Whether the tests run as root (then `setpriv` runs commands as nobody where permissions matter).
var runningAsRoot: Bool { getuid() == 0 }

/// The directory of the built executables for a command run as nobody (`setpriv`): as root, a
/// copy (made once, mode 755, removed with the tests' scratch directories) in a directory any
/// user may enter, because the checkout may sit where only root may go (under `/root`, mode
/// 700), and nobody then cannot even stat `.build/debug/incident-scheduler`. The copies find
/// the Swift runtime through their RUNPATH, /opt/swift/usr/lib/swift/linux.
let executablesForAnyUser: String = {
    guard runningAsRoot else { return Executables.directory.path }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trafficincidents-bin-\(getpid())")
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for name in ["incident-scheduler", "incidents"] {
            let copy = directory.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: Executables.url(name), to: copy)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy.path)
        }
        return directory.path
    } catch {
        return Executables.directory.path
    }
}()
