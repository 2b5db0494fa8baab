/// The normalized kind of an incident.
///
/// Providers label incidents in their own words (GITS: the bracketed prefix of `inciDesc` such as
/// `[사고]`; ITS: `eventType` / `eventDetailType`). Mappers translate those words into this closed
/// set and keep the provider's text in ``Incident/providerCategory``.
public enum IncidentCategory: String, CaseIterable, Sendable, Codable {
    case accident
    case breakdown
    case roadwork
    case closure
    case obstruction
    case weather
    case congestion
    case event
    case other
}

/// What a provider says about an incident it lists but that is not in force now.
public enum IncidentValidity: String, CaseIterable, Sendable {
    /// Planned for later (DATEX II `validityStatus` `planned`): in force from its start time.
    case planned
    /// Suspended for now (DATEX II `validityStatus` `suspended`): in force again only when the
    /// provider says so.
    case suspended
}

/// A position in WGS84 decimal degrees (EPSG:4326).
public struct Coordinate: Hashable, Sendable {
    /// Degrees north, -90...90.
    public var latitude: Double
    /// Degrees east, -180...180.
    public var longitude: Double

    /// Returns nil unless both values are finite and inside the WGS84 ranges.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite,
              (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// One road incident as published by one source, after mapping: no provider quirks remain.
///
/// Text values are trimmed; an empty value is `nil`, never `""`. Instants are UTC.
public struct Incident: Hashable, Sendable {
    /// The configured source name (e.g. `gits`, `its-seoul`).
    public var source: String
    /// The provider's identifier of the incident, unique within `source` (GITS: `regSeq`).
    public var externalID: String
    public var category: IncidentCategory
    /// The provider's own label the category was derived from (e.g. `차량고장`).
    public var providerCategory: String?
    public var description: String?
    /// Road name as the provider gives it (GITS `inciPlace1`, ITS `roadName`).
    public var road: String?
    /// The road's canonical name from the public route numbering, where the provider's data
    /// tells it (`고속국도1호선` for 경부고속도로 and ITS's 경부선): the same road under one name.
    public var roadRef: String?
    /// Place on the road: direction and section (GITS `inciPlace2`).
    public var location: String?
    /// Travel direction when the provider gives it separately (ITS `roadDrcType`).
    public var direction: String?
    /// Lanes or carriageway affected (GITS `restrictType`, ITS `lanesBlocked`).
    public var restriction: String?
    /// The incident's position: the point the provider gives, or the representative point of
    /// its ``geometry``.
    public var coordinate: Coordinate?
    /// The shape the provider gives when it is more than a point (a work zone's line, a start
    /// and an end); nil when ``coordinate`` is all there is.
    public var geometry: Geometry?
    /// The provider's road link id (Korean standard node-link `linkId`).
    public var linkID: String?
    public var startedAt: UTCInstant?
    /// When the operator confirmed the incident (GITS `confirmDate`).
    public var confirmedAt: UTCInstant?
    /// The provider's estimate of the end (GITS `estEndDate`).
    public var expectedEndAt: UTCInstant?
    /// The provider's own end time, when it publishes one. Distinct from the store's
    /// `cleared_at`, which records when the incident disappeared from the feed.
    public var endedAt: UTCInstant?
    /// The provider's word that the incident is listed but not in force now (DATEX II
    /// `validityStatus` `planned` or `suspended`); nil when it says nothing of the kind. A start
    /// in the future needs no such word: ``StoredIncident/status(at:)`` reads ``startedAt``.
    public var validity: IncidentValidity?

    public init(source: String, externalID: String, category: IncidentCategory,
                providerCategory: String? = nil, description: String? = nil, road: String? = nil,
                roadRef: String? = nil, location: String? = nil, direction: String? = nil, restriction: String? = nil,
                coordinate: Coordinate? = nil, linkID: String? = nil, startedAt: UTCInstant? = nil,
                confirmedAt: UTCInstant? = nil, expectedEndAt: UTCInstant? = nil,
                endedAt: UTCInstant? = nil) {
        self.source = source
        self.externalID = externalID
        self.category = category
        self.providerCategory = providerCategory
        self.description = description
        self.road = road
        self.roadRef = roadRef
        self.location = location
        self.direction = direction
        self.restriction = restriction
        self.coordinate = coordinate
        self.linkID = linkID
        self.startedAt = startedAt
        self.confirmedAt = confirmedAt
        self.expectedEndAt = expectedEndAt
        self.endedAt = endedAt
    }

    /// Sets the geometry, and the coordinate to its representative point. A Point geometry
    /// is kept as the coordinate only.
    public mutating func setGeometry(_ geometry: Geometry?) {
        guard let geometry else { self.geometry = nil; return }
        coordinate = geometry.representativePoint
        if case .point = geometry { self.geometry = nil } else { self.geometry = geometry }
    }

    /// The area the incident covers: its geometry's box, or its coordinate as a box with no
    /// area; nil without a position.
    public var extent: BoundingBox? {
        if let geometry { return geometry.boundingBox }
        return coordinate.map { BoundingBox(extent: ($0.longitude, $0.latitude, $0.longitude, $0.latitude)) }
    }
}

extension String {
    /// The value with surrounding whitespace removed, or nil when nothing is left.
    public var nonEmptyTrimmed: String? {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return nil }
        // Cheap path: most provider values carry no surrounding whitespace.
        if first == scalars.startIndex, let last = scalars.last, !last.properties.isWhitespace { return self }
        guard let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return nil }
        return String(scalars[first...last])
    }
}
