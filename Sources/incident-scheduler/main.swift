import IncidentApp

let context = Context.live()
ProcessSignals.main {
    await CommandLineTool.main(SchedulerTool.command(context).addingDocumentationCommands(.scheduler, output: context.output),
                               arguments: Array(CommandLine.arguments.dropFirst()), context: context, style: .log)
}
