import IncidentApp

let context = Context.live()
ProcessSignals.main {
    await CommandLineTool.main(SchedulerTool.command(context), version: SchedulerTool.version,
                               arguments: Array(CommandLine.arguments.dropFirst()), context: context, style: .log)
}
