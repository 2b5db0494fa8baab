import Foundation
import IncidentCore
import IncidentFeeds
import IncidentNetworking

/// `incident-scheduler check-config`: validate the configuration and show each source as it
/// will run.
enum CheckConfigCommand {
    static let serviceUser = ValueOption<String>(
        "service-user", placeholder: "user",
        help: "As root: also check that this user can read the configuration, the --env-file and every keyFile, as the service will (root reads every file); each file it cannot read is an error.",
        default: "trafficincidents, when that user exists")

    static func command(_ context: Context) -> Command {
        Command(
            name: "check-config",
            abstract: "Validate the configuration and show each source as it will run (keys redacted).",
            discussion: """
            Exit 0 when every source is valid and has the key its provider needs; 78 otherwise, naming each problem exactly as `run`
            would (a key variable unset or empty, a key file missing, unreadable, empty, or holding more than one word). Run as root,
            it also checks that the service's user (--service-user, default trafficincidents when that user exists) can read the
            configuration, the --env-file and every keyFile, as root always can.
            """,
            options: [CommonOptions.config, CommonOptions.envFile, CommonOptions.database, serviceUser, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let problems = Dictionary(configuration.keyProblems.map { ($0.source, $0) }, uniquingKeysWith: { first, _ in first })
        var rows = [["SOURCE", "KEY", "URL", "INTERVAL", "TIMEOUT", "RETRIES", "PROVIDER", "OPTIONS"]]
        var routerProblems: [String] = []
        var warnings: [String] = []
        for source in configuration.sources {
            // The provider says what else a source needs (Open511 and WZDx: a baseURL).
            var url = source.baseURL.map(Redaction.redact) ?? "(provider default)"
            do {
                if let built = try ProviderRegistry.provider(named: source.provider)?.router(for: source).asURLRequest().url {
                    url = Redaction.redact(built)
                    if let repeated = EndpointRouter.repeatedSegment(in: built) {
                        warnings.append("\(source.name): the request path repeats '\(repeated)' (\(Redaction.redact(built))); give `baseURL` "
                                        + "as the provider's endpoint or its base, once")
                    }
                    if let file = EndpointRouter.segmentBelowFile(in: built) {
                        warnings.append("\(source.name): the request path continues below '\(file)' (\(Redaction.redact(built))), which "
                                        + "names a file; give `baseURL` as the provider's endpoint or its base (a recorded file is read with "
                                        + "`incident-scheduler ingest --file`)")
                    }
                }
            } catch let error as FeedError where error.kind == .missingKey && problems[source.name] != nil {
                // Named with the exact reason in keyProblems.
            } catch {
                routerProblems.append(String(describing: error))
            }
            let state = configuration.keyState(of: source)
            let key = state == "set" ? "set (REDACTED)" : state
            let options = ProviderRegistry.describeOptions(of: source)
            rows.append([source.name, key, url,
                         ValueParsers.durationText(source.intervalSeconds), "\(Int(source.requestTimeoutSeconds))s",
                         String(source.retryPolicy.maxRetries), source.provider, options.isEmpty ? "-" : options.joined(separator: " ")])
        }
        // On a narrow terminal OPTIONS is cut, then OPTIONS, PROVIDER, RETRIES, TIMEOUT and INTERVAL are left out
        // before the URL is cut; SOURCE and KEY are never cut.
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                        flexible: [7], droppable: [7, 6, 5, 4, 3]))
        context.output("database: \(try context.databasePath(arguments, configured: configuration.database))\n")
        context.output("deadline: \(ValueParsers.durationText(configuration.deadlineSeconds)); retention: "
                       + (configuration.retentionSeconds.map(ValueParsers.durationText) ?? "keep everything")
                       + "; concurrency: \(configuration.concurrency)\n")
        for watch in configuration.watches {
            let kinds = TransitionKind.allCases.filter(watch.kinds.contains).map(\.rawValue).joined(separator: ",")
            let signing: String
            switch watch.target {
            case .webhook: signing = watch.secret.isEmpty ? "SECRET MISSING" : "signed"
            case .command: signing = watch.secret.isEmpty ? "command" : "command, signed"
            }
            context.output("watch \(watch.name): \(kinds) to \(watch.targetDescription) (\(signing))\n")
            // Not an error: hosts sharing a PostgreSQL database may each configure other sources.
            let configured = Set(configuration.sources.map(\.name))
            let named = watch.query.sources.filter { !configured.contains($0) }
            if !named.isEmpty {
                warnings.append("watch \(watch.name): no source of this file is named \(named.map { "'\($0)'" }.joined(separator: ", ")) "
                                + "(sources: \(configuration.sources.map(\.name).joined(separator: ", "))); it delivers only what "
                                + "another host sharing the database polls under that name")
            }
        }
        // Warnings do not change the exit status: the configuration is valid, but probably not meant.
        context.output(warnings.map { "warning: \($0)\n" }.joined())
        // As root, what the service's user cannot read (it would stop with 78 where root passed).
        let named = try arguments.value(serviceUser)
        if let named, getpwnam(named) == nil { throw UsageError("--service-user: there is no user named '\(named)'") }
        let user = named ?? "trafficincidents"
        var files = try context.configurationFile(arguments).map { [$0] + (try Configuration.keyFiles(in: $0)) } ?? []
        if let envFile = try arguments.value(CommonOptions.envFile) { files.append(envFile) }
        if let unreadable = ServiceUserCheck.unreadable(files, by: user), !unreadable.isEmpty {
            throw ConfigurationError("the service's user \(user) cannot read " + unreadable.joined(separator: "; ")
                                     + "; make each readable by its group trafficincidents (mode 0640), or check as that user: sudo -u \(user) incident-scheduler check-config …")
        }
        guard configuration.keyProblems.isEmpty else {
            // The very messages `run` stops with, one per source.
            throw ConfigurationError((configuration.keyProblems.map(\.error) + configuration.secretProblems).map(\.message).joined(separator: "; "))
        }
        guard configuration.secretProblems.isEmpty else { throw ConfigurationError(configuration.secretProblems.map(\.message).joined(separator: "; ")) }
        guard routerProblems.isEmpty else { throw ConfigurationError(routerProblems.joined(separator: "; ")) }
    }
}
