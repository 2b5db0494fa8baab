import CProcessSignals
import Dispatch
import Foundation
import IncidentCore
import Synchronization

/// SIGINT and SIGTERM as task cancellation, so a stop request unwinds cleanly: in-flight HTTP
/// requests are cancelled, the open transaction rolls back, the run is recorded as cancelled,
/// and the process exits with 128 + the signal number (130, 143). A second signal exits at once
/// (SQLite's journal makes even that safe: the next open rolls the transaction back).
///
/// Starting fast (issue 23): the command runs on the main thread until it first truly suspends
/// (`Task.immediate`), so a query, which never does, starts no Dispatch worker thread. Until a
/// command that can be cancelled starts (``Command/cancellable``, ``cancelOnSignal()``), the
/// signals are handled without any thread (CProcessSignals): the first ends the process at once
/// with 128 + the signal, as sqlite3 or grep stop, after removing the output file being written
/// (``removedOnSignal(_:_:)``). There is nothing to cancel or roll back then: parsing, help,
/// `--version` and the reads that hold no write transaction (`list`, `show`, `stats`, …). Only a
/// command that can be cancelled starts the thread that cancels it. On a busy machine every
/// thread a short process starts waits for a core, at its start and again at the process's exit.
public enum ProcessSignals {
    /// The task to cancel on a signal while it runs, and the first signal the signal thread took.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var task: UnsafeCurrentTask?
        private let first = Atomic<Int32>(0)

        /// The first signal the signal thread received, nil when none.
        var value: Int32? {
            let number = first.load(ordering: .sequentiallyConsistent)
            return number == 0 ? nil : number
        }

        /// Records `number` as the first signal received; false when one already was.
        func record(_ number: Int32) -> Bool {
            first.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent).exchanged
        }

        /// Cancels the attached task, if one is attached.
        func cancel() {
            lock.lock()
            defer { lock.unlock() }
            task?.cancel()
        }

        /// ``cancel()`` cancels `task` from now on, until ``detach()``. Called from inside the
        /// task, which outlives the attachment: the reference is never used after ``detach()``.
        func attach(_ task: UnsafeCurrentTask?) {
            lock.lock()
            defer { lock.unlock() }
            self.task = task
        }

        func detach() {
            lock.lock()
            defer { lock.unlock() }
            task = nil
        }
    }

    /// What ``main(_:)`` set up: nil in a process it does not run (the tests' own).
    private static let installed = Mutex<Received?>(nil)
    private static let cancelling = Atomic<Bool>(false)

    /// The executables' entry point: runs `body` in a task that SIGINT/SIGTERM cancel once
    /// ``cancelOnSignal()`` has been called, and exits the process with its status.
    ///
    /// The task starts on this (the main) thread and stays on it until its first real
    /// suspension; after one it continues on the global executor while this thread waits on a
    /// semaphore rather than in `dispatch_main` (what a top-level `await` uses): same behaviour,
    /// and the binaries can then run under valgrind's callgrind, which crashes in
    /// `dispatch_main`'s `sigsuspend` loop (valgrind 3.19).
    public static func main(_ body: @escaping @Sendable () async -> Int32) -> Never {
        process_signals_install()
        let received = Received()
        installed.withLock { $0 = received }
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

    /// From now on SIGINT and SIGTERM cancel the task of ``main(_:)``: a thread of its own
    /// waits for them (``SignalThread``), logs the first and cancels the task, and exits at once
    /// on a second. Call from the task, before it first suspends (on the main thread, whose
    /// signal mask every later thread inherits). Does nothing outside ``main(_:)`` or when
    /// called before.
    static func cancelOnSignal() {
        guard let received = installed.withLock({ $0 }),
              !cancelling.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // Before a command has parsed --log-format: logfmt, with journal priorities under systemd.
        let logger = Logger(clock: .system, syslogPriorities: JournalStream.isStandardError(
            getenv("JOURNAL_STREAM").map { ["JOURNAL_STREAM": String(cString: $0)] } ?? [:]))
        SignalThread.start { number in
            guard received.record(number) else { _exit(128 + number) }
            logger.write(logger.line(.warning, "signal.received", [
                ("signal", .text(number == SIGINT ? "SIGINT" : "SIGTERM")),
                ("note", .text("stopping (a poll under way is rolled back); send it again to stop at once"))]))
            received.cancel()
        }
    }

    /// Runs `body`, which creates and writes the file at `path` and then renames or removes it,
    /// with `path` removed should a signal end the process meanwhile through the thread-free
    /// handler (a read is ended by the first): no half-written output is left behind.
    static func removedOnSignal<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        let slot = process_signals_remove_on_signal(path)
        defer { process_signals_forget(slot) }
        return try body()
    }
}

extension ProcessSignals {
    /// A program that could not be started.
    struct SpawnError: LocalizedError {
        let number: Int32
        var errorDescription: String? { String(cString: strerror(number)) }
    }

    /// Starts `arguments` (an executable's path, then its arguments; no PATH search) with
    /// exactly `environment`, with `input`, `output` and `error` as its standard descriptors,
    /// in a process group of its own, and with the signals of a freshly started program (none
    /// blocked, every action the default; `process_signals_spawn`): a child of Foundation's
    /// `Process` inherits the blocked mask of the thread that starts it, here nearly every signal.
    /// - Returns: its pid, which is also its process group.
    /// - Throws: ``SpawnError`` (`No such file or directory`, `Permission denied`, …).
    static func spawn(_ arguments: [String], environment: [String: String], input: Int32, output: Int32, error: Int32) throws -> pid_t {
        func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] { strings.map { strdup($0) } + [nil] }
        let argv = cStrings(arguments), envp = cStrings(environment.map { "\($0.key)=\($0.value)" })
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = process_signals_spawn(&pid, arguments[0], argv, envp, input, output, error)
        guard result == 0 else { throw SpawnError(number: result) }
        return pid
    }
}

/// One thread that takes SIGINT and SIGTERM with `sigwait`. They are blocked in the calling
/// thread first, and so in every thread started after it (threads inherit the mask): the
/// kernel keeps them pending for `sigwait` instead of running a handler on some thread, and no
/// system call elsewhere is interrupted (EINTR). A child would inherit the blocked mask: watch
/// commands are started with an empty one (``ProcessSignals/spawn(_:environment:input:output:error:)``).
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

    /// Blocks SIGINT and SIGTERM in the calling thread and calls `handle` on a thread of its
    /// own with each one received, in order, for the rest of the process.
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
            // No thread: the thread-free handler goes on taking them (the first ends the process).
            Unmanaged<Handler>.fromOpaque(context).release()
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
        }
    }
}
