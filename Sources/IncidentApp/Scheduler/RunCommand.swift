import Dispatch
import Foundation
import IncidentCore

/// `incident-scheduler run --once | --loop`: poll the configured sources.
enum RunCommand {
    static let once = Flag("once", help: "Poll each source once and exit (the cron mode).")
    static let loop = Flag("loop", help: "Keep polling each source on its own interval (the service mode).")
    static let deadline = ValueOption<Int64>(
        "deadline", placeholder: "duration",
        help: "--once: cancel what is still running after this long (the configuration's deadline).", default: "15m",
        what: "a duration") { try ValueParsers.duration($0, zero: "a run given no time would cancel every source before it starts") }
    static let concurrency = ValueOption<Int>(
        "concurrency", placeholder: "count",
        help: "Poll at most this many sources at a time (the configuration's concurrency).",
        default: String(Configuration.defaultConcurrency),
        what: "a whole number from 1 to \(Configuration.maxConcurrency)") { Configuration.concurrency($0) }
    static let metricsFile = ValueOption<String>(
        "metrics-file", placeholder: "path",
        help: "After each run, write Prometheus metrics here (node_exporter textfile collector).")
    static let heartbeat = ValueOption<Int64>(
        "heartbeat", placeholder: "duration", help: "--loop: log a heartbeat this often.", default: "60s",
        what: "a duration") { try ValueParsers.duration($0, zero: "a heartbeat needs time between its lines") }

    static func command(_ context: Context) -> Command {
        Command(
            name: "run",
            abstract: "Poll the configured sources: each once (--once, for cron) or on their intervals (--loop).",
            discussion: """
            Each source is fetched, parsed and stored as one transaction; a failing source does not stop or roll
            back the others, and a slow one delays no other (up to --concurrency sources are polled at once).
            --once exits 0 when all succeeded, 1 when any failed, the deadline passed or the --metrics-file could not be
            written, 3 when one was skipped or its response was incomplete, 75 when another incident-scheduler holds the
            database. --loop runs until
            SIGTERM/SIGINT (then exits 0), polls each source every `interval` plus up to 10 % jitter, and re-reads
            --config and --env-file on SIGHUP (a changed source keeps its turn; a new one is polled at once). Each run
            starts with one log line naming the version, the configuration, the database and the sources.
            """,
            options: [once, loop, CommonOptions.config, CommonOptions.envFile, CommonOptions.database, CommonOptions.dryRun, deadline, concurrency,
                      metricsFile, heartbeat, CommonOptions.logFormat, CommonOptions.logLevel, CommonOptions.verbose],
            run: { arguments in try await run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ processContext: Context) async throws {
        let context = try processContext.loadingEnvironmentFile(arguments)
        if arguments[once] && arguments[loop] {
            throw UsageError("--once and --loop are exclusive: give --once to poll each source once (cron, a timer) or --loop to keep polling (a service)")
        }
        guard arguments[once] || arguments[loop] else {
            throw UsageError("say how to run: --once (poll each source once, for cron) or --loop (keep polling)")
        }
        let logger = try arguments.logger(context)
        let deadlineSeconds = try arguments.value(deadline)
        let heartbeatSeconds = try arguments.value(heartbeat) ?? 60
        let concurrencyLimit = try arguments.value(concurrency)
        let metricsPath = try arguments.value(metricsFile)
        let dryRun = arguments[CommonOptions.dryRun]
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: true)
        let path = try context.databasePath(arguments, configured: configuration.database)
        // One line at every start says what this process is and where its data goes.
        logger.log(.info, "scheduler.start", [
            "version": BuildInfo.description, "mode": arguments[once] ? "once" : "loop",
            "config": try context.configurationFile(arguments) ?? "(none: $GITS_SERVICE_KEY)",
            "database": Stores.displayName(path), "sources": configuration.sources.map(\.name).joined(separator: ","),
        ])
        // --once: its deadline bounds reaching the database too; whatever else holds the run up
        // (a call that nothing could interrupt), it ends at most 10 s after its deadline.
        let onceDeadline = arguments[once] ? deadlineSeconds ?? configuration.deadlineSeconds : nil
        let backstop = onceDeadline.map { DeadlineBackstop(seconds: $0 + 10, logger: logger) }
        defer { backstop?.cancel() }
        let polls = concurrencyLimit ?? configuration.concurrency
        try await SchedulerTool.withStore(path: path, context: context, scheduler: true, leaseSeconds: configuration.leaseSeconds,
                                          concurrency: polls, logger: logger,
                                          connectWithin: onceDeadline.map { min(Stores.reconnectSeconds, Double($0)) }) { store, lock in
            let fileWatch = (store as? any StoreFile).map { StoreFileWatch(database: path, store: $0, lock: lock, logger: logger) }
            let service = SchedulerService(store: store, clock: context.clock, host: context.host, logger: logger, dryRun: dryRun,
                                           metricsFile: metricsPath, concurrency: polls,
                                           leaseSeconds: configuration.leaseSeconds, fileWatch: fileWatch)
            // --dry-run stores nothing, so it delivers nothing either. A loop delivers even when
            // it starts without watches: a reload may add some.
            let delivery: WatchDelivery? = if dryRun || (configuration.watches.isEmpty && !arguments[loop]) { nil } else {
                try WatchDelivery(store: store, holder: service.holder, clock: service.clock, leaseSeconds: configuration.leaseSeconds,
                                  environment: context.environment, logger: logger)
            }
            // Before the first poll: a new watch that starts at the end of the log gets this run's transitions.
            try await delivery?.start(configuration.watches, legacyState: configuration.legacyWatchState(database: path))
            if arguments[loop] {
                // Deliveries follow the polls' commits in their own task: this host's at once, the
                // others' within a turn.
                let deliveries = delivery.map { delivery in Task { await delivery.deliverForever(every: WatchDelivery.turnSeconds) } }
                let polling = PollingLoop(service: service, heartbeatSeconds: heartbeatSeconds, logged: { delivery?.wake() })
                await polling.run(configuration, reloaded: { reloaded in
                    await delivery?.reconfigure(reloaded.watches)
                }) {
                    // SIGHUP re-reads the environment file too: a key rotated there is used.
                    try SchedulerTool.loadConfiguration(arguments, try processContext.loadingEnvironmentFile(arguments), requireKeys: true)
                }
                deliveries?.cancel()
                await deliveries?.value
                if let lost = fileWatch?.lost { throw lost }
                return
            }
            let round = await service.pollRound(configuration.sources, deadlineSeconds: deadlineSeconds ?? configuration.deadlineSeconds)
            if let lost = fileWatch?.lost { throw lost }
            await delivery?.deliver()
            if let retention = configuration.retentionSeconds, !dryRun, !Task.isCancelled {
                service.prune(olderThan: retention)
            }
            let metricsWritten = service.writeMetrics()
            // A failed metrics write is a failure (1): it outranks "not fresh" (3), else a
            // monitor of exit statuses reads a broken metrics pipeline as an incomplete feed.
            var status = round.status
            if !metricsWritten, status == nil || status == ExitStatus.notFresh { status = ExitStatus.failure }
            if let status { throw RoundOutcome(status: status) }
        }
    }
}

/// Ends the process with exit status 1 when a `run --once` is still running this long after it
/// started: a last resort beyond the round's own deadline (which cancels the polls and
/// interrupts their database calls), for what cannot be cancelled (a connection attempt that
/// a partition holds up). Nothing uncommitted is kept: the database rolls it back.
final class DeadlineBackstop: @unchecked Sendable {  // the work item is set once; cancel is thread-safe
    private let item: DispatchWorkItem

    init(seconds: Int64, logger: Logger) {
        item = DispatchWorkItem {
            logger.log(.error, "run.deadline_backstop", [
                "after_s": seconds,
                "detail": "the run was still going 10 s after its deadline (the database or the network stopped answering); exiting",
            ])
            exit(ExitStatus.failure)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(seconds)), execute: item)
    }

    func cancel() { item.cancel() }
}
