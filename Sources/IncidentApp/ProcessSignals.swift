import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// SIGINT and SIGTERM as task cancellation, so a stop request unwinds cleanly: in-flight HTTP
/// requests are cancelled, the open transaction rolls back, the run is recorded as cancelled,
/// and the process exits with 128 + the signal number (130, 143). A second signal exits at once
/// (SQLite's journal makes even that safe: the next open rolls the transaction back).
///
/// The command runs on the main thread until it first truly suspends (`Task.immediate`), so a
/// query, which never does, starts no Dispatch worker thread: on a busy machine each new worker
/// waits for a core before the work handed to it can start (issue 23, "start fast"). The signals
/// are taken by one plain thread waiting in `sigwait`, not by Dispatch sources (whose manager
/// thread and registration would start workers too).
public enum ProcessSignals {
    /// The signal received first, and the task it cancels while that task runs.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var signal: Int32?
        private var task: UnsafeCurrentTask?

        /// Records `signal`; returns false when one had already been received.
        func record(_ value: Int32) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            if signal != nil { return false }
            signal = value
            return true
        }

        /// Cancels the attached task, if one is attached; ``attach(_:)`` cancels it otherwise.
        func cancel() {
            lock.lock()
            defer { lock.unlock() }
            task?.cancel()
        }

        var value: Int32? {
            lock.lock()
            defer { lock.unlock() }
            return signal
        }

        /// Cancels `task` on a signal from now on (at once if one was already received), until
        /// ``detach()``. Called from inside the task, which outlives the attachment: the
        /// reference is never used after ``detach()`` returns.
        func attach(_ task: UnsafeCurrentTask?) {
            lock.lock()
            defer { lock.unlock() }
            self.task = task
            if signal != nil { task?.cancel() }
        }

        func detach() {
            lock.lock()
            defer { lock.unlock() }
            task = nil
        }
    }

    /// The executables' entry point: runs `body` in a task that SIGINT/SIGTERM cancel, and
    /// exits the process with its status.
    ///
    /// The task starts on this (the main) thread and stays on it until its first real
    /// suspension; after one it continues on the global executor while this thread waits on a
    /// semaphore rather than in `dispatch_main` (what a top-level `await` uses): same behaviour,
    /// and the binaries can then run under valgrind's callgrind, which crashes in
    /// `dispatch_main`'s `sigsuspend` loop (valgrind 3.19).
    public static func main(_ body: @escaping @Sendable () async -> Int32) -> Never {
        let received = Received()
        // Before a command has parsed --log-format: logfmt, with journal priorities under systemd.
        let logger = Logger(clock: .system, syslogPriorities: JournalStream.isStandardError(
            getenv("JOURNAL_STREAM").map { ["JOURNAL_STREAM": String(cString: $0)] } ?? [:]))
        SignalThread.start { number in
            guard received.record(number) else { _exit(128 + number) }
            logger.log(.warning, "signal.received", [
                "signal": number == SIGINT ? "SIGINT" : "SIGTERM",
                "note": "stopping (a poll under way is rolled back); send it again to stop at once",
            ])
            received.cancel()
        }
        let finished = DispatchSemaphore(value: 0)
        let status = Mutex<Int32>(ExitStatus.failure)
        Task.immediate {
            withUnsafeCurrentTask { received.attach($0) }
            var value = await body()
            received.detach()
            if let number = received.value, value == ExitStatus.interrupted || value == ExitStatus.terminated {
                value = 128 + number
            }
            status.withLock { [value] in $0 = value }
            finished.signal()
        }
        finished.wait()
        exit(status.withLock { $0 })
    }
}

/// One thread that takes SIGINT and SIGTERM with `sigwait`. They are blocked in the calling
/// thread first, and so in every thread started after it (threads inherit the mask): the
/// kernel keeps them pending for `sigwait` instead of running a default action or a handler
/// on some thread, and no system call elsewhere is interrupted (EINTR). Children started later
/// inherit the blocked mask, as they did from Dispatch's worker threads, which block them too.
enum SignalThread {
    final class Handler {
        let handle: @Sendable (Int32) -> Void
        init(_ handle: @escaping @Sendable (Int32) -> Void) { self.handle = handle }
    }

    static var signals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    /// Blocks SIGINT and SIGTERM and calls `handle` on a thread of its own with each one
    /// received, in order, for the rest of the process. Call before any other thread starts.
    static func start(_ handle: @escaping @Sendable (Int32) -> Void) {
        var set = signals
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let context = Unmanaged.passRetained(Handler(handle)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let handler = Unmanaged<Handler>.fromOpaque(context!).takeRetainedValue()
            var set = SignalThread.signals
            var number: Int32 = 0
            while sigwait(&set, &number) == 0 { handler.handle(number) }
            return nil
        }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            // No thread: the signals keep their default action (the process ends at once).
            Unmanaged<Handler>.fromOpaque(context).release()
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
        }
    }
}
