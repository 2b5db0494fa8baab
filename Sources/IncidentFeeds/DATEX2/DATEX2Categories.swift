import IncidentCore

/// DATEX II record kinds, detail types and causes → ``IncidentCategory``.
///
/// The record's kind is its `xsi:type`: a concrete subtype of `SituationRecord`. The subtypes
/// and their hierarchy are those of the DATEX II 2.2.3 schema (`DATEXIISchema_2_2_3.xsd`) and
/// the 3.1 situation schema (`DATEXII_3_Situation.xsd`), e.g. `VehicleObstruction` <
/// `Obstruction` < `TrafficElement` and `MaintenanceWorks` < `Roadworks` < `OperatorAction`;
/// the enumerations are those schemas' `VehicleObstructionTypeEnum`,
/// `GeneralNetworkManagementTypeEnum`, `RoadOrCarriagewayOrLaneManagementTypeEnum` and
/// `CauseTypeEnum` (2.x and 3.x values differ; both are listed).
///
/// Rules, in order:
/// 1. a detail value in ``details`` decides (a broken-down vehicle is a `breakdown`, a bridge
///    swinging open a `closure`);
/// 2. else the record kind in ``recordTypes`` (a kind in another namespace, a national
///    extension, is `other`);
/// 3. when that gives `other`, the cause in ``causes`` decides, if it names a category.
///
/// The provider's own value (`providerCategory`) is always the record kind.
public enum DATEX2Categories {
    /// Record kinds (local names of the `xsi:type`) and their categories.
    public static let recordTypes: [String: IncidentCategory] = [
        // TrafficElement: what happens on the road
        "Accident": .accident,
        "AbnormalTraffic": .congestion,
        "VehicleObstruction": .obstruction,
        "AnimalPresenceObstruction": .obstruction,
        "EnvironmentalObstruction": .obstruction,        // flooding, rock falls, landslips, …
        "GeneralObstruction": .obstruction,
        "InfrastructureDamageObstruction": .obstruction,
        "NonWeatherRelatedRoadConditions": .obstruction, // oil, mud, loose chippings on the road
        "WeatherRelatedRoadConditions": .weather,
        "PoorEnvironmentConditions": .weather,           // fog, heavy rain, strong winds, …
        "Conditions": .weather,
        "PublicEvent": .event,
        "DisturbanceActivity": .event,                   // demonstrations, crowds, …
        "AuthorityOperation": .event,                    // police check points, VIP transports, …
        "EquipmentOrSystemFault": .other,
        // OperatorAction: what the road operator does
        "MaintenanceWorks": .roadwork,
        "ConstructionWorks": .roadwork,
        "RoadOrCarriagewayOrLaneManagement": .closure,   // road, carriageway and lane closures
        "WinterDrivingManagement": .weather,
        "GeneralNetworkManagement": .other,
        "ReroutingManagement": .other,
        "SpeedManagement": .other,
        "GeneralInstructionOrMessageToRoadUsers": .other,
        "RoadsideAssistance": .other,
        "SignSetting": .other,
        "OperatorAction": .other,
        // ServiceInformation (3.x) / NonRoadEventInformation (2.x): services, not the road
        "TransitInformation": .other,
        "ServiceDisruption": .other,
        "RoadOperatorServiceDisruption": .other,
        "RoadsideServiceDisruption": .other,
        "CarParks": .other,
        "GenericSituationRecord": .other,
    ]

    /// Detail values that say more than the record kind.
    public static let details: [String: IncidentCategory] = [
        // VehicleObstructionTypeEnum
        "brokenDownVehicle": .breakdown,
        "brokenDownBus": .breakdown,
        "brokenDownHeavyLorry": .breakdown,
        // GeneralNetworkManagementTypeEnum: the road is shut while it lasts
        "bridgeSwingInOperation": .closure,
        "trafficHeld": .closure,
        // RoadOrCarriagewayOrLaneManagementTypeEnum: the end of a closure, not a closure
        "roadCleared": .other,
    ]

    /// `causeType` values that name a category (2.x and 3.x `CauseTypeEnum`).
    public static let causes: [String: IncidentCategory] = [
        "accident": .accident, "earlierAccident": .accident,
        "congestion": .congestion, "abnormalTraffic": .congestion, "holidayTraffic": .congestion,
        "rubberNecking": .congestion, "shearWeightOfTraffic": .congestion, "largeNumbersOfVisitors": .congestion,
        "obstruction": .obstruction, "vehicleObstruction": .obstruction, "animalPresence": .obstruction,
        "environmentalObstruction": .obstruction, "infrastructureDamageObstruction": .obstruction,
        "nonWeatherRelatedRoadConditions": .obstruction,
        "poorWeather": .weather, "frost": .weather, "excessiveHeat": .weather, "poorEnvironment": .weather,
        "weatherRelatedRoadConditions": .weather, "drivingConditions": .weather, "winterEquipmentManagement": .weather,
        "constructionWork": .roadwork, "roadMaintenance": .roadwork,
        "roadOrCarriagewayOrLaneManagement": .closure,
        "publicEvent": .event, "roadsideEvent": .event, "disturbance": .event, "authorityOperation": .event,
    ]

    /// The category of a record of kind `recordType` (a resolved `xsi:type`, Clark notation
    /// or a bare local name) with the given detail value and cause.
    public static func category(recordType: String?, detailType: String?, causeType: String?) -> IncidentCategory {
        if let detailType, let category = details[detailType] { return category }
        let byType = recordType.flatMap(DATEX2Mapper.datexLocalName).flatMap { recordTypes[$0] } ?? .other
        if byType == .other, let causeType, let category = causes[causeType] { return category }
        return byType
    }
}
