import Foundation
import IncidentCore
import IncidentSQLite
import TestSupport
import Testing

/// SIGINT and SIGTERM while a command's own thread is blocked. A command runs on the main
/// thread until it first suspends (a query never does); a read with nothing to cancel takes the
/// signals without a thread (`ProcessSignals`, CProcessSignals): the first is logged as the
/// signal thread of a cancellable command logs it, a second ends the process at once with
/// 128 + the signal, even while the command cannot move. (Cancellable commands: HistoryCLITests'
/// `changes --follow`, FaultsEndToEndTests' SIGTERM during a download, LoopEndToEndTests.)
@Suite("End to end: signals while a command is blocked", .serialized)
struct SignalEndToEndTests {
    @Test("a query blocked writing to a full pipe: the first signal is logged, the second ends it at once (130, 143)",
          arguments: [SIGINT, SIGTERM])
    func secondSignalWhileBlocked(signal: Int32) async throws {
        let path = try TestPaths.temporaryDirectory("signal-blocked").appendingPathComponent("incidents.sqlite").path
        // 2,000 incidents: about 1 MB of ndjson, far more than a pipe holds (64 KiB).
        let incidents = (0..<2000).map { index in
            Incident(source: "gits", externalID: "signal-\(index)", category: .accident,
                     description: "[사고] 경부고속도로 (서울방향) 수원IC → 신갈JC 2차로 통제, 추돌사고 \(index)", road: "경부고속도로",
                     coordinate: Coordinate(latitude: 37.26, longitude: 127.02),
                     startedAt: UTCInstant(rfc3339: "2024-01-01T00:00:00Z")!.adding(seconds: Int64(index)))
        }
        let store = try SQLiteStore(path: path, clock: .fixed(QueryFixture.t0))
        _ = try store.ingest(PollContext(source: "gits", startedAt: QueryFixture.t0), QueryFixture.Producer(incidents: incidents).callAsFunction)

        let process = Process()
        process.executableURL = Executables.url("incidents")
        process.arguments = ["list", "--format", "ndjson", "--database", path]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        let stdout = Pipe()  // never read: the query blocks once it is full
        let stderrURL = try TestPaths.temporaryDirectory("signal-blocked-stderr").appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? stdout.fileHandleForReading.close()
        }
        func stderr() -> String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

        // Blocked once the pipe holds all it can (then it is past its start, signals handled).
        let full = try await eventually(timeout: 60) {
            var queued: Int32 = 0
            _ = ioctl(stdout.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &queued)
            return queued >= 65_536
        }
        try #require(full, "the query did not fill the pipe within 60 s: \(stderr())")

        kill(process.processIdentifier, signal)
        let noted = try await eventually(timeout: 20) { stderr().contains("event=signal.received") }
        #expect(noted, "the first signal was not logged: \(stderr())")
        // Cancelled, but still blocked in write(2): nothing reads the pipe.
        #expect(process.isRunning, "\(stderr())")

        kill(process.processIdentifier, signal)
        let ended = try await eventually(timeout: 20) { !process.isRunning }
        try #require(ended, "the second signal did not end the query: \(stderr())")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + signal, "\(process.terminationStatus) \(stderr())")
        // The line the signal thread's logger writes, its time that of the signal (the
        // thread-free handler formats it itself).
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        let lines = stderr().split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(lines)")
        let suffix = " level=warning event=signal.received signal=\(name) note=\"stopping (a poll under way is rolled back); send it again to stop at once\""
        let line = lines.first ?? ""
        #expect(line.hasPrefix("ts=") && line.hasSuffix(suffix) && line.count == 3 + 20 + suffix.count, "\(line)")
        let logged = UTCInstant(rfc3339: String(line.dropFirst(3).prefix(20)))
        #expect(logged.map { abs(Int64(Date().timeIntervalSince1970) - $0.secondsSince1970) < 120 } == true, "\(line)")
    }
}
