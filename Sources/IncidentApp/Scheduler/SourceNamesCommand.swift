import Foundation
import IncidentCore

/// `incident-scheduler source-names`: the configured sources' names, one a line, for the shell
/// completions of `--source` (``Completions``). Hidden from `--help`; quiet on any error (a
/// completion must not print into the command line being typed).
enum SourceNamesCommand {
    static func command(_ context: Context) -> Command {
        Command(
            name: "source-names", abstract: "Print the configured source names, one a line (for shell completion).",
            options: [CommonOptions.config], hidden: true,
            run: { arguments in
                guard let configuration = try? SchedulerTool.loadConfiguration(arguments, context, requireKeys: false) else { return }
                context.output(configuration.sources.map { $0.name + "\n" }.joined())
            })
    }
}
