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

    /// Active means not cleared by the store and not ended by the provider at `now`.
    public func isActive(at now: UTCInstant) -> Bool {
        clearedAt == nil && (incident.endedAt.map { $0 > now } ?? true)
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
}

/// Filters for listing incidents. Every filter that is set must match (logical AND).
public struct IncidentQuery: Sendable {
    /// Only incidents active at `now` (see ``StoredIncident/isActive(at:)``).
    public var activeOnly = false
    /// The instant "active" is judged at.
    public var now: UTCInstant
    /// Any of these sources; empty means all.
    public var sources: [String] = []
    public var order: IncidentOrder = .started
    /// At most this many rows; nil means no limit.
    public var limit: Int?

    public init(now: UTCInstant, activeOnly: Bool = false, sources: [String] = [],
                order: IncidentOrder = .started, limit: Int? = nil) {
        self.now = now
        self.activeOnly = activeOnly
        self.sources = sources
        self.order = order
        self.limit = limit
    }
}

/// Read access to stored incidents (port).
public protocol IncidentReader: Sendable {
    func incidents(matching query: IncidentQuery) throws -> [StoredIncident]
}

/// Use case: list stored incidents for the query CLI.
public struct QueryIncidents: Sendable {
    public var reader: any IncidentReader
    public var clock: Clock

    public init(reader: any IncidentReader, clock: Clock) {
        self.reader = reader
        self.clock = clock
    }

    /// Lists incidents matching `query`.
    /// - Throws: the reader's errors (e.g. an unreadable database).
    public func list(_ query: IncidentQuery) throws -> [StoredIncident] {
        try reader.incidents(matching: query)
    }
}
