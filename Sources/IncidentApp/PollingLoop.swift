import Dispatch
import Foundation
import IncidentCore
import IncidentFeeds
import Synchronization

/// `incident-scheduler run --loop`: every source in its own task, polled every `interval` plus
/// up to 10 % random jitter (so many schedulers never hit a provider in step). A source never
/// overlaps itself (its task polls, then sleeps); a failing source only logs and waits for its
/// next turn. SIGHUP re-reads the configuration: sources that changed or disappeared are
/// stopped (a poll under way is cancelled and recorded as such), new ones started, unchanged
/// ones left alone. Cancellation (SIGTERM/SIGINT) stops every task and returns.
struct PollingLoop: Sendable {
    let store: Stores.Writable
    let context: Context
    let logger: Logger
    let dryRun: Bool
    let metricsFile: String?
    let heartbeatSeconds: Int64

    /// Runs until the task is cancelled. `reload` re-reads the configuration on SIGHUP.
    /// Counters shared by the source tasks and the heartbeat.
    final class Counters: Sendable {
        let polls = Mutex(0)
        let sources = Mutex(0)
    }

    func run(_ initial: Configuration, reload: @escaping @Sendable () throws -> Configuration) async {
        let hangups = SignalStream(SIGHUP)
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
                running[source.name] = (source, Task { await pollForever(source, counters: counters) })
                logger.log(.info, "scheduler.source_started", [
                    "source": source.name, "provider": source.provider,
                    "interval": ValueParsers.durationText(source.intervalSeconds),
                ])
            }
            counters.sources.withLock { $0 = running.count }
        }

        apply(initial.sources)
        let started = context.clock.now()
        let heartbeat = Task {
            while !Task.isCancelled {
                guard (try? await Task.sleep(nanoseconds: UInt64(heartbeatSeconds) * 1_000_000_000)) != nil else { return }
                logger.log(.info, "scheduler.heartbeat", [
                    "sources": counters.sources.withLock { $0 }, "polls": counters.polls.withLock { $0 },
                    "uptime_s": context.clock.now().secondsSince1970 - started.secondsSince1970,
                ])
            }
        }
        // Wait for SIGHUPs until cancelled (the stream then ends).
        for await _ in hangups.events {
            do {
                let configuration = try reload()
                logger.log(.info, "config.reloaded", ["sources": configuration.sources.count])
                apply(configuration.sources)
            } catch {
                logger.log(.error, "config.reload_failed", [
                    "error": SchedulerTool.describeError(error), "detail": "kept the previous configuration",
                ])
            }
        }
        hangups.stop()
        heartbeat.cancel()
        for entry in running.values { entry.task.cancel() }
        for entry in running.values { await entry.task.value }
        logger.log(.info, "scheduler.stopped", ["polls": counters.polls.withLock { $0 }])
    }

    /// Polls `source` until cancelled.
    private func pollForever(_ source: SourceDefinition, counters: Counters) async {
        let ingest = IngestIncidents(store: store, clock: context.clock, describe: SchedulerTool.describeError)
        let client = SchedulerTool.client(for: source, logger: logger)
        while !Task.isCancelled {
            let began = ContinuousClock.now
            _ = await SchedulerTool.poll(source, client: client, ingest: ingest, context: context, logger: logger, dryRun: dryRun)
            counters.polls.withLock { $0 += 1 }
            if let metricsFile { SchedulerTool.writeMetrics(store, to: metricsFile, logger: logger) }
            let interval = Double(source.intervalSeconds) * (1 + Double.random(in: 0...0.1))
            let wait = interval - (ContinuousClock.now - began).seconds
            guard (try? await Task.sleep(nanoseconds: UInt64(max(0, wait) * 1_000_000_000))) != nil else { return }
        }
    }

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

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
