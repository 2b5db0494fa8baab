import Foundation

/// Threads of a store's own, on which its blocking calls run, so that a call blocked in the
/// database (a lock another process holds, a network that stopped answering) never holds one
/// of the few threads of Swift's cooperative pool (one per core) that every other task needs:
/// lease renewals, timers, other sources' polls, a server's other requests.
///
/// A ``TaskExecutor`` (SE-0417): ``run(_:)`` runs a blocking call here and resumes the caller
/// on its own executor when it returns; ``runAsync(_:)`` runs an async body whose synchronous
/// stretches (a poll's reading and storing) run here. The call stays in the caller's task, so
/// `Task.isCancelled`, task-locals and cancellation handlers work in it as before.
///
/// Threads are started when a job finds none idle, up to `threads`; more jobs wait in order.
/// A thread idle for ``idleSeconds`` ends, so a store that is not used holds none.
public final class StoreExecutor: TaskExecutor, @unchecked Sendable {  // all state is behind `condition`
    /// How long an idle thread waits for a job before it ends (seconds).
    public static let idleSeconds = 10.0

    private enum Job {
        case task(UnownedJob, UnownedTaskExecutor)
        case work(@Sendable () -> Void)
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var started = 0
    private var idle = 0
    private let name: String
    /// The most threads this executor runs at once.
    public let threads: Int
    /// A store's threads: one per poll a scheduler may run at once (its `concurrency`, at most
    /// 64), plus one, so that no source's poll waits in this executor's queue behind the
    /// others' calls blocked in the database. Idle ones end (``idleSeconds``).
    public static let storeThreads = 65

    /// - Parameters:
    ///   - name: the threads' name (`name-N`), as debuggers and `top -H` show it.
    ///   - threads: the most threads at once (at least 1): as many blocking calls can wait at once.
    public init(name: String, threads: Int) {
        self.name = name
        self.threads = max(1, threads)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.task(UnownedJob(job), asUnownedTaskExecutor()))
    }

    /// Runs `work` on one of the threads, without waiting for it.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.work(work))
    }

    /// Runs the blocking `call` on one of the threads; the caller's task waits without holding
    /// a thread of the cooperative pool.
    /// - Throws: what `call` throws.
    public func run<T: Sendable>(_ call: @Sendable () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) { try await Self.runHere(call) }
    }

    /// Runs `body` with this executor preferred: its synchronous parts run on these threads
    /// (its awaits suspend, holding none), those of nonisolated async functions it calls too;
    /// code isolated to an actor still runs on the actor. Child tasks (task groups, `async
    /// let`) inherit the preference; an unstructured `Task` does not unless given
    /// `executorPreference:`.
    public func runAsync<T>(_ body: () async throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(self, operation: body)
    }

    @concurrent
    private static func runHere<T: Sendable>(_ call: @Sendable () throws -> T) async throws -> T {
        try call()
    }

    private func submit(_ job: Job) {
        condition.lock()
        jobs.append(job)
        let startOne = idle == 0 && started < threads
        if startOne { started += 1 } else { condition.signal() }
        let number = started
        condition.unlock()
        if startOne {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(number)"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if jobs.isEmpty {
                idle += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: Self.idleSeconds))
                idle -= 1
                if !signalled && jobs.isEmpty {
                    started -= 1
                    condition.unlock()
                    return
                }
                continue
            }
            let job = jobs.removeFirst()
            condition.unlock()
            switch job {
            case .task(let job, let executor): job.runSynchronously(on: executor)
            case .work(let work): work()
            }
            condition.lock()
        }
    }
}

/// A store whose blocking calls run on threads of its own (``StoreExecutor``): every call of
/// an async front end (a scheduler's polls and leases, a server's requests) goes through
/// ``perform(_:)``, or runs in ``StoreExecutor/runAsync(_:)``.
public protocol StoreExecution: Sendable {
    /// The store's threads.
    var executor: StoreExecutor { get }
}

extension StoreExecution {
    /// Runs `call` over the store on its threads: `try await store.perform { try store.runs(…) }`.
    /// - Throws: what `call` throws.
    public func perform<T: Sendable>(_ call: @Sendable () throws -> T) async throws -> T {
        try await executor.run(call)
    }
}
