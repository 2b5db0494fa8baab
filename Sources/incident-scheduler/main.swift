import Foundation
import IncidentApp

let context = Context.live()
exit(await CommandLineTool.main(SchedulerTool.command(context), version: SchedulerTool.version,
                                arguments: Array(CommandLine.arguments.dropFirst())))
