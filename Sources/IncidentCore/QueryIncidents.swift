import Foundation

/// An incident as stored, with what the store adds: its row id and lifecycle.
public struct StoredIncident: Hashable, Sendable {
    /// The row id, stable for the life of the database (`incidents show ID`).
    public var id: Int64
    public var incident: Incident
    /// When a poll first saw the incident.
    public var firstSeenAt: UTCInstant
    /// When a poll last saw the incident.
    public var lastSeenAt: UTCInstant
    /// When a complete poll of the source no longer listed it; nil while it is listed.
    public var clearedAt: UTCInstant?
    /// 1 when first seen; incremented on each change or reopening.
    public var revision: Int

    public init(id: Int64, incident: Incident, firstSeenAt: UTCInstant, lastSeenAt: UTCInstant,
                clearedAt: UTCInstant?, revision: Int) {
        self.id = id
        self.incident = incident
        self.firstSeenAt = firstSeenAt
        self.lastSeenAt = lastSeenAt
        self.clearedAt = clearedAt
        self.revision = revision
    }

    /// Active means in force at `now`: not cleared by the store, not ended by the provider,
    /// not suspended, and started (``status(at:)``). This is the one definition of "active":
    /// each store's `--active` filter and its statistics are tested against it.
    public func isActive(at now: UTCInstant) -> Bool {
        status(at: now) == .active
    }
}

/// The order of a listing.
public enum IncidentOrder: String, Sendable, CaseIterable {
    /// Newest start first (the default).
    case started = "started"
    /// Oldest start first.
    case startedAscending = "started-asc"
    /// Most recently seen first.
    case lastSeen = "last-seen"
    /// By source, then external id.
    case source = "source"
    /// Nearest first (needs a ``IncidentQuery/near`` point).
    case distance = "distance"
    /// By row id, lowest first: an order no poll changes (an incident keeps its id, a new one
    /// gets a higher id), for paging by ``IncidentQuery/afterID`` (`incidents serve`).
    case id = "id"
    /// By row id, highest first (the page before a keyset page: ``IncidentQuery/beforeID``).
    case idDescending = "id-desc"
}

/// A WGS84 rectangle: longitudes `minLongitude...maxLongitude`, latitudes `minLatitude...maxLatitude`.
public struct BoundingBox: Hashable, Sendable {
    public var minLongitude: Double
    public var minLatitude: Double
    public var maxLongitude: Double
    public var maxLatitude: Double

    /// Returns nil unless min < max on both axes and all values are WGS84 degrees.
    public init?(minLongitude: Double, minLatitude: Double, maxLongitude: Double, maxLatitude: Double) {
        guard Coordinate(latitude: minLatitude, longitude: minLongitude) != nil,
              Coordinate(latitude: maxLatitude, longitude: maxLongitude) != nil,
              minLongitude < maxLongitude, minLatitude < maxLatitude else { return nil }
        self.minLongitude = minLongitude
        self.minLatitude = minLatitude
        self.maxLongitude = maxLongitude
        self.maxLatitude = maxLatitude
    }

    /// A box holding every point within `meters` of `center` by ``Coordinate/distance(to:)`` (a
    /// prefilter for it): the spherical cap's latitudes, and its longitudes
    /// `center ± asin(sin r / cos φ)` for an angular radius `r` at latitude `φ`. When the cap
    /// holds a pole or crosses the antimeridian, the box spans every longitude (a box cannot
    /// wrap); when it reaches around the earth, it is the whole earth.
    public static func around(_ center: Coordinate, meters: Double) -> BoundingBox {
        let radius = meters / Coordinate.earthRadiusMeters  // radians
        let margin = 1e-7  // degrees (about 1 cm): floating-point slack at the edges
        let latitude = center.latitude * .pi / 180
        guard radius < .pi else { return BoundingBox(unchecked: (-180, -90, 180, 90)) }
        let minLatitude = (latitude - radius) * 180 / .pi - margin, maxLatitude = (latitude + radius) * 180 / .pi + margin
        guard minLatitude > -90, maxLatitude < 90, sin(radius) < cos(latitude) else {
            return BoundingBox(unchecked: (-180, max(-90, minLatitude), 180, min(90, maxLatitude)))
        }
        let longitudeDelta = asin(sin(radius) / cos(latitude)) * 180 / .pi + margin
        guard center.longitude - longitudeDelta >= -180, center.longitude + longitudeDelta <= 180 else {
            return BoundingBox(unchecked: (-180, minLatitude, 180, maxLatitude))
        }
        return BoundingBox(unchecked: (center.longitude - longitudeDelta, minLatitude, center.longitude + longitudeDelta, maxLatitude))
    }

    init(unchecked box: (Double, Double, Double, Double)) {
        (minLongitude, minLatitude, maxLongitude, maxLatitude) = box
    }

    public func contains(_ point: Coordinate) -> Bool {
        (minLongitude...maxLongitude).contains(point.longitude) && (minLatitude...maxLatitude).contains(point.latitude)
    }
}

extension Coordinate {
    /// Mean Earth radius (IUGG, 6,371,008.8 m), the usual sphere for haversine distances.
    public static let earthRadiusMeters = 6_371_008.8
    static let metersPerDegreeLatitude = earthRadiusMeters * .pi / 180

    /// Great-circle distance in meters on a sphere of ``earthRadiusMeters`` (haversine formula;
    /// within 0.5 % of the WGS84 ellipsoid, plenty for "incidents near here").
    public func distance(to other: Coordinate) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = φ2 - φ1, Δλ = (other.longitude - longitude) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * Self.earthRadiusMeters * asin(min(1, a.squareRoot()))
    }
}

/// Filters for listing incidents. Every filter that is set must match (logical AND).
public struct IncidentQuery: Sendable {
    /// Only incidents active at `now` (see ``StoredIncident/isActive(at:)``): ``statuses`` `[.active]`.
    public var activeOnly: Bool {
        get { statuses == [.active] }
        set { statuses = newValue ? [.active] : [] }
    }
    /// Only incidents in one of these states at `now` (``StoredIncident/status(at:)``); empty means all.
    public var statuses: [IncidentStatus] = []
    /// The instant "active" is judged at.
    public var now: UTCInstant
    /// Any of these sources; empty means all.
    public var sources: [String] = []
    /// Any of these categories; empty means all.
    public var categories: [IncidentCategory] = []
    /// `started_at` at or after this instant.
    public var startedSince: UTCInstant?
    /// `started_at` before this instant.
    public var startedUntil: UTCInstant?
    /// `last_seen_at` at or after this instant.
    public var seenSince: UTCInstant?
    /// The road name contains this text.
    public var roadContains: String?
    /// With ``roadContains``: the canonical road that text names (`고속국도1호선` for
    /// `경부고속도로`), whose incidents match too whatever their provider calls the road.
    public var roadReference: String?
    /// The position lies in this box.
    public var boundingBox: BoundingBox?
    /// The position lies within `radiusMeters` of this point, by ``Coordinate/distance(to:)``.
    public var near: Coordinate?
    public var radiusMeters: Double = 5_000
    /// Every whitespace-separated term occurs in the description or the location.
    public var search: String?
    /// In force at some time of this interval: the incident's interval, from its start (or,
    /// without one, its first sighting) to the earlier of its end and its clearing (open while
    /// it has neither), has an instant in common with `from...until` (both ends included; a nil
    /// end is open). An instant is `from == until`. OGC API – Features' `datetime`.
    public var inForce: TimeInterval?
    /// Only ids greater than this (keyset paging with ``IncidentOrder/id``: the next page
    /// starts after the last id of the previous one, whatever a poll changed in between).
    public var afterID: Int64?
    /// Only ids less than this (with ``IncidentOrder/idDescending``: the page before one).
    public var beforeID: Int64?
    public var order: IncidentOrder = .started
    /// At most this many rows; nil means no limit.
    public var limit: Int?
    /// Only incidents their source listed as active at this instant, by the transition log
    /// (`--at`; docs/analyst.md, "History and changes"): the last appearance, reopening or clear at or
    /// before it is an appearance or a reopening, and the provider's end time (as stored now)
    /// is not at or before it. Each store reads it from its index of the intervals each
    /// incident was listed in (SQLite migration 0013, PostgreSQL 0011), which states it exactly.
    public var listedAt: UTCInstant?

    public init(now: UTCInstant, activeOnly: Bool = false, sources: [String] = [],
                order: IncidentOrder = .started, limit: Int? = nil) {
        self.now = now
        self.activeOnly = activeOnly
        self.sources = sources
        self.order = order
        self.limit = limit
    }
}

extension IncidentQuery {
    /// A closed interval of instants; a nil end is open (`..` in OGC API – Features).
    public struct TimeInterval: Hashable, Sendable {
        public var from: UTCInstant?
        public var until: UTCInstant?

        public init(from: UTCInstant?, until: UTCInstant?) {
            self.from = from
            self.until = until
        }
    }
}

extension StoredIncident {
    /// The interval ``IncidentQuery/inForce`` matches: from the start (else the first
    /// sighting) to the earlier of the provider's end and the clearing (nil: still open).
    public var inForceInterval: (from: UTCInstant, until: UTCInstant?) {
        let ends = [incident.endedAt, clearedAt].compactMap { $0 }
        return (incident.startedAt ?? firstSeenAt, ends.min())
    }

    /// Whether ``inForceInterval`` has an instant in common with `interval`.
    public func isInForce(during interval: IncidentQuery.TimeInterval) -> Bool {
        let own = inForceInterval
        if let until = interval.until, own.from > until { return false }
        if let from = interval.from, let end = own.until, end < from { return false }
        return true
    }
}

/// The values an incident had before a change (a row of `incident_revisions`).
public struct IncidentRevision: Hashable, Sendable {
    public var revision: Int
    public var incident: Incident
    public var clearedAt: UTCInstant?
    /// When these values stopped being current.
    public var supersededAt: UTCInstant

    public init(revision: Int, incident: Incident, clearedAt: UTCInstant?, supersededAt: UTCInstant) {
        self.revision = revision
        self.incident = incident
        self.clearedAt = clearedAt
        self.supersededAt = supersededAt
    }
}

/// Counts for `incidents stats`.
public struct IncidentStatistics: Equatable, Sendable {
    public var total = 0
    public var active = 0
    /// ``IncidentStatus/planned`` at the query's `now`.
    public var planned = 0
    /// ``IncidentStatus/suspended``.
    public var suspended = 0
    public var cleared = 0
    /// `(key, count)` pairs, largest count first.
    public var bySource: [(String, Int)] = []
    public var byCategory: [(String, Int)] = []
    /// The most frequent roads, at most 20 of ``distinctRoads``.
    public var byRoad: [(String, Int)] = []
    /// How many roads the incidents are on (`-`, no road, counts as one): more than
    /// `byRoad.count` when that list was cut ("top 20 of 35").
    public var distinctRoads = 0
    /// By hour of `started_at` in the requested time zone (`00`…`23`), in hour order.
    public var byHour: [(String, Int)] = []

    public init() {}

    public static func == (a: IncidentStatistics, b: IncidentStatistics) -> Bool {
        func same(_ x: [(String, Int)], _ y: [(String, Int)]) -> Bool { x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1) }
        return a.total == b.total && a.active == b.active && a.planned == b.planned && a.suspended == b.suspended
            && a.cleared == b.cleared && a.distinctRoads == b.distinctRoads
            && same(a.bySource, b.bySource)
            && same(a.byCategory, b.byCategory) && same(a.byRoad, b.byRoad) && same(a.byHour, b.byHour)
    }
}

/// Use case: list stored incidents for the query CLI.
public struct QueryIncidents: Sendable {
    public var reader: any IncidentReader

    public init(reader: any IncidentReader) {
        self.reader = reader
    }

    /// Calls `row` for each incident matching `query`, in its order, as the store reads them
    /// (see ``IncidentReader/forEachIncident(matching:_:)``).
    /// - Throws: the reader's errors (e.g. an unreadable database), ``QueryError``, or what
    ///   `row` throws.
    public func forEach(_ query: IncidentQuery, _ row: (StoredIncident) throws -> Void) throws {
        try reader.forEachIncident(matching: query, row)
    }

    /// Every incident matching `query`, in memory (tests and small results only).
    public func list(_ query: IncidentQuery) throws -> [StoredIncident] {
        var rows: [StoredIncident] = []
        try forEach(query) { rows.append($0) }
        return rows
    }
}
