import Foundation
import IncidentCore

/// `incident-scheduler watches`: each configured watch's position in the change feed as the
/// database keeps it, its lag, its last delivery, the host delivering it and its last error
/// (docs/analyst.md, "Watches").
enum WatchesCommand {
    static func command(_ context: Context) -> Command {
        Command(
            name: "watches",
            abstract: "Show each configured watch's position in the change feed, its lag and its last error.",
            discussion: """
            CURSOR is the last transition the watch delivered or passed over (0: none yet; -: not registered yet, which the
            next run does), LAG how far the change feed's last cursor is beyond it (transitions it wants and those it does
            not), DELIVERED when it last delivered one, BY the scheduler delivering it now (host and pid), LAST ERROR its last
            failed delivery and when. --format json writes the same as an array of objects, one per watch in the
            configuration's order: watch, cursor, lag, delivered_at, holder_host, holder_pid, last_error, last_error_at
            (null where the table shows -). Exit 78 when the configuration is invalid, 66 when the database does not
            exist yet.
            """,
            options: [CommonOptions.config, CommonOptions.envFile, CommonOptions.database, CommonOptions.tableOrJSON, CommonOptions.wide],
            run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let context = try context.loadingEnvironmentFile(arguments)
        let configuration = try SchedulerTool.loadConfiguration(arguments, context, requireKeys: false)
        let path = try context.databasePath(arguments, configured: configuration.database)
        let positions: [String: WatchPosition]
        let last: Int64
        do {
            guard let store = try Stores.openForReading(path, clock: context.clock) as? any ChangeFeedReader & WatchPositions else {
                throw QueryError("this store has no change feed")
            }
            positions = Dictionary(try store.watchPositions().map { ($0.watch, $0) }, uniquingKeysWith: { first, _ in first })
            last = try store.lastCursor()
        } catch let error as StoreMissing {
            throw error
        } catch {
            throw DatabaseFailure(database: path, cause: error)
        }
        let now = context.clock.now()
        let shown = configuration.watches.map { watch in
            let position = positions[watch.name]
            // The holder while its claim runs: the scheduler delivering the watch now.
            let holder = position?.expiresAt.map { $0 > now } == true ? position?.holder : nil
            return (name: watch.name, position: position, holder: holder)
        }
        if try arguments.value(CommonOptions.tableOrJSON) == .json {
            /// An integer, or null for a watch not registered yet.
            func integer(_ value: Int64?) -> FieldValue { value.map { .integer($0) } ?? .text(nil) }
            context.output(JSONText.array(shown.map { watch in
                IncidentOutput.object([
                    ("watch", .text(watch.name)), ("cursor", integer(watch.position?.cursor)),
                    ("lag", integer(watch.position.map { max(0, last - $0.cursor) })), ("delivered_at", .instant(watch.position?.deliveredAt)),
                    ("holder_host", .text(watch.holder?.host)), ("holder_pid", integer(watch.holder.map { Int64($0.pid) })),
                    ("last_error", .text(watch.position?.lastError)), ("last_error_at", .instant(watch.position?.lastErrorAt)),
                ])
            }))
            return
        }
        var rows = [["WATCH", "CURSOR", "LAG", "DELIVERED", "BY", "LAST ERROR"]]
        for watch in shown {
            guard let position = watch.position else {
                rows.append([watch.name, "-", "-", "-", "-", "-"])
                continue
            }
            rows.append([watch.name, String(position.cursor), String(max(0, last - position.cursor)), position.deliveredAt?.rfc3339 ?? "-",
                         watch.holder?.description ?? "-", position.lastError.map { "\($0) at \(position.lastErrorAt?.rfc3339 ?? "?")" } ?? "-"])
        }
        context.output(TextTable.render(rows, maxWidth: Terminal.width(context.environment, wide: arguments[CommonOptions.wide]),
                                        flexible: [5], droppable: [4, 3]))
    }
}
