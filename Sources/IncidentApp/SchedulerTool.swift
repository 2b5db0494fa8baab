import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking
import Synchronization

/// `incident-scheduler`: ingests the configured sources into SQLite (from cron, or a loop).
public enum SchedulerTool {
    public static let version = "0.1.0"

    static let databaseOption = Option.value("database", placeholder: "path",
        help: "SQLite database file. Also $INCIDENTS_DATABASE.", default: "$XDG_DATA_HOME/trafficincidents/incidents.sqlite")
    static let configOption = Option.value("config", short: "c", placeholder: "file",
        help: "JSON configuration (sources, database). Without it, GITS is configured from $GITS_SERVICE_KEY.")
    static let logFormatOption = Option.value("log-format", placeholder: "logfmt|json",
        help: "Format of the log lines on stderr.", default: "logfmt")
    static let verboseOption = Option.flag("verbose", short: "v",
        help: "Also log HTTP attempts that succeeded at once (retries and failures are always logged).")

    public static func command(_ context: Context) -> Command {
        Command(
            name: "incident-scheduler",
            abstract: "Ingest public traffic-incident feeds into SQLite.",
            discussion: """
            Run it from cron with `run --once`, or as a service with `run --loop`. Logs go to stderr,
            one line per event; results go to stdout. Exit statuses are listed in README.md.
            """,
            subcommands: [runCommand(context), ingestCommand(context), sourcesCommand(context), checkConfigCommand(context),
                          migrateCommand(context), pruneCommand(context)])
    }

    // MARK: run

    static func runCommand(_ context: Context) -> Command {
        Command(
            name: "run",
            abstract: "Poll the configured sources: each once (--once, for cron) or on their intervals (--loop).",
            discussion: """
            Each source is fetched, parsed and stored as one transaction; a failing source does not stop or roll
            back the others. --once exits 0 when all succeeded, 1 when any failed, 3 when one was skipped, 75 when
            another incident-scheduler holds the database. --loop runs until SIGTERM/SIGINT (then exits 0),
            polls each source every `interval` plus up to 10 % jitter, and re-reads --config on SIGHUP.
            """,
            options: [
                .flag("once", help: "Poll each source once and exit (the cron mode)."),
                .flag("loop", help: "Keep polling each source on its own interval (the service mode)."),
                configOption, databaseOption,
                .flag("dry-run", help: "Fetch and parse, then roll back: report what would be written, write nothing."),
                .value("deadline", placeholder: "duration",
                       help: "--once: cancel what is still running after this long (the configuration's deadline).", default: "15m"),
                .value("metrics-file", placeholder: "path",
                       help: "After each run, write Prometheus metrics here (node_exporter textfile collector)."),
                .value("heartbeat", placeholder: "duration", help: "--loop: log a heartbeat this often.", default: "60s"),
                logFormatOption, verboseOption,
            ],
            run: { arguments in
                guard arguments.flag("once") != arguments.flag("loop") else {
                    throw UsageError("say how to run: --once (poll each source once, for cron) or --loop (keep polling)")
                }
                let logger = try makeLogger(arguments, context)
                let deadlineOption = try arguments.value("deadline", as: "a duration") { try ValueParsers.duration($0) }
                let heartbeat = try arguments.value("heartbeat", as: "a duration") { try ValueParsers.duration($0) } ?? 60
                let metricsFile = arguments.value("metrics-file")
                let configuration: Configuration
                do {
                    configuration = try loadConfiguration(arguments, context, requireKeys: true)
                } catch let error as ConfigurationError {
                    logger.log(.error, "config.invalid", ["error": error.message])
                    return ExitStatus.configuration
                }
                let dryRun = arguments.flag("dry-run")
                let path = try context.databasePath(arguments, configured: configuration.database)
                return try await withStore(path: path, context: context, logger: logger) { store in
                    if arguments.flag("loop") {
                        let loop = PollingLoop(store: store, context: context, logger: logger, dryRun: dryRun,
                                               metricsFile: metricsFile, heartbeatSeconds: heartbeat)
                        await loop.run(configuration) {
                            try loadConfiguration(arguments, context, requireKeys: true)
                        }
                        return ExitStatus.success
                    }
                    let (runs, deadlineExceeded) = await pollOnce(
                        configuration.sources, store: store, context: context, logger: logger, dryRun: dryRun,
                        deadlineSeconds: deadlineOption ?? configuration.deadlineSeconds)
                    if let retention = configuration.retentionSeconds, !dryRun, !Task.isCancelled {
                        prune(store, olderThan: retention, context: context, logger: logger)
                    }
                    if let metricsFile { writeMetrics(store, to: metricsFile, logger: logger) }
                    return deadlineExceeded ? ExitStatus.failure : exitStatus(for: runs)
                }
            })
    }

    static func writeMetrics(_ store: any IncidentReader, to path: String, logger: Logger) {
        do {
            try Metrics.write(store, to: path)
        } catch {
            logger.log(.error, "metrics.failed", ["file": path, "error": describeError(error)])
        }
    }

    /// The HTTP client for one source: its timeout and retry policy, attempts logged. Made
    /// once per source (per run, or per source task in `--loop`) and reused for its polls.
    static func client(for source: SourceDefinition, logger: Logger) -> URLSessionHTTPClient {
        URLSessionHTTPClient(configuration: networkConfiguration(for: source), onEvent: { logHTTPEvent($0, logger: logger) })
    }

    /// Polls one source over HTTP, then logs the run.
    static func poll(_ source: SourceDefinition, client: any HTTPClient, ingest: IngestIncidents, context: Context,
                     logger: Logger, dryRun: Bool) async -> IngestRun {
        let run: IngestRun
        do {
            run = await ingest(try ProviderRegistry.feed(for: source, client: client), dryRun: dryRun)
        } catch {
            run = IngestRun(source: source.name, startedAt: context.clock.now(), finishedAt: context.clock.now(),
                            status: .failed, error: describeError(error))
        }
        logRun(run, provider: source.provider, dryRun: dryRun, logger: logger)
        return run
    }

    /// Polls each source once, in order, within a deadline: when it passes, the source being
    /// polled and those after it are cancelled (recorded as cancelled; nothing of them stored).
    static func pollOnce(_ sources: [SourceDefinition], store: Stores.Writable, context: Context, logger: Logger,
                         dryRun: Bool, deadlineSeconds: Int64) async -> (runs: [IngestRun], deadlineExceeded: Bool) {
        let ingest = IngestIncidents(store: store, clock: context.clock, describe: describeError)
        let work = Task { () -> [IngestRun] in
            var runs: [IngestRun] = []
            for source in sources {
                runs.append(await poll(source, client: client(for: source, logger: logger), ingest: ingest,
                                       context: context, logger: logger, dryRun: dryRun))
            }
            return runs
        }
        let deadlineExceeded = Mutex(false)
        let timer = Task {
            try await Task.sleep(nanoseconds: UInt64(deadlineSeconds) * 1_000_000_000)
            deadlineExceeded.withLock { $0 = true }
            logger.log(.error, "run.deadline_exceeded", [
                "deadline": ValueParsers.durationText(deadlineSeconds),
                "detail": "the run took longer than its deadline; the sources still running were cancelled and stored nothing",
            ])
            work.cancel()
        }
        let runs = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
        timer.cancel()
        return (runs, deadlineExceeded.withLock { $0 })
    }

    static func prune(_ store: Stores.Writable, olderThan seconds: Int64, context: Context, logger: Logger) {
        let horizon = context.clock.now().adding(seconds: -seconds)
        do {
            let counts = try store.prune(before: horizon)
            logger.log(.info, "prune.finished", [
                "older_than": ValueParsers.durationText(seconds), "horizon": horizon.rfc3339,
                "incidents": counts.incidents, "revisions": counts.revisions, "runs": counts.runs,
            ])
        } catch {
            logger.log(.error, "prune.failed", ["error": describeError(error)])
        }
    }

    static func networkConfiguration(for source: SourceDefinition) -> NetworkConfiguration {
        NetworkConfiguration(requestTimeout: source.requestTimeoutSeconds, retryPolicy: source.retryPolicy)
    }

    /// 1 if any run failed; 130 if one was cancelled; 3 if one was skipped; else 0.
    static func exitStatus(for runs: [IngestRun]) -> Int32 {
        if runs.contains(where: { $0.status == .failed }) { return ExitStatus.failure }
        if runs.contains(where: { $0.status == .cancelled }) { return ExitStatus.interrupted }
        if runs.contains(where: { $0.status == .skipped }) { return ExitStatus.skipped }
        return ExitStatus.success
    }

    // MARK: ingest

    static func ingestCommand(_ context: Context) -> Command {
        Command(
            name: "ingest",
            abstract: "Ingest a saved response file (backfill, replay) as one poll of a source.",
            discussion: """
            The file goes through the same reader, mapper and repository as a live poll; its format
            (XML or JSON) is recognised from its content. --source is a configured source name or a
            provider name (\(ProviderRegistry.names.joined(separator: ", "))).
            """,
            options: [
                .value("source", short: "s", placeholder: "name", help: "A configured source name or a provider name."),
                .value("file", short: "f", placeholder: "path", help: "The saved response."),
                configOption, databaseOption,
                .flag("complete", help: "The file is a complete answer of its time: clear the source's incidents it does not list."),
                .flag("dry-run", help: "Parse and count, then roll back: write nothing."),
                logFormatOption, verboseOption,
            ],
            run: { arguments in
                guard let sourceName = arguments.value("source") else { throw UsageError("missing --source (a source or provider name)") }
                guard let file = arguments.value("file") else { throw UsageError("missing --file (the saved response)") }
                let logger = try makeLogger(arguments, context)
                let configuration: Configuration?
                do {
                    configuration = arguments.value("config") == nil ? nil
                        : try loadConfiguration(arguments, context, requireKeys: false)
                } catch let error as ConfigurationError {
                    logger.log(.error, "config.invalid", ["error": error.message])
                    return ExitStatus.configuration
                }
                let provider: String
                if let configured = configuration?.sources.first(where: { $0.name == sourceName }) {
                    provider = configured.provider
                } else if ProviderRegistry.provider(named: sourceName) != nil {
                    provider = sourceName
                } else {
                    let configured = configuration?.sources.map(\.name) ?? []
                    throw UsageError("--source: '\(sourceName)' is neither a configured source\(configured.isEmpty ? "" : " (\(configured.joined(separator: ", ")))") nor a provider (\(ProviderRegistry.names.joined(separator: ", ")))")
                }
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue,
                      FileManager.default.isReadableFile(atPath: file) else {
                    logger.log(.error, "ingest.failed", ["source": sourceName,
                                                         "error": "cannot read \(file): no such file, a directory, or not readable"])
                    return ExitStatus.noInput
                }
                let path = try context.databasePath(arguments, configured: configuration?.database)
                return try await withStore(path: path, context: context, logger: logger) { store in
                    let feed = try ProviderRegistry.fileFeed(source: sourceName, provider: provider,
                                                             file: URL(fileURLWithPath: file), complete: arguments.flag("complete"))
                    let ingest = IngestIncidents(store: store, clock: context.clock, describe: describeError)
                    let run = await ingest(feed, dryRun: arguments.flag("dry-run"))
                    logRun(run, provider: provider, dryRun: arguments.flag("dry-run"), logger: logger)
                    switch run.status {
                    case .succeeded, .incomplete: return ExitStatus.success
                    case .cancelled: return ExitStatus.interrupted
                    case .failed, .skipped: return ExitStatus.dataError
                    }
                }
            })
    }

    // MARK: sources

    static func sourcesCommand(_ context: Context) -> Command {
        Command(
            name: "sources",
            abstract: "List the configured sources, their last run and quota state (keys are never shown).",
            options: [
                configOption, databaseOption,
                .value("clear-quota", placeholder: "source",
                       help: "Let a source whose quota is exhausted run again at once (after the provider raised or reset it)."),
            ],
            run: { arguments in
                let configuration: Configuration
                do {
                    configuration = try loadConfiguration(arguments, context, requireKeys: false)
                } catch let error as ConfigurationError {
                    StandardError.writeLine("error: \(error.message)")
                    return ExitStatus.configuration
                }
                let path = try context.databasePath(arguments, configured: configuration.database)
                if let name = arguments.value("clear-quota") {
                    guard configuration.sources.contains(where: { $0.name == name }) else {
                        throw UsageError("--clear-quota: no configured source is named '\(name)'")
                    }
                    guard FileManager.default.fileExists(atPath: path) else {
                        StandardError.writeLine("error: \(StoreMissing(database: path))")
                        return ExitStatus.noInput
                    }
                    let cleared = try Stores.openForWriting(path, clock: context.clock).clearQuota(source: name)
                    context.output(cleared ? "\(name): quota back-off cleared; the next run polls it\n"
                                           : "\(name): its quota was not exhausted; nothing to clear\n")
                    return ExitStatus.success
                }
                var lastRuns: [String: IngestRun] = [:]
                var quotas: [String: UTCInstant] = [:]
                if FileManager.default.fileExists(atPath: path) {
                    do {
                        for summary in try Stores.openForReading(path, clock: context.clock).sourceSummaries() {
                            lastRuns[summary.source] = summary.lastRun
                            quotas[summary.source] = summary.quotaExhaustedUntil
                        }
                    } catch {
                        StandardError.writeLine("error: cannot read the run log in \(path): \(describeError(error))")
                        return ExitStatus.failure
                    }
                }
                let now = context.clock.now()
                var rows: [[String]] = [["SOURCE", "PROVIDER", "INTERVAL", "KEY", "BASE URL", "LAST RUN", "STATUS", "FETCHED", "QUOTA"]]
                for source in configuration.sources {
                    let run = lastRuns[source.name]
                    let quota = quotas[source.name].flatMap { $0 > now ? "exhausted until \($0.rfc3339)" : nil } ?? "ok"
                    rows.append([
                        source.name, source.provider, ValueParsers.durationText(source.intervalSeconds),
                        source.key == nil ? "missing" : "set",
                        source.baseURL.map { Redaction.redact($0.absoluteString) } ?? "(provider default)",
                        run?.finishedAt.rfc3339 ?? "never", run?.status.rawValue ?? "-", run.map { String($0.counts.fetched) } ?? "-",
                        quota,
                    ])
                }
                context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment), flexible: [4]))
                return ExitStatus.success
            })
    }

    // MARK: check-config

    static func checkConfigCommand(_ context: Context) -> Command {
        Command(
            name: "check-config",
            abstract: "Validate the configuration and show each source as it will run (keys redacted).",
            discussion: "Exit 0 when every source is valid and has its key; 78 otherwise, with the reason.",
            options: [configOption, databaseOption],
            run: { arguments in
                let configuration: Configuration
                do {
                    configuration = try loadConfiguration(arguments, context, requireKeys: false)
                } catch let error as ConfigurationError {
                    StandardError.writeLine("error: \(error.message)")
                    return ExitStatus.configuration
                }
                var rows = [["SOURCE", "PROVIDER", "URL", "KEY", "INTERVAL", "TIMEOUT", "RETRIES", "OPTIONS"]]
                var missing: [String] = []
                for source in configuration.sources {
                    let url = (try? ProviderRegistry.provider(named: source.provider)?.router(for: source).asURLRequest().url)
                        .flatMap { $0 }.map(Redaction.redact) ?? (source.baseURL.map(Redaction.redact) ?? "(provider default)")
                    if source.key == nil { missing.append(source.name) }
                    let o = source.options
                    let options = [o.bbox.map { "bbox=" + $0.map { "\($0)" }.joined(separator: ",") }, o.eventType.map { "eventType=\($0)" },
                                   o.roadType.map { "type=\($0)" }, o.format.map { "format=\($0)" }].compactMap { $0 }
                    rows.append([source.name, source.provider, url, source.key == nil ? "MISSING" : "set (REDACTED)",
                                 ValueParsers.durationText(source.intervalSeconds), "\(Int(source.requestTimeoutSeconds))s",
                                 String(source.retryPolicy.maxRetries), options.isEmpty ? "-" : options.joined(separator: " ")])
                }
                context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment), flexible: [2, 7]))
                context.output("database: \(try context.databasePath(arguments, configured: configuration.database))\n")
                context.output("deadline: \(ValueParsers.durationText(configuration.deadlineSeconds)); retention: "
                               + (configuration.retentionSeconds.map(ValueParsers.durationText) ?? "keep everything") + "\n")
                guard missing.isEmpty else {
                    StandardError.writeLine("error: no API key for \(missing.joined(separator: ", ")): set the keyEnv variable or keyFile")
                    return ExitStatus.configuration
                }
                return ExitStatus.success
            })
    }

    // MARK: migrate

    static func migrateCommand(_ context: Context) -> Command {
        Command(
            name: "migrate",
            abstract: "Apply pending schema migrations (or list them with --status).",
            options: [databaseOption, configOption, .flag("status", help: "List every migration and when it was applied; change nothing.")],
            run: { arguments in
                let path = try context.databasePath(arguments)
                if arguments.flag("status") {
                    guard FileManager.default.fileExists(atPath: path) else {
                        StandardError.writeLine("error: \(StoreMissing(database: path))")
                        return ExitStatus.noInput
                    }
                    var rows = [["VERSION", "NAME", "APPLIED AT"]]
                    for state in try Stores.openForInspection(path, clock: context.clock).migrationStates() {
                        rows.append([String(state.version), state.name, state.appliedAt?.rfc3339 ?? "pending"])
                    }
                    context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment)))
                    return ExitStatus.success
                }
                try createParentDirectory(of: path)
                let applied = try Stores.openForInspection(path, clock: context.clock, create: true).migrate()
                context.output(applied.isEmpty ? "up to date\n" : applied.map { "applied \($0)\n" }.joined())
                return ExitStatus.success
            })
    }

    // MARK: prune

    static func pruneCommand(_ context: Context) -> Command {
        Command(
            name: "prune",
            abstract: "Delete incidents cleared, and runs finished, longer ago than a horizon.",
            discussion: "Works in small batches so an ingest or a query never waits long. Each source's latest run is kept.",
            options: [
                .value("older-than", placeholder: "duration", help: "The horizon, e.g. 90d."),
                databaseOption, configOption, logFormatOption,
            ],
            run: { arguments in
                guard let seconds = try arguments.value("older-than", as: "a duration", { try ValueParsers.duration($0) }) else {
                    throw UsageError("missing --older-than (e.g. 90d)")
                }
                let logger = try makeLogger(arguments, context)
                let path = try context.databasePath(arguments)
                guard FileManager.default.fileExists(atPath: path) else {
                    logger.log(.error, "prune.failed", ["error": StoreMissing(database: path).description])
                    return ExitStatus.noInput
                }
                return try await withStore(path: path, context: context, logger: logger) { store in
                    let horizon = context.clock.now().adding(seconds: -seconds)
                    let counts = try store.prune(before: horizon)
                    context.output("deleted \(counts.incidents) incidents, \(counts.revisions) revisions and \(counts.runs) runs older than \(horizon.rfc3339)\n")
                    return ExitStatus.success
                }
            })
    }

    // MARK: Shared pieces

    static func makeLogger(_ arguments: ParsedArguments, _ context: Context) throws -> Logger {
        let format = try arguments.value("log-format", as: "logfmt or json") { Logger.Format(rawValue: $0) } ?? .logfmt
        return Logger(format: format, verbose: arguments.flag("verbose"), clock: context.clock)
    }

    static func loadConfiguration(_ arguments: ParsedArguments, _ context: Context, requireKeys: Bool) throws -> Configuration {
        if let path = arguments.value("config") {
            return try Configuration.load(from: URL(fileURLWithPath: path), environment: context.environment,
                                          requireKeys: requireKeys)
        }
        return try Configuration.fromEnvironment(context.environment, requireKeys: requireKeys)
    }

    /// Takes the database's scheduling lock, opens (and migrates) the store, and runs `body`.
    /// Exit 75 when another scheduler holds the lock; 1 when the database cannot be opened.
    static func withStore(path: String, context: Context, logger: Logger,
                          _ body: (Stores.Writable) async throws -> Int32) async throws -> Int32 {
        do {
            try createParentDirectory(of: path)
        } catch {
            logger.log(.error, "database.unavailable", ["database": path, "error": describeError(error)])
            return ExitStatus.failure
        }
        let locks = Stores.schedulingLocks(path)
        let lock: any HeldLock
        do {
            guard let taken = try locks.tryLock("scheduler") else {
                logger.log(.warning, "scheduler.locked", [
                    "database": path, "holder": locks.holder(of: "scheduler"),
                    "detail": "another incident-scheduler is working on this database; this run did nothing",
                ])
                return ExitStatus.locked
            }
            lock = taken
        } catch {
            logger.log(.error, "database.unavailable", ["database": path, "error": describeError(error) + "; check the directory's permissions"])
            return ExitStatus.failure
        }
        defer { lock.release() }
        let store: Stores.Writable
        do {
            store = try Stores.openForWriting(path, clock: context.clock)
        } catch {
            logger.log(.error, "database.unavailable", ["database": path, "error": describeError(error)])
            return ExitStatus.failure
        }
        return try await body(store)
    }

    static func createParentDirectory(of path: String) throws {
        guard path != ":memory:" else { return }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Log-safe text for any error: its description with every key redacted.
    @Sendable static func describeError(_ error: any Error) -> String {
        Redaction.redact(String(describing: error))
    }

    static func logRun(_ run: IngestRun, provider: String, dryRun: Bool, logger: Logger) {
        let duration = run.finishedAt.secondsSince1970 - run.startedAt.secondsSince1970
        switch run.status {
        case .succeeded, .incomplete:
            logger.log(run.status == .succeeded ? .info : .warning, dryRun ? "ingest.dry_run" : "ingest.\(run.status == .succeeded ? "finished" : "incomplete")", [
                "source": run.source, "provider": provider, "status": run.status.rawValue,
                "fetched": run.counts.fetched, "inserted": run.counts.inserted, "updated": run.counts.updated,
                "unchanged": run.counts.unchanged, "reopened": run.counts.reopened, "cleared": run.counts.cleared,
                "rejected": run.counts.rejected, "duplicates": run.counts.duplicates,
                "duration_s": duration, "warnings": run.warnings.isEmpty ? nil : run.warnings.joined(separator: "; "),
                "note": dryRun ? "dry run: nothing was written" : nil,
            ])
        case .failed, .cancelled, .skipped:
            logger.log(run.status == .skipped ? .warning : .error, "ingest.\(run.status.rawValue)", [
                "source": run.source, "provider": provider, "status": run.status.rawValue,
                "duration_s": duration, "resumes_at": run.resumesAt?.rfc3339, "error": run.error,
            ])
        }
    }

    /// One line per HTTP attempt. A clean first-attempt success is debug (shown with
    /// `--verbose`); retries and failures are warnings, always shown.
    static func logHTTPEvent(_ event: NetworkEvent, logger: Logger) {
        let clean = event.decision == .done && event.attempt == 1 && (200...299).contains(event.statusCode ?? 0)
        logger.log(clean ? .debug : .warning, "http.attempt", [
            "source": event.label, "method": event.method.rawValue, "url": event.redactedURL,
            "status": event.statusCode, "bytes": event.bytes, "duration_ms": event.durationMilliseconds,
            "attempt": event.attempt, "decision": event.decision, "error": event.errorSummary,
        ])
    }
}
