import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// SIGINT and SIGTERM as task cancellation, so a stop request unwinds cleanly: in-flight HTTP
/// requests are cancelled, the open transaction rolls back, the run is recorded as cancelled,
/// and the process exits with 128 + the signal number (130, 143). A second signal exits at once
/// (SQLite's journal makes even that safe: the next open rolls the transaction back).
public enum ProcessSignals {
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var signal: Int32?

        /// Records `signal`; returns false when one had already been received.
        func record(_ value: Int32) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            if signal != nil { return false }
            signal = value
            return true
        }

        var value: Int32? {
            lock.lock()
            defer { lock.unlock() }
            return signal
        }
    }

    /// The executables' entry point: runs `body` in a task that SIGINT/SIGTERM cancel, and
    /// exits the process with its status.
    ///
    /// The main thread waits on a semaphore rather than in `dispatch_main` (what a top-level
    /// `await` uses): same behaviour, and the binaries can then run under valgrind's callgrind,
    /// which crashes in `dispatch_main`'s `sigsuspend` loop (valgrind 3.19).
    public static func main(_ body: @escaping @Sendable () async -> Int32) -> Never {
        let finished = DispatchSemaphore(value: 0)
        let status = Mutex<Int32>(ExitStatus.failure)
        Task {
            let value = await runCancellable(body)
            status.withLock { $0 = value }
            finished.signal()
        }
        finished.wait()
        exit(status.withLock { $0 })
    }

    /// Runs `body` in a task that SIGINT/SIGTERM cancel, and returns its exit status (mapped to
    /// 128 + signal when it reports an interruption).
    public static func runCancellable(_ body: @escaping @Sendable () async -> Int32) async -> Int32 {
        let received = Received()
        // Before a command has parsed --log-format: logfmt, with journal priorities under systemd.
        let logger = Logger(clock: .system, syslogPriorities: JournalStream.isStandardError(
            getenv("JOURNAL_STREAM").map { ["JOURNAL_STREAM": String(cString: $0)] } ?? [:]))
        let task = Task { await body() }
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)  // let Dispatch, not the default action, handle it
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                guard received.record(number) else { _exit(128 + number) }
                logger.log(.warning, "signal.received", [
                    "signal": number == SIGINT ? "SIGINT" : "SIGTERM",
                    "note": "stopping (a poll under way is rolled back); send it again to stop at once",
                ])
                task.cancel()
            }
            source.resume()
            return source
        }
        let status = await task.value
        sources.forEach { $0.cancel() }
        if let number = received.value, status == ExitStatus.interrupted || status == ExitStatus.terminated {
            return 128 + number
        }
        return status
    }
}
