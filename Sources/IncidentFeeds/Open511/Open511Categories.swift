import IncidentCore

/// Open511's event types and subtypes in the product's categories.
///
/// Source of the enumerations: the Open511 specification's event schema (open511.org; the
/// RELAX NG grammar `open511.rnc` of the `open511/open511` validator lists `event_type` and
/// `event_subtype` values). Servers also send their own subtypes in free text (511.org:
/// `Disabled vehicle`): subtypes are compared after upper-casing and turning spaces and
/// hyphens into `_`, so `Disabled vehicle` is `DISABLED_VEHICLE`.
///
/// Rule: the first subtype found in ``subtypes`` decides; otherwise the event type's
/// category (``eventTypes``); otherwise `other`. The provider category keeps both as sent:
/// `INCIDENT/ACCIDENT`, `INCIDENT/Disabled vehicle`, `CONSTRUCTION/ROAD_MAINTENANCE`
/// (several subtypes joined by `,`).
enum Open511Categories {
    static let eventTypes: [String: IncidentCategory] = [
        "INCIDENT": .other,  // the subtype says which kind; alone it says nothing more
        "CONSTRUCTION": .roadwork,
        "SPECIAL_EVENT": .event,
        "WEATHER_CONDITION": .weather,
        "ROAD_CONDITION": .weather,  // snow, ice, visibility: the spec's road-condition subtypes are weather's effects
    ]

    static let subtypes: [String: IncidentCategory] = [
        // INCIDENT
        "ACCIDENT": .accident, "FIRE": .accident,
        "SPILL": .obstruction, "OBSTRUCTION": .obstruction, "HAZARD": .obstruction,
        // CONSTRUCTION
        "ROAD_MAINTENANCE": .roadwork, "ROAD_CONSTRUCTION": .roadwork, "EMERGENCY_MAINTENANCE": .roadwork,
        // SPECIAL_EVENT
        "PLANNED_EVENT": .event, "CROWD": .event,
        // WEATHER_CONDITION
        "HAIL": .weather, "THUNDERSTORM": .weather, "HEAVY_DOWNPOUR": .weather, "STRONG_WINDS": .weather,
        "BLOWING_DUST": .weather, "SANDSTORM": .weather, "AVALANCHE_HAZARD": .weather, "SURFACE_WATER_HAZARD": .weather,
        "INSECT_SWARMS": .obstruction,
        // ROAD_CONDITION
        "PARTLY_ICY": .weather, "ICE_COVERED": .weather, "PARTLY_SNOW_PACKED": .weather, "SNOW_PACKED": .weather,
        "PARTLY_SNOW_COVERED": .weather, "SNOW_COVERED": .weather, "DRIFTING_SNOW": .weather, "POOR_VISIBILITY": .weather,
        "ALMOST_IMPASSABLE": .weather, "PASSABLE_WITH_CARE": .weather,
        "MUD": .obstruction, "LOOSE_GRAVEL": .obstruction, "OIL_ON_ROADWAY": .obstruction,
        "SIGNAL_LIGHT_FAILURE": .other,
        // Free-text subtypes seen from 511.org (the SF Bay page of 2023-05-31).
        "DISABLED_VEHICLE": .breakdown,
    ]

    /// The category of an event, and its provider category (`INCIDENT/ACCIDENT`).
    static func classify(eventType: String?, subtypes names: [String]) -> (IncidentCategory, String?) {
        let category = names.lazy.compactMap { subtypes[key($0)] }.first
            ?? eventType.flatMap { eventTypes[key($0)] } ?? .other
        let label: String? = switch (eventType, names.isEmpty) {
        case (let type?, true): type
        case (let type?, false): type + "/" + names.joined(separator: ",")
        case (nil, false): names.joined(separator: ",")
        case (nil, true): nil
        }
        return (category, label)
    }

    /// `Disabled vehicle` → `DISABLED_VEHICLE`.
    static func key(_ text: String) -> String {
        String(text.uppercased().map { $0 == " " || $0 == "-" ? "_" : $0 })
    }
}
