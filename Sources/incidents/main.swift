import Foundation
import IncidentApp

let context = Context.live()
exit(await CommandLineTool.main(QueryTool.command(context), version: QueryTool.version,
                                arguments: Array(CommandLine.arguments.dropFirst())))
