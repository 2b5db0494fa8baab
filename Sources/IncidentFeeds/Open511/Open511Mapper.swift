import IncidentCore

/// Maps an ``Open511Event`` to an ``Incident``, or sets it aside with the reason.
///
/// | Incident | from |
/// | --- | --- |
/// | `externalID` | `id` (`511.org/1045578`) |
/// | `category`, `providerCategory` | `event_type`, `event_subtypes` (``Open511Categories``) |
/// | `description` | the headlines (unless a headline is only the event type, as DriveBC's `CONSTRUCTION`), the descriptions, `detour: …` lines, then one line of the event's `+` members (`+source_type=CHP; +source_id=…`) |
/// | `road` | `roads[].name`, joined by `; ` |
/// | `location` | each road's `from → to`, joined by `; `, then the `areas[].name` in parentheses |
/// | `direction` | `roads[].direction`, joined by `; ` |
/// | `restriction` | each road's `state`, `lanes_closed=N`, `lanes_open=N` and `+` members (`SOME_LANES_CLOSED; +lane_type=Lane`) |
/// | `coordinate`, `geometry` | `geography` |
/// | `startedAt` | the schedule's start (``Open511Schedule``), else `created` |
/// | `expectedEndAt` | the schedule's end (nil when open-ended) |
/// | `endedAt` | nil while `ACTIVE`; for `ARCHIVED`: the schedule's end, or `updated` when that is earlier (an event archived before its planned end ended then), else whichever is known, else `startedAt` |
///
/// With several roads, each road's location and restriction are prefixed with its name.
/// `severity`, `created`/`updated` (besides the uses above) and the `+` members inside areas
/// have no column: they wait for a later `details` field.
///
/// Set aside (``RejectedRecord``): an event with problems from reading (duplicate keys, wrong
/// types, a bad geography), without an `id` (then with no external id: the poll cannot clear),
/// with an unreadable time, or `ARCHIVED` with no time at all to date its end.
enum Open511Mapper {
    static func record(_ event: Open511Event, source: String, zone: ProviderZone) -> FeedRecord {
        do throws(RecordProblem) {
            return .incident(try incident(from: event, source: source, zone: zone))
        } catch {
            return .rejected(RejectedRecord(
                externalID: event.id, position: event.position, reason: error.text,
                fields: [("id", event.id), ("status", event.status), ("event_type", event.eventType),
                         ("created", event.created), ("updated", event.updated),
                         ("schedule", schedule(event)),
                         ("headline", event.headlines.first)]))
        }
    }

    /// The schedule as sent, for an excerpt: `2023-05-31T13:17Z/, 2023-06-05…2023-07-28`.
    static func schedule(_ event: Open511Event) -> String? {
        joined(event.intervals + event.recurringSchedules.map { "\($0.startDate ?? "")…\($0.endDate ?? "")" }, ", ")
    }

    static func incident(from event: Open511Event, source: String, zone defaultZone: ProviderZone) throws(RecordProblem) -> Incident {
        guard event.problems.isEmpty else { throw RecordProblem(text: event.problems.joined(separator: "; ")) }
        guard let id = event.id else { throw RecordProblem(text: "the event has no id") }
        let zone = event.timezone.flatMap(ProviderZone.init(identifier:)) ?? defaultZone
        func instant(_ text: String?, _ name: String) throws(RecordProblem) -> UTCInstant? {
            guard let text else { return nil }
            guard let value = UTCInstant(iso8601: text, utcOffsetSeconds: 0) else {
                throw RecordProblem(text: "\(name) '\(text)' is not an ISO 8601 time")
            }
            return value
        }
        let created = try instant(event.created, "created")
        let updated = try instant(event.updated, "updated")
        let schedule = try Open511Schedule(intervals: event.intervals, recurring: event.recurringSchedules, zone: zone)
        let (category, providerCategory) = Open511Categories.classify(eventType: event.eventType, subtypes: event.eventSubtypes)

        var incident = Incident(source: source, externalID: id, category: category, providerCategory: providerCategory)
        incident.description = description(of: event)
        let roads = event.roads
        let named = roads.count > 1
        func prefixed(_ road: Open511Event.Road, _ text: String?) -> String? {
            guard let text else { return nil }
            return named && road.name != nil ? "\(road.name ?? ""): \(text)" : text
        }
        incident.road = joined(unique(roads.compactMap(\.name)), "; ")
        let places = joined(roads.compactMap { road in prefixed(road, place(road)) }, "; ")
        let areas = joined(event.areas, ", ")
        incident.location = switch (places, areas) {
        case let (places?, areas?): "\(places) (\(areas))"
        case (let places, let areas): places ?? areas
        }
        incident.direction = joined(unique(roads.compactMap(\.direction)), "; ")
        incident.restriction = joined(roads.compactMap { road in prefixed(road, restriction(road)) }, " | ")
        incident.setGeometry(event.geography)
        incident.startedAt = schedule.start ?? created
        incident.expectedEndAt = schedule.end
        if event.status?.uppercased() == "ARCHIVED" {
            let ended: UTCInstant? = switch (schedule.end, updated) {
            case let (end?, updated?): min(end, updated)
            case let (end, updated): end ?? updated ?? incident.startedAt
            }
            guard let ended else { throw RecordProblem(text: "the event is ARCHIVED but has no schedule, created or updated time to date its end") }
            incident.endedAt = ended
        }
        return incident
    }

    static func description(of event: Open511Event) -> String? {
        var lines = event.headlines.filter { headline in
            event.eventType.map { Open511Categories.key(headline) != Open511Categories.key($0) } ?? true
        }
        lines += event.descriptions.filter { !lines.contains($0) }
        lines += event.detours.map { "detour: \($0)" }
        if !event.extensions.isEmpty {
            lines.append(event.extensions.map(\.description).joined(separator: "; "))
        }
        return joined(lines, "\n")
    }

    /// `from → to`, `from`, or `→ to`.
    static func place(_ road: Open511Event.Road) -> String? {
        switch (road.from, road.to) {
        case let (from?, to?): "\(from) → \(to)"
        case (let from?, nil): from
        case (nil, let to?): "→ \(to)"
        case (nil, nil): nil
        }
    }

    static func restriction(_ road: Open511Event.Road) -> String? {
        var parts: [String] = []
        if let state = road.state { parts.append(state) }
        if let closed = road.lanesClosed { parts.append("lanes_closed=\(closed)") }
        if let open = road.lanesOpen { parts.append("lanes_open=\(open)") }
        parts += road.extensions.map(\.description)
        return joined(parts, "; ")
    }

    static func joined(_ parts: [String], _ separator: String) -> String? {
        parts.isEmpty ? nil : parts.joined(separator: separator)
    }

    static func unique(_ values: [String]) -> [String] {
        var seen: Set<String> = []
        return values.filter { seen.insert($0).inserted }
    }
}
