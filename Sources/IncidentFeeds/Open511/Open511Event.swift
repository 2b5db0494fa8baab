import IncidentCore

/// One Open511 road event as the server sent it (JSON or XML), before mapping: texts as
/// written, lists in document order. Only the geography is already read (into a
/// ``Geometry``), since its two syntaxes (GeoJSON, GML 2) share nothing else.
///
/// Field names are Open511's (open511.org, "Events": `id`, `status`, `headline`,
/// `description`, `event_type`, `event_subtypes`, `severity`, `created`, `updated`,
/// `schedule`, `roads`, `areas`, `geography`, `detour`), and `+`-prefixed members are the
/// jurisdiction's extensions.
public struct Open511Event: Sendable, Equatable {
    /// One `roads[]` entry.
    public struct Road: Sendable, Equatable {
        public var name: String?
        public var from: String?
        public var to: String?
        /// `N`, `S`, `E`, `W`, `NE`, … `BOTH`, `NONE`, or free text (511.org: `Eastbound`).
        public var direction: String?
        /// `CLOSED`, `SOME_LANES_CLOSED`, `SINGLE_LANE_ALTERNATING`, `ALL_LANES_OPEN`.
        public var state: String?
        public var lanesClosed: String?
        public var lanesOpen: String?
        /// The road's `+` members (511.org: `+lane_type`, `+lane_status`, `+road_advisory`).
        public var extensions: [Extension] = []

        public init(name: String? = nil, from: String? = nil, to: String? = nil, direction: String? = nil,
                    state: String? = nil, lanesClosed: String? = nil, lanesOpen: String? = nil, extensions: [Extension] = []) {
            (self.name, self.from, self.to, self.direction) = (name, from, to, direction)
            (self.state, self.lanesClosed, self.lanesOpen, self.extensions) = (state, lanesClosed, lanesOpen, extensions)
        }
    }

    /// One `schedule.recurring_schedules[]` entry: on `days` (ISO weekdays, 1 = Monday; every
    /// day when empty) from `start_date` to `end_date`, between the daily times, all in the
    /// jurisdiction's local time.
    public struct RecurringSchedule: Sendable, Equatable {
        public var startDate: String?
        public var endDate: String?
        public var dailyStartTime: String?
        public var dailyEndTime: String?
        public var days: [String] = []

        public init(startDate: String? = nil, endDate: String? = nil, dailyStartTime: String? = nil,
                    dailyEndTime: String? = nil, days: [String] = []) {
            (self.startDate, self.endDate, self.dailyStartTime, self.dailyEndTime, self.days) =
                (startDate, endDate, dailyStartTime, dailyEndTime, days)
        }
    }

    /// A `+`-prefixed member, its value as one line (a number as written, an object as JSON).
    public struct Extension: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
        /// `+source_type=CHP`.
        public var description: String { "\(name)=\(value)" }
    }

    /// `jurisdiction/id`, e.g. `511.org/1045578`, `drivebc.ca/DBC-28953`.
    public var id: String?
    /// `ACTIVE` or `ARCHIVED` (compared ignoring case).
    public var status: String?
    /// One per language in XML; one in JSON.
    public var headlines: [String] = []
    public var descriptions: [String] = []
    /// `INCIDENT`, `CONSTRUCTION`, `SPECIAL_EVENT`, `WEATHER_CONDITION`, `ROAD_CONDITION`.
    public var eventType: String?
    public var eventSubtypes: [String] = []
    /// `MINOR`, `MODERATE`, `MAJOR`, `UNKNOWN`, in the case the server writes it
    /// (511.org: `Moderate`); ``normalizedSeverity`` gives the upper-case value.
    public var severity: String?
    public var created: String?
    public var updated: String?
    /// The event's own tz database zone, when it gives one (Open511 XML `timezone`).
    public var timezone: String?
    /// `schedule.intervals`: ISO 8601 intervals `start/end`, open-ended `start/`.
    public var intervals: [String] = []
    public var recurringSchedules: [RecurringSchedule] = []
    public var roads: [Road] = []
    /// `areas[].name`.
    public var areas: [String] = []
    public var detours: [String] = []
    public var geography: Geometry?
    /// The event's `+` members, in document order.
    public var extensions: [Extension] = []
    /// Where in the response: `events[3]`, `event at line 12`.
    public var position: String
    /// Why the event cannot be read as sent (a duplicate key, a value of the wrong type, a
    /// geography that is not WGS84); an event with problems is quarantined.
    public var problems: [String] = []

    public init(position: String) {
        self.position = position
    }

    /// ``severity`` in upper case (`Moderate` → `MODERATE`).
    public var normalizedSeverity: String? { severity?.uppercased() }
}
