import Foundation
import IncidentCore
import IncidentFeeds
import Synchronization

/// `incident-scheduler ingest --source NAME --file PATH`: replay or backfill a saved response.
enum IngestCommand {
    static let source = ValueOption<String>("source", short: "s", placeholder: "name", help: "A configured source name or a provider name.")
    static let file = ValueOption<String>("file", short: "f", placeholder: "path", help: "The saved response.")
    static let complete = Flag("complete", help: "The file is a complete answer of its time: clear the source's incidents it does not list.")
    static let asOf = ValueOption<String>(
        "as-of", placeholder: "instant",
        help: "When the response was fetched (an instant as --since takes it, local times in --tz); incidents are stamped seen then.",
        default: "the file's modification time")
    static let dryRun = Flag("dry-run", help: "Parse and count, then roll back: write nothing.")

    static func command(_ context: Context) -> Command {
        Command(
            name: "ingest",
            abstract: "Ingest a saved response file (backfill, replay) as one poll of a source.",
            discussion: """
            The file goes through the same reader, mapper and repository as a live poll; its format
            (XML or JSON) is recognised from its content. --source is a configured source name or a
            provider name (\(ProviderRegistry.names.joined(separator: ", "))). A replay adds history: it clears
            nothing unless --complete says the file is a complete answer of its time. Exit 65 when the file is
            not a good answer, 66 when it cannot be read.
            """,
            options: [source, file, CommonOptions.config, CommonOptions.envFile, CommonOptions.database, complete, asOf, CommonOptions.timeZone,
                      dryRun, CommonOptions.logFormat, CommonOptions.logLevel, CommonOptions.verbose],
            run: { arguments in try await run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) async throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let sourceName = try arguments.required(source, "a source or provider name").nfc
        let filePath = try arguments.required(file, "the saved response")
        let logger = try arguments.logger(context)
        let zone = try arguments.timeZone()
        let now = context.clock.now()
        let givenObservedAt = try arguments.value(asOf) { try ValueParsers.instant($0, now: now, zone: zone) }
        // A response fetched after now would make every later poll of the source look older
        // than what it stored, so nothing would update or clear until then: even a minute.
        if let givenObservedAt, givenObservedAt > now {
            throw UsageError("--as-of \(givenObservedAt.rfc3339) is in the future: give the time the response was fetched (now is \(now.rfc3339))")
        }
        let configuration = try context.configurationFile(arguments) == nil ? nil
            : try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let definition: SourceDefinition
        if let configured = configuration?.sources.first(where: { $0.name == sourceName }) {
            definition = configured  // its options (a time zone, …) apply to the file too
        } else if ProviderRegistry.provider(named: sourceName) != nil {
            definition = SourceDefinition(name: sourceName, provider: sourceName)
        } else {
            let configured = configuration?.sources.map(\.name) ?? []
            throw UsageError("--source: '\(sourceName)' is neither a configured source\(configured.isEmpty ? "" : " (\(configured.joined(separator: ", ")))") nor a provider (\(ProviderRegistry.names.joined(separator: ", ")))")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: filePath, isDirectory: &isDirectory), !isDirectory.boolValue,
              FileManager.default.isReadableFile(atPath: filePath) else {
            throw InputFileMissing(path: filePath)
        }
        let observedAt = givenObservedAt ?? modificationTime(of: filePath).map { min($0, now) } ?? now
        let dryRun = arguments[dryRun]
        let path = try context.databasePath(arguments, configured: configuration?.database)
        try await SchedulerTool.withStore(path: path, context: context) { store in
            let feed = try ProviderRegistry.fileFeed(definition: definition, file: URL(fileURLWithPath: filePath),
                                                     complete: arguments[complete])
            let cause = FirstError()
            let describe = ErrorText.describer(origin: feed.origin)
            let ingest = IngestIncidents(store: store, clock: context.clock, host: context.host, describe: { error in
                cause.keep(error)
                return describe(error)
            })
            let began = ContinuousClock.now
            let run = await ingest(feed, observedAt: observedAt, dryRun: dryRun)
            SchedulerService.logRun(run, provider: definition.provider, dryRun: dryRun, seconds: (ContinuousClock.now - began).seconds,
                                    logger: logger)
            switch run.status {
            case .succeeded, .incomplete, .stale: return
            case .cancelled: throw IngestFailed(run: run, cause: CancellationError())
            case .failed, .skipped: throw IngestFailed(run: run, cause: cause.error)
            }
        }
    }

    /// The file's modification time, to the second.
    static func modificationTime(of path: String) -> UTCInstant? {
        guard let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date else { return nil }
        return UTCInstant(secondsSince1970: Int64(date.timeIntervalSince1970.rounded(.down)))
    }
}

/// Keeps the first error ``IngestIncidents`` describes, so that the command can choose its exit
/// status from the error's type rather than from its text.
final class FirstError: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    func keep(_ error: any Error) {
        first.withLock { if $0 == nil { $0 = error } }
    }

    var error: (any Error)? { first.withLock { $0 } }
}
