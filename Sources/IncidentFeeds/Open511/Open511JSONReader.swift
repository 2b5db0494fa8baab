import Foundation
import IncidentCore
import IncidentJSON

/// Reads Open511 JSON (open511.org, API v1): `{"events": [...], "pagination": {"offset",
/// "next_url"}, "meta": {...}}`, streaming, one event at a time.
///
/// Also accepted: one event wrapped as `{"event": {...}}`, which is how applications keep a
/// single event (DriveBC's event saved by a client app). It is not an Open511 list, so it
/// cannot say which other events are active: its event is stored, and the response is
/// incomplete (nothing is cleared).
///
/// A JSON document with neither `events` nor `event` is not an Open511 answer and is refused
/// (never read as "no events").
public enum Open511JSONReader {
    /// Record paths: `events[*]`, then the application wrapper's `event`.
    static let schema = JSONRecordSchema(recordPaths: [["events", "*"], ["event"]], envelopePaths: [], wrapperKey: nil)
    /// Where pagination says what comes next; read by ``Open511Provider/nextPage(after:contentType:requestURL:)``.
    static let paginationSchema = JSONRecordSchema(recordPaths: [], envelopePaths: [["pagination", "next_url"]], wrapperKey: nil)

    /// The events of a response: complete when it holds an `events` list; an application's
    /// single wrapped event is read but cannot clear; a document with neither is refused.
    static let format = JSONFeedFormat(
        provider: Open511Provider.name, schema: schema, successField: "events list", dto: event(from:),
        inspect: { _, _ in },
        inspectRecordLists: { summary, tally in
            let found = summary.recordPathsFound
            // Open511 `events` is an array; null, {} or "" says nothing about which events are active.
            if found[0] > 0 && summary.recordListsAsArrays[0] == 0 {
                throw FeedError(.unexpectedResponse, provider: Open511Provider.name,
                                message: "the JSON document's events is not a list, so it cannot say there are no events; nothing was stored or cleared")
            }
            switch (found[0] > 0, found[1] > 0) {
            case (true, false):
                tally.confirmedSuccess = true
            case (true, true):
                tally.confirmedSuccess = true
                tally.incompleteBecause.append("the document holds both an events list and a single event")
            case (false, true):
                tally.confirmedSuccess = true
                tally.incompleteBecause.append("the document is one event wrapped as {\"event\": …} by an application, not an Open511 events list, so it cannot say which other events are active")
            case (false, false):
                throw FeedError(.unexpectedResponse, provider: Open511Provider.name,
                                message: "the JSON document has no events list, so it is not an Open511 answer and cannot say there are no events; check the base URL and the key")
            }
        })

    /// The `pagination.next_url` of a page: nil when absent, `null` or empty (the last page).
    /// - Throws: ``FeedError`` `unexpectedResponse` when it is not a text.
    static func nextURL(in file: URL) throws -> String? {
        let summary: JSONDocumentSummary
        do {
            summary = try JSONRecordReader(schema: paginationSchema) { _, _ in }.parse(contentsOf: file)
        } catch {
            return nil  // reading the page fails with the real cause
        }
        guard let value = summary.envelope[0], !value.isNull else { return nil }
        guard let text = value.string else {
            throw FeedError(.unexpectedResponse, provider: Open511Provider.name,
                            message: "pagination.next_url is \(value.kindName), not a URL; nothing was stored")
        }
        return text.nonEmptyTrimmed
    }

    /// The event as sent, from one record of ``schema``.
    static func event(from record: JSONRecord) -> Open511Event {
        var event = Open511Event(position: record.pathIndex == 0 ? "events[\(record.position - 1)]" : "event")
        event.problems = record.problems
        let value = record.value
        guard value.object != nil else {
            event.problems.append("the event is \(value.kindName), not an object")
            return event
        }
        do throws(RecordProblem) {
            try read(value, into: &event)
        } catch {
            event.problems.append(error.text)
        }
        return event
    }

    private static func read(_ value: JSONValue, into event: inout Open511Event) throws(RecordProblem) {
        event.id = try value.text("id", in: "")
        event.status = try value.text("status", in: "")
        event.headlines = try value.text("headline", in: "").map { [$0] } ?? []
        event.descriptions = try value.text("description", in: "").map { [$0] } ?? []
        event.eventType = try value.text("event_type", in: "")
        event.eventSubtypes = try value.texts("event_subtypes", in: "")
        event.severity = try value.text("severity", in: "")
        event.created = try value.text("created", in: "")
        event.updated = try value.text("updated", in: "")
        event.timezone = try value.text("timezone", in: "")
        event.detours = try value.texts("detour", in: "")
        if let schedule = value["schedule"], !schedule.isNull {
            guard schedule.object != nil else { throw RecordProblem(text: "schedule is \(schedule.kindName), not an object") }
            event.intervals = try schedule.texts("intervals", in: "schedule.")
            for (index, item) in try schedule.objects("recurring_schedules", in: "schedule.").enumerated() {
                let place = "schedule.recurring_schedules[\(index)]."
                event.recurringSchedules.append(Open511Event.RecurringSchedule(
                    startDate: try item.text("start_date", in: place), endDate: try item.text("end_date", in: place),
                    dailyStartTime: try item.text("daily_start_time", in: place), dailyEndTime: try item.text("daily_end_time", in: place),
                    days: try item.texts("days", in: place)))
            }
        }
        for (index, road) in try value.objects("roads", in: "").enumerated() {
            let place = "roads[\(index)]."
            event.roads.append(Open511Event.Road(
                name: try road.text("name", in: place), from: try road.text("from", in: place), to: try road.text("to", in: place),
                direction: try road.text("direction", in: place), state: try road.text("state", in: place),
                lanesClosed: try road.text("lanes_closed", in: place), lanesOpen: try road.text("lanes_open", in: place),
                extensions: extensions(of: road)))
        }
        for (index, area) in try value.objects("areas", in: "").enumerated() {
            if let name = try area.text("name", in: "areas[\(index)].") { event.areas.append(name) }
        }
        if let geography = value["geography"], !geography.isNull {
            do throws(RecordProblem) {
                event.geography = try Geometry(geoJSON: geography)
            } catch {
                throw RecordProblem(text: "geography: \(error.text)")
            }
        }
        event.extensions = extensions(of: value)
    }

    /// The `+` members of an object, in document order.
    static func extensions(of value: JSONValue) -> [Open511Event.Extension] {
        (value.object ?? []).compactMap { member in
            guard member.key.hasPrefix("+"), let text = member.value.displayText else { return nil }
            return Open511Event.Extension(member.key, text)
        }
    }
}
