import Dispatch
import Foundation
import IncidentCore
import IncidentFeeds
import Synchronization

/// `incident-scheduler run --loop`: every source in its own task, polled on its interval by
/// ``SchedulerService/pollForever(_:firstAfter:polled:began:)``. A failing source only logs and waits for its
/// next turn. SIGHUP re-reads the configuration: sources that changed or disappeared are
/// stopped (a poll under way is cancelled and recorded as such), new ones started, unchanged
/// ones left alone; a changed source keeps its turn (its next poll comes its new interval after
/// its last one began, not at once), so a reload never polls every source together (issue 20).
/// Cancellation (SIGTERM/SIGINT) stops every task and returns.
struct PollingLoop: Sendable {
    let service: SchedulerService
    let heartbeatSeconds: Int64
    /// Called after each poll of this process that logged transitions (``loggedTransitions(_:)``):
    /// the watches' delivery starts a turn at once (``WatchDelivery/wake()``).
    var logged: @Sendable () -> Void = {}

    /// Whether `run` committed entries of the transition log: it stored something new, changed,
    /// reopened, cleared or set aside (a poll that finds everything as it was logs nothing).
    static func loggedTransitions(_ run: IngestRun?) -> Bool {
        guard let counts = run?.counts else { return false }
        return counts.inserted + counts.updated + counts.reopened + counts.cleared + counts.rejected > 0
    }

    /// Counters shared by the source tasks and the heartbeat.
    final class Counters: Sendable {
        let polls = Mutex(0)
        let sources = Mutex(0)
        /// When each source's last poll began (``SchedulerService/timing``'s clock).
        let lastBegan = Mutex<[String: Double]>([:])
    }

    /// Runs until the task is cancelled. `reload` re-reads the configuration on SIGHUP;
    /// `reloaded` is then given what it read (the watches' delivery takes its watches).
    func run(_ initial: Configuration, reloaded: @Sendable (Configuration) async -> Void = { _ in },
             reload: @escaping @Sendable () throws -> Configuration) async {
        let logger = service.logger
        let hangups = SignalStream(SIGHUP)
        // The database file taken from under the scheduler ends the loop as SIGTERM does.
        service.fileWatch?.whenLost { hangups.stop() }
        var running: [String: (definition: SourceDefinition, task: Task<Void, Never>)] = [:]
        let counters = Counters()

        func apply(_ sources: [SourceDefinition]) {
            let wanted = Dictionary(sources.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for (name, entry) in running where wanted[name] != entry.definition {
                entry.task.cancel()
                running[name] = nil
                logger.log(.info, "scheduler.source_stopped", ["source": name])
            }
            for source in sources where running[source.name] == nil {
                let last = counters.lastBegan.withLock { $0[source.name] }
                let firstAfter = last.map { max(0, $0 + Double(source.intervalSeconds) - service.timing.now()) } ?? 0
                running[source.name] = (source, Task { [service, logged] in
                    await service.pollForever(source, firstAfter: firstAfter, polled: { run in
                                                  counters.polls.withLock { $0 += 1 }
                                                  if Self.loggedTransitions(run) { logged() }
                                              },
                                              began: { time in counters.lastBegan.withLock { $0[source.name] = time } })
                })
                logger.log(.info, "scheduler.source_started", [
                    "source": source.name, "provider": source.provider,
                    "interval": ValueParsers.durationText(source.intervalSeconds),
                ])
            }
            counters.sources.withLock { $0 = running.count }
            service.configure(sources)
        }

        apply(initial.sources)
        let started = service.timing.now()
        let heartbeat = Task { [service, heartbeatSeconds] in
            while (try? await service.timing.sleep(Double(heartbeatSeconds))) != nil {
                logger.log(.info, "scheduler.heartbeat", [
                    "sources": counters.sources.withLock { $0 }, "polls": counters.polls.withLock { $0 },
                    "uptime_s": service.timing.now() - started,
                ])
            }
        }
        // Wait for SIGHUPs until cancelled (the stream then ends). The source tasks are
        // cancelled by the signal itself too, on its thread: when polls blocked in the database
        // hold every cooperative thread, this task may not run again until they return.
        let sourceTasks = SourceTasks()
        sourceTasks.tasks.withLock { $0 = running.values.map(\.task) }
        await withTaskCancellationHandler {
            for await _ in hangups.events {
                do {
                    let configuration = try reload()
                    logger.log(.info, "config.reloaded", ["sources": configuration.sources.count])
                    apply(configuration.sources)
                    await reloaded(configuration)
                    // Sources removed from the configuration leave the metrics file now.
                    service.writeMetrics()
                } catch {
                    logger.log(.error, "config.reload_failed", [
                        "error": ErrorText.describe(error), "detail": "kept the previous configuration",
                    ])
                }
                sourceTasks.tasks.withLock { $0 = running.values.map(\.task) }
            }
        } onCancel: {
            for task in sourceTasks.tasks.withLock({ $0 }) { task.cancel() }
        }
        hangups.stop()
        heartbeat.cancel()
        for entry in running.values { entry.task.cancel() }
        for entry in running.values { await entry.task.value }
        let unrecorded = service.pendingRuns.count
        logger.log(unrecorded == 0 ? .info : .warning, "scheduler.stopped", [
            "polls": counters.polls.withLock { $0 }, "unrecorded_runs": unrecorded == 0 ? nil : unrecorded,
        ])
    }
}

/// The source tasks of a loop, for its cancellation handler.
final class SourceTasks: Sendable {
    let tasks = Mutex<[Task<Void, Never>]>([])
}

/// A signal (e.g. SIGHUP) delivered as an async stream instead of its default action.
final class SignalStream: @unchecked Sendable {
    let events: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let source: any DispatchSourceSignal  // only touched in init and stop

    init(_ number: Int32) {
        (events, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        signal(number, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        let continuation = self.continuation
        source.setEventHandler { continuation.yield() }
        source.resume()
    }

    func stop() {
        source.cancel()
        continuation.finish()
    }
}
