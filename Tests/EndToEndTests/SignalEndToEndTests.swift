import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// SIGINT and SIGTERM during a read. A command runs on the main thread until it first suspends
/// (a query never does); a read has nothing to cancel or roll back, so it takes the signals
/// without a thread (`ProcessSignals`, CProcessSignals): the first ends it at once with 128 + the
/// signal, as sqlite3 or grep stop, even while it cannot move, and removes the `--output` file it
/// was writing. (Cancellable commands, whose first signal is logged and cancels the task:
/// HistoryCLITests' `changes --follow`, FaultsEndToEndTests' SIGTERM during a download,
/// LoopEndToEndTests.)
@Suite("End to end: signals during a read", .serialized)
struct SignalEndToEndTests {
    /// A database of `count` incidents whose descriptions are `padding` characters longer than usual.
    static func database(_ name: String, count: Int, padding: Int = 0) throws -> String {
        let path = try TestPaths.temporaryDirectory(name).appendingPathComponent("incidents.sqlite").path
        let filler = String(repeating: "통제 구간 안내 ", count: padding / 9)
        let incidents = (0..<count).map { index in
            Incident(source: "gits", externalID: "signal-\(index)", category: .accident,
                     description: "[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC 2차로 통제, 추돌사고 \(index) \(filler)", road: "경부고속도로",
                     coordinate: Coordinate(latitude: 37.26, longitude: 127.02),
                     startedAt: UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!.adding(seconds: Int64(index)))
        }
        let store = try SQLiteStore(path: path, clock: .fixed(QueryFixture.t0))
        _ = try store.ingest(PollContext(source: "gits", startedAt: QueryFixture.t0), QueryFixture.Producer(incidents: incidents).callAsFunction)
        return path
    }

    /// `incidents ARGUMENTS` started with its stderr in a file (read by the returned function).
    static func start(_ arguments: [String], stdout: Pipe? = nil, _ name: String) throws -> (Process, () -> String) {
        let process = Process()
        process.executableURL = Executables.url("incidents")
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        let stderrURL = try TestPaths.temporaryDirectory(name).appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        if let stdout { process.standardOutput = stdout }
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
        return (process, { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" })
    }

    @Test("a query blocked writing to a full pipe: the first signal ends it at once (130, 143), silently",
          arguments: [SIGINT, SIGTERM])
    func firstSignalWhileBlocked(signal: Int32) async throws {
        // 2,000 incidents: about 1 MB of ndjson, far more than a pipe holds (64 KiB).
        let path = try Self.database("signal-blocked", count: 2000)
        let stdout = Pipe()  // never read: the query blocks once it is full
        let (process, stderr) = try Self.start(["list", "--format", "ndjson", "--database", path], stdout: stdout, "signal-blocked-stderr")
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? stdout.fileHandleForReading.close()
        }

        // Blocked once the pipe holds all it can (then it is past its start, signals handled).
        let full = try await eventually(timeout: 60) {
            var queued: Int32 = 0
            _ = ioctl(stdout.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &queued)
            return queued >= 65_536
        }
        try #require(full, "the query did not fill the pipe within 60 s: \(stderr())")

        kill(process.processIdentifier, signal)
        // Still blocked in write(2), nothing reads the pipe: only the signal can end it.
        try await Self.expectEnded(process, by: signal, stderr)
    }

    /// `process` ends within 20 s, with 128 + `signal` and nothing on stderr.
    static func expectEnded(_ process: Process, by signal: Int32, _ stderr: () -> String) async throws {
        let ended = try await eventually(timeout: 20) { !process.isRunning }
        try #require(ended, "the first signal did not end the query: \(stderr())")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + signal, "\(process.terminationStatus) \(stderr())")
        #expect(stderr() == "")
    }

    @Test("a query writing --output FILE: the first signal ends it (130, 143) and leaves neither FILE nor its partial file",
          arguments: [SIGINT, SIGTERM])
    func firstSignalWhileWritingFile(signal: Int32) async throws {
        // About 30 MB of csv, written for a while after its first bytes reach the partial file.
        let path = try Self.database("signal-output", count: 2000, padding: 6_000)
        let directory = try TestPaths.temporaryDirectory("signal-output-file")
        let output = directory.appendingPathComponent("incidents.csv").path
        // Caught mid-write: stopped (SIGSTOP) once the partial file holds its first rows, while it
        // is still there and FILE is not; the signal is sent while it is stopped and delivered as
        // it continues. An export that finished before it could be stopped (a loaded machine)
        // is run again, up to three times.
        for _ in 1...3 {
            let (process, stderr) = try Self.start(["list", "--format", "csv", "--output", output, "--database", path], "signal-output-stderr")
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let partial = output + ".partial-\(process.processIdentifier)"
            let deadline = Date().addingTimeInterval(60)
            var size: UInt64 = 0
            while size == 0 && process.isRunning && Date() < deadline {
                size = ((try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? UInt64) ?? 0
                if size == 0 { usleep(500) }
            }
            try #require(size > 0 || !process.isRunning, "no partial file \(partial) seen while it ran: \(stderr())")
            kill(process.processIdentifier, SIGSTOP)
            guard FileManager.default.fileExists(atPath: partial), !FileManager.default.fileExists(atPath: output) else {
                kill(process.processIdentifier, SIGCONT)
                process.waitUntilExit()
                try? FileManager.default.removeItem(atPath: output)
                continue
            }
            kill(process.processIdentifier, signal)
            kill(process.processIdentifier, SIGCONT)
            try await Self.expectEnded(process, by: signal, stderr)
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [], "left behind")
            return
        }
        Issue.record("the export finished each time before it could be stopped mid-write")
    }
}
