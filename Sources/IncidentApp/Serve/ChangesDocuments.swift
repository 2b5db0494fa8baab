import Foundation
import IncidentCore
import IncidentHTTP
import IncidentJSON

/// `/changes`: the change feed of `incidents changes` (docs/analyst.md, "History and changes") over
/// HTTP. `GET /changes?after=CURSOR&limit=N` answers one page as JSON (`f=ndjson`: one object
/// per line), each change as `incidents changes` prints it, with the cursor to pass next; with
/// `Accept: text/event-stream` it is a server-sent-event stream (WHATWG HTML §9.2) that sends
/// each change as it commits, its cursor as the event's `id`, so a browser's `EventSource`
/// that reconnects (`Last-Event-ID`) resumes without a gap or a repeat. A stream ends at the
/// server's request time limit; `EventSource` then reconnects by itself.
enum ChangesDocuments {
    /// The largest page of `/changes`, and the default.
    static let maxLimit = 1000, defaultLimit = 100
    /// How often a stream looks for new changes, and sends a comment when there are none
    /// (so a proxy keeps it open and a closed client is noticed), in seconds.
    static let pollSeconds = 1.0, keepAliveSeconds = 15.0

    struct Parameters {
        var after: Int64 = 0
        var limit = defaultLimit
        var ndjson = false
    }

    /// `after` (a cursor, 0 or more), `limit` (1 or more, cut to ``maxLimit``), and the
    /// negotiated `format` (json or ndjson); a stream's `Last-Event-ID` header stands for `after`.
    static func parameters(_ request: HTTPRequest, format: OGC.Format) throws -> Parameters {
        var parameters = Parameters()
        try StatusDocuments.eachParameter(request.query, known: ["after", "limit"]) { name, value in
            let text = value ?? ""
            switch name {
            case "after":
                guard text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let cursor = Int64(text) else {
                    throw UsageError("parameter after: '\(ServerFilters.shown(text))' is not a cursor (a whole number, 0 or more)")
                }
                parameters.after = cursor
            default:
                parameters.limit = try ServerFilters.pageSize("limit", text, maximum: maxLimit)
            }
        }
        parameters.ndjson = format == .ndjson
        // An EventSource reconnects to the URL it was given (with its `after`) and says in
        // Last-Event-ID what it received last: that wins, or the stream would repeat from `after`.
        if let last = request.header("Last-Event-ID") {
            guard let cursor = Int64(last), cursor >= 0 else { throw UsageError("Last-Event-ID: '\(ServerFilters.shown(last))' is not a cursor") }
            parameters.after = cursor
        }
        return parameters
    }

    /// Whether the client asked for a server-sent-event stream: `Accept` names
    /// `text/event-stream` itself (not through `*/*`) with a quality above 0.
    static func wantsStream(_ request: HTTPRequest) -> Bool {
        OGC.MediaRange.parse(request.header("Accept") ?? "").contains { $0.type == "text" && $0.subtype == "event-stream" && $0.quality > 0 }
    }

    /// One page after `parameters.after`: `{"changes": [...], "cursor": LAST, "links": [next]}`,
    /// `cursor` being `after` itself when nothing is newer.
    static func page(_ parameters: Parameters, base: String, now: UTCInstant, _ readers: ServerReaders) throws -> HTTPResponse {
        let changes = try read(after: parameters.after, limit: parameters.limit, checked: true, readers)
        let cursor = changes.last?.transition.cursor ?? parameters.after
        if parameters.ndjson {
            return HTTPResponse(status: 200, contentType: "application/x-ndjson",
                                text: changes.map { ChangesCommand.json($0, now: now) + "\n" }.joined(), route: "")
        }
        let next = base + "/changes?after=\(cursor)&limit=\(parameters.limit)"
        return StatusDocuments.json("{\"changes\": [" + changes.map { ChangesCommand.json($0, now: now) }.joined(separator: ", ")
            + "], \"cursor\": \(cursor), \"links\": [{\"rel\": \"next\", \"type\": \"application/json\", \"href\": \(JSONString.quoted(next))}]}\n")
    }

    /// The stream: every change after `parameters.after`, then each new one as it commits.
    /// - Throws: a 400 for a cursor past the log's last (before the stream begins).
    static func stream(_ parameters: Parameters, clock: UTCClock, _ readers: ServerReaders) throws -> HTTPResponse {
        _ = try read(after: parameters.after, limit: 0, checked: true, readers)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store")],
                     body: .stream { writer in
            var cursor = parameters.after
            var quiet = 0.0
            // Ends when the client goes, the server stops or the request's time runs out (a write throws).
            while true {
                let changes = try read(after: cursor, limit: maxLimit, readers)
                for change in changes {
                    try writer.write("id: \(change.transition.cursor)\nevent: change\ndata: \(ChangesCommand.json(change, now: clock.now()))\n\n")
                }
                cursor = changes.last?.transition.cursor ?? cursor
                if changes.count == maxLimit { continue }
                if changes.isEmpty, quiet >= keepAliveSeconds {
                    try writer.write(": no change\n\n")
                    quiet = 0
                }
                quiet = changes.isEmpty ? quiet + pollSeconds : 0
                Thread.sleep(forTimeInterval: pollSeconds)
            }
        }, route: "")
    }

    /// The changes after `cursor`; `checked`: first refuse a cursor past the log's last (a 400).
    private static func read(after cursor: Int64, limit: Int, checked: Bool = false, _ readers: ServerReaders) throws -> [IncidentChange] {
        try readers.withReader { reader in
            guard let feed = reader as? any ChangeFeedReader else { throw Problem(501, "this store keeps no change feed") }
            if checked { try feed.checkCursor(cursor) }
            return limit == 0 ? [] : try feed.changes(after: cursor, limit: limit)
        }
    }
}
