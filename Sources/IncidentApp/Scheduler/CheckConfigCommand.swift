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
            discussion: "Exit 0 when every source is valid and has the key its provider needs; 78 otherwise, with the reason.",
            options: [CommonOptions.config, CommonOptions.database],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        var rows = [["SOURCE", "PROVIDER", "URL", "KEY", "INTERVAL", "TIMEOUT", "RETRIES", "OPTIONS"]]
        var missing: [String] = []
        var problems: [String] = []
        for source in configuration.sources {
            // The provider says what a source needs: GITS and ITS a key, Open511 and WZDx a baseURL.
            var url = source.baseURL.map(Redaction.redact) ?? "(provider default)"
            do {
                if let built = try ProviderRegistry.provider(named: source.provider)?.router(for: source).asURLRequest().url {
                    url = Redaction.redact(built)
                }
            } catch let error as FeedError where error.kind == .missingKey {
                missing.append(source.name)
            } catch {
                problems.append(String(describing: error))
            }
            let key = source.key != nil ? "set (REDACTED)" : missing.last == source.name ? "MISSING" : "none"
            let options = ProviderRegistry.describeOptions(of: source)
            rows.append([source.name, source.provider, url, key,
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
        guard problems.isEmpty else { throw ConfigurationError(problems.joined(separator: "; ")) }
    }
}
