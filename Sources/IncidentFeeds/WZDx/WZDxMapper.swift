import IncidentCore

/// WZDx event types and vehicle impacts in the product's categories.
///
/// Source: the WZDx specification's enumerations `EventType` (`work-zone`: construction,
/// maintenance or utility work; `detour`: a temporary rerouting around a work zone) and
/// `VehicleImpact` (`all-lanes-closed`, `some-lanes-closed`, `all-lanes-open`,
/// `alternating-one-way`, `…-merge-left/right`, `…-shift-left/right`, `some-lanes-closed-split`,
/// `flagging`, `temporary-traffic-signal`, `unknown`), spec-content/enumerated-types.
///
/// Rule: `all-lanes-closed` is a closure whatever the event type; otherwise `work-zone` and
/// `detour` are roadwork (2.0 features, which have no event type, are work zones), and any
/// other type (4.x `restriction` of a road-restriction feed) is `other`. The provider category
/// keeps both as sent: `work-zone/some-lanes-closed`.
enum WZDxCategories {
    static let eventTypes: [String: IncidentCategory] = [
        "work-zone": .roadwork,
        "detour": .roadwork,
    ]

    static let vehicleImpacts: [String: IncidentCategory] = [
        "all-lanes-closed": .closure,
    ]

    static func classify(eventType: String?, vehicleImpact: String?) -> (IncidentCategory, String?) {
        let category = vehicleImpact.flatMap { vehicleImpacts[$0] } ?? eventTypes[eventType ?? "work-zone"] ?? .other
        let label = [eventType, vehicleImpact].compactMap { $0 }.joined(separator: "/")
        return (category, label.isEmpty ? nil : label)
    }
}

/// Maps a ``WZDxRoadEvent`` to an ``Incident``, or sets it aside with the reason.
///
/// | Incident | from |
/// | --- | --- |
/// | `externalID` | the feature's `id` (2.0/3.0: `road_event_id`) |
/// | `category`, `providerCategory` | `event_type`, `vehicle_impact` (``WZDxCategories``) |
/// | `description` | `core_details.description` |
/// | `road` | `road_names[]` joined by `; ` (2.0/3.0: `road_name`, and `road_number` when it differs) |
/// | `direction` | `direction` |
/// | `location` | `beginning_cross_street → ending_cross_street`, then `milepost A → B` |
/// | `restriction` | `vehicle_impact`, then `lanes: 1 general open, 2 general closed`, the `restrictions[]` (`reduced-width 16 feet`; 2.0/3.x: `no-trucks`) and `speed limit 88.5 km/h` (2.0/3.x: `speed limit 30`, the unit not being stated) |
/// | `coordinate`, `geometry` | `geometry` (LineString, MultiPoint: its first point is the start) |
/// | `startedAt` | `start_date` |
/// | `expectedEndAt` | `end_date` |
/// | `endedAt` | `end_date` when `is_end_date_verified` is true (2.0/3.x: `end_date_accuracy` `verified`): the publisher vouches for it; 2.0/3.x `event_status` `completed`: `end_date`, else the event's `update_date`; `cancelled`: the event's `update_date` (when it was called off), else `end_date`; either without those times: `start_date` |
///
/// Instants are RFC 3339 as the specification requires; one without a zone is read as UTC.
/// `data_source_id`, `types_of_work`, `work_zone_type`, worker presence and the start-date
/// verification flag have no column: they wait for a later `details` field.
///
/// Set aside: a feature with problems (duplicate keys, wrong types, a bad geometry, larger
/// than the per-record limit), without an id (then with no external id: the poll cannot
/// clear), with an unreadable date, or `completed`/`cancelled` with no time at all.
enum WZDxMapper {
    static func record(_ event: WZDxRoadEvent, source: String) -> FeedRecord {
        do throws(RecordProblem) {
            return .incident(try incident(from: event, source: source))
        } catch {
            return .rejected(RejectedRecord(
                externalID: event.id, position: event.position, reason: error.text,
                fields: [("id", event.id), ("event_type", event.eventType), ("start_date", event.startDate),
                         ("end_date", event.endDate), ("road_names", event.roadNames.joined(separator: ", ")),
                         ("description", event.description)]))
        }
    }

    static func incident(from event: WZDxRoadEvent, source: String) throws(RecordProblem) -> Incident {
        guard event.problems.isEmpty else { throw RecordProblem(text: event.problems.joined(separator: "; ")) }
        guard let id = event.id else { throw RecordProblem(text: "the feature has no id") }
        func instant(_ text: String?, _ name: String) throws(RecordProblem) -> UTCInstant? {
            guard let text else { return nil }
            guard let value = UTCInstant(iso8601: text, utcOffsetSeconds: 0) else {
                throw RecordProblem(text: "\(name) '\(text)' is not an RFC 3339 time")
            }
            return value
        }
        let (category, providerCategory) = WZDxCategories.classify(eventType: event.eventType, vehicleImpact: event.vehicleImpact)
        var incident = Incident(source: source, externalID: id, category: category, providerCategory: providerCategory,
                                description: event.description, direction: event.direction)
        incident.road = event.roadNames.isEmpty ? nil : event.roadNames.joined(separator: "; ")
        incident.location = location(event)
        incident.restriction = restriction(event)
        incident.setGeometry(event.geometry)
        incident.startedAt = try instant(event.startDate, "start_date")
        incident.expectedEndAt = try instant(event.endDate, "end_date")
        if event.isEndDateVerified == true { incident.endedAt = incident.expectedEndAt }
        switch event.eventStatus?.lowercased() {
        case "completed"?, "cancelled"?:
            let updated = try instant(event.updateDate, "update_date")
            let ended = event.eventStatus?.lowercased() == "completed"
                ? incident.expectedEndAt ?? updated : updated ?? incident.expectedEndAt
            guard let end = ended ?? incident.startedAt else {
                throw RecordProblem(text: "the event is \(event.eventStatus ?? "") but has no end_date, update_date or start_date to date its end")
            }
            incident.endedAt = end
        default:
            break
        }
        return incident
    }

    static func location(_ event: WZDxRoadEvent) -> String? {
        func span(_ from: String?, _ to: String?, _ prefix: String = "") -> String? {
            switch (from, to) {
            case let (from?, to?): "\(prefix)\(from) → \(to)"
            case (let from?, nil): "\(prefix)\(from)"
            case (nil, let to?): "\(prefix)→ \(to)"
            case (nil, nil): nil
            }
        }
        let parts = [span(event.beginningCrossStreet, event.endingCrossStreet),
                     span(event.beginningMilepost, event.endingMilepost, "milepost ")].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    static func restriction(_ event: WZDxRoadEvent) -> String? {
        var parts: [String] = []
        if let impact = event.vehicleImpact { parts.append(impact) }
        if !event.lanes.isEmpty {
            parts.append("lanes: " + event.lanes.map { [$0.order, $0.type, $0.status].compactMap { $0 }.joined(separator: " ") }
                .joined(separator: ", "))
        }
        parts += event.restrictions
        if let speed = event.reducedSpeedLimitKPH { parts.append("speed limit \(speed) km/h") }
        if let speed = event.reducedSpeedLimit { parts.append("speed limit \(speed)") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
