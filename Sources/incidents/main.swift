import IncidentApp

let context = Context.live()
ProcessSignals.main {
    await CommandLineTool.main(QueryTool.command(context), version: QueryTool.version,
                               arguments: Array(CommandLine.arguments.dropFirst()), context: context, style: .plain)
}
