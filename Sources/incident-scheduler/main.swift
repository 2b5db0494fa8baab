import Foundation
import IncidentApp

let context = Context.live()
let status = await ProcessSignals.runCancellable {
    await CommandLineTool.main(SchedulerTool.command(context), version: SchedulerTool.version,
                               arguments: Array(CommandLine.arguments.dropFirst()))
}
exit(status)
