import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// `incident-scheduler check-config`: validate the configuration and show each source as it
/// will run.
enum CheckConfigCommand {
    static func command(_ context: Context) -> Command {
        Command(
            name: "check-config",
            abstract: "Validate the configuration and show each source as it will run (keys redacted).",
            discussion: "Exit 0 when every source is valid and has its key; 78 otherwise, with the reason.",
            options: [CommonOptions.config, CommonOptions.database],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        var rows = [["SOURCE", "PROVIDER", "URL", "KEY", "INTERVAL", "TIMEOUT", "RETRIES", "OPTIONS"]]
        var missing: [String] = []
        for source in configuration.sources {
            let url = (try? ProviderRegistry.provider(named: source.provider)?.router(for: source).asURLRequest().url)
                .flatMap { $0 }.map(Redaction.redact) ?? (source.baseURL.map(Redaction.redact) ?? "(provider default)")
            if source.key == nil { missing.append(source.name) }
            let options = ProviderRegistry.describeOptions(of: source)
            rows.append([source.name, source.provider, url, source.key == nil ? "MISSING" : "set (REDACTED)",
                         ValueParsers.durationText(source.intervalSeconds), "\(Int(source.requestTimeoutSeconds))s",
                         String(source.retryPolicy.maxRetries), options.isEmpty ? "-" : options.joined(separator: " ")])
        }
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment), flexible: [2, 7]))
        context.output("database: \(try context.databasePath(arguments, configured: configuration.database))\n")
        context.output("deadline: \(ValueParsers.durationText(configuration.deadlineSeconds)); retention: "
                       + (configuration.retentionSeconds.map(ValueParsers.durationText) ?? "keep everything")
                       + "; concurrency: \(configuration.concurrency)\n")
        guard missing.isEmpty else {
            throw ConfigurationError("no API key for \(missing.joined(separator: ", ")): set the keyEnv variable or keyFile")
        }
    }
}
