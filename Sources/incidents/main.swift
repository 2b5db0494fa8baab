import IncidentApp

let context = Context.live()
ProcessSignals.main {
    await CommandLineTool.main(QueryTool.command(context).addingDocumentationCommands(.query, output: context.output),
                               arguments: Array(CommandLine.arguments.dropFirst()), context: context, style: .plain)
}
