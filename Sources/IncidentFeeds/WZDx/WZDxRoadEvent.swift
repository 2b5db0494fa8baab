import IncidentCore
import IncidentJSON

/// One WZDx road event feature as the feed sent it, before mapping: texts as written (numbers
/// as written), the geometry read.
///
/// Three shapes (USDOT WZDx specification, github.com/usdot-jpo-ode/wzdx, schemas/2.0, 3.0,
/// 3.1 and 4.x):
/// - 4.x: the feature's `id`, `properties.core_details` (`event_type`, `data_source_id`,
///   `road_names[]`, `direction`, `description`), `start_date`/`end_date` with
///   `is_start_date_verified`/`is_end_date_verified`, `vehicle_impact`, `lanes[]` (`order`,
///   `type`, `status`), `restrictions[]` (objects: `type`, `value`, `unit`),
///   `reduced_speed_limit_kph`, cross streets and mileposts.
/// - 3.1: flat `properties` with the feature's `id` (`road_event_id` deprecated),
///   `road_names[]` (`road_name`/`road_number` deprecated), `event_type`, `event_status`
///   (`planned`, `pending`, `active`, `completed`, `cancelled`), `lanes[]` (`order`, `type`,
///   `status`), `restrictions[]` as strings (`no-trucks`), `reduced_speed_limit` (no unit
///   stated) and `start_date_accuracy`/`end_date_accuracy` (`verified`, `estimated`).
/// - 3.0 and 2.0: as 3.1 with `properties.road_event_id`, `road_name` and `road_number`; 2.0's
///   lanes are `lane_number`, `lane_type`, `lane_status` and its accuracies are capitalized
///   (`Verified`).
public struct WZDxRoadEvent: Sendable, Equatable {
    /// One lane: its position (1 = the left-most), type and status.
    public struct Lane: Sendable, Equatable {
        public var order: String?
        public var type: String?
        public var status: String?

        public init(order: String?, type: String?, status: String?) {
            (self.order, self.type, self.status) = (order, type, status)
        }
    }

    public var id: String?
    /// `work-zone`, `detour`, `restriction`; nil in 2.0, which has only work zones.
    public var eventType: String?
    public var dataSourceID: String?
    public var roadNames: [String] = []
    public var direction: String?
    public var description: String?
    public var startDate: String?
    public var endDate: String?
    /// `is_start_date_verified`, or 2.0's `start_date_accuracy == "verified"`.
    public var isStartDateVerified: Bool?
    public var isEndDateVerified: Bool?
    /// `all-lanes-closed`, `some-lanes-closed`, `all-lanes-open`, `alternating-one-way`, …
    public var vehicleImpact: String?
    public var lanes: [Lane] = []
    /// `restrictions[]` as `type value unit` (`reduced-width 16 feet`), or as sent by 2.0/3.x
    /// (`no-trucks`).
    public var restrictions: [String] = []
    public var reducedSpeedLimitKPH: String?
    /// 2.0/3.x `reduced_speed_limit`, whose unit the specification does not state.
    public var reducedSpeedLimit: String?
    /// 2.0/3.x `event_status`: `planned`, `pending`, `active`, `completed`, `cancelled`.
    public var eventStatus: String?
    /// The event's own `update_date` (2.0/3.x; RFC 3339).
    public var updateDate: String?
    public var beginningCrossStreet: String?
    public var endingCrossStreet: String?
    public var beginningMilepost: String?
    public var endingMilepost: String?
    public var geometry: Geometry?
    /// `features[12]`.
    public var position: String
    /// Why the feature cannot be read as sent; a feature with problems is quarantined.
    public var problems: [String] = []

    public init(position: String) {
        self.position = position
    }
}

extension WZDxRoadEvent {
    /// The feature as sent, from one `features[*]` record.
    init(record: JSONRecord) {
        self.init(position: "features[\(record.position - 1)]")
        problems = record.problems
        let feature = record.value
        guard feature.object != nil else {
            problems.append("the feature is \(feature.kindName), not an object")
            return
        }
        do throws(RecordProblem) {
            try read(feature)
        } catch {
            problems.append(error.text)
        }
    }

    private mutating func read(_ feature: JSONValue) throws(RecordProblem) {
        guard let properties = feature["properties"], properties.object != nil else {
            throw RecordProblem(text: "the feature has no properties object")
        }
        id = try feature.text("id", in: "")
        if let core = properties["core_details"] {
            guard core.object != nil else { throw RecordProblem(text: "properties.core_details is \(core.kindName), not an object") }
            let place = "properties.core_details."
            eventType = try core.text("event_type", in: place)
            dataSourceID = try core.text("data_source_id", in: place)
            roadNames = try core.texts("road_names", in: place)
            direction = try core.text("direction", in: place)
            description = try core.text("description", in: place)
            isStartDateVerified = try properties.bool("is_start_date_verified", in: "properties.")
            isEndDateVerified = try properties.bool("is_end_date_verified", in: "properties.")
            for (index, lane) in try properties.objects("lanes", in: "properties.").enumerated() {
                let place = "properties.lanes[\(index)]."
                lanes.append(Lane(order: try lane.text("order", in: place), type: try lane.text("type", in: place),
                                  status: try lane.text("status", in: place)))
            }
        } else {
            // WZDx 2.0, 3.0, 3.1
            let place = "properties."
            if id == nil { id = try properties.text("road_event_id", in: place) }
            dataSourceID = try properties.firstText(["data_source_id", "feed_info_id"], in: place)
            eventType = try properties.text("event_type", in: place)
            eventStatus = try properties.text("event_status", in: place)
            roadNames = try properties.texts("road_names", in: place)
            if roadNames.isEmpty {
                let name = try properties.text("road_name", in: place)
                let number = try properties.text("road_number", in: place)
                roadNames = [name, number == name ? nil : number].compactMap { $0 }
            }
            direction = try properties.text("direction", in: place)
            description = try properties.text("description", in: place)
            isStartDateVerified = try properties.text("start_date_accuracy", in: place).map { $0.lowercased() == "verified" }
            isEndDateVerified = try properties.text("end_date_accuracy", in: place).map { $0.lowercased() == "verified" }
            updateDate = try properties.text("update_date", in: place)
            reducedSpeedLimit = try properties.text("reduced_speed_limit", in: place)
            for (index, lane) in try properties.objects("lanes", in: place).enumerated() {
                let place = "properties.lanes[\(index)]."
                // 3.x `order`, `type`, `status`; 2.0 `lane_number`, `lane_type`, `lane_status`.
                lanes.append(Lane(order: try lane.firstText(["order", "lane_number"], in: place),
                                  type: try lane.firstText(["type", "lane_type"], in: place),
                                  status: try lane.firstText(["status", "lane_status"], in: place)))
            }
        }
        let place = "properties."
        startDate = try properties.text("start_date", in: place)
        endDate = try properties.text("end_date", in: place)
        vehicleImpact = try properties.text("vehicle_impact", in: place)
        if let list = properties["restrictions"], let items = list.array {
            for (index, restriction) in items.enumerated() {
                let place = "properties.restrictions[\(index)]"
                switch restriction {
                case .object:
                    // 4.x RoadRestriction object.
                    let parts = [try restriction.text("type", in: place + "."), try restriction.text("value", in: place + "."),
                                 try restriction.text("unit", in: place + ".")].compactMap { $0 }
                    if !parts.isEmpty { restrictions.append(parts.joined(separator: " ")) }
                case .string:
                    // 2.0/3.x: the RoadRestriction enumeration's value.
                    if let text = restriction.text { restrictions.append(text) }
                default:
                    throw RecordProblem(text: "\(place) is \(restriction.kindName), not a restriction")
                }
            }
        } else if let list = properties["restrictions"], !list.isNull {
            throw RecordProblem(text: "properties.restrictions is \(list.kindName), not a list")
        }
        reducedSpeedLimitKPH = try properties.text("reduced_speed_limit_kph", in: place)
        beginningCrossStreet = try properties.text("beginning_cross_street", in: place)
        endingCrossStreet = try properties.text("ending_cross_street", in: place)
        beginningMilepost = try properties.text("beginning_milepost", in: place)
        endingMilepost = try properties.text("ending_milepost", in: place)
        if let geometry = feature["geometry"], !geometry.isNull {
            do throws(RecordProblem) {
                self.geometry = try Geometry(geoJSON: geometry)
            } catch {
                throw RecordProblem(text: "geometry: \(error.text)")
            }
        }
    }
}

private extension JSONValue {
    /// The first of `keys` that the object has as text (see `text(_:in:)`).
    func firstText(_ keys: [String], in place: String) throws(RecordProblem) -> String? {
        for key in keys {
            if let value = try text(key, in: place) { return value }
        }
        return nil
    }
}
