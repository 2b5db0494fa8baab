/// The content fields of an incident as stores hold them: one list that drives every store's
/// insert, update, revision archive, row decoding and the content hash, so a new content
/// column is one entry here plus a migration per store, and cannot be forgotten in the hash.

/// One stored value of a content field.
public enum IncidentValue: Equatable, Sendable {
    case null
    case text(String)
    /// Stored as RFC 3339 UTC text.
    case instant(UTCInstant)
    /// Stored as two real columns, WGS84 decimal degrees.
    case coordinate(Coordinate)
    /// Stored as GeoJSON text beside its bounding box (four real columns).
    case geometry(Geometry)
}

/// One content field: its column names, how it is stored, and how it is read from and written
/// to an ``Incident``.
public struct IncidentField: Sendable {
    public enum Storage: Sendable, Equatable {
        /// One text column.
        case text
        /// One RFC 3339 UTC text column.
        case instant
        /// Two real columns: latitude, then longitude.
        case coordinate
        /// GeoJSON text, then the bounding box as four real columns (min/max longitude, min/max
        /// latitude), which the spatial indexes use.
        case geometry
    }

    /// The column names in every store, in order (`provider_category`; `latitude`, `longitude`
    /// for a coordinate), also the output field names.
    public let columns: [String]
    public let storage: Storage
    /// The field's value in an incident.
    public let value: @Sendable (Incident) -> IncidentValue
    /// Sets the field of an incident from a stored value (decoding a row).
    public let assign: @Sendable (inout Incident, IncidentValue) -> Void
    /// Whether an absent value adds to the content hash. Fields added after the first schema
    /// set this false, so that stored hashes of incidents without the new value stay valid (a
    /// present value always counts).
    public let hashesAbsence: Bool
    /// Where a text field made by ``text(_:_:hashesAbsence:)`` keeps the provider's text in an
    /// incident (nil for the others): what the secrets redactor scans, so a new text field is
    /// scanned too.
    public let textPath: (WritableKeyPath<Incident, String?> & Sendable)?

    public init(columns: [String], storage: Storage, hashesAbsence: Bool = true,
                textPath: (WritableKeyPath<Incident, String?> & Sendable)? = nil,
                value: @escaping @Sendable (Incident) -> IncidentValue,
                assign: @escaping @Sendable (inout Incident, IncidentValue) -> Void) {
        self.columns = columns
        self.storage = storage
        self.hashesAbsence = hashesAbsence
        self.textPath = textPath
        self.value = value
        self.assign = assign
    }

    /// A text field at `path`.
    public static func text(_ column: String, _ path: WritableKeyPath<Incident, String?> & Sendable,
                            hashesAbsence: Bool = true) -> IncidentField {
        text(column, path, hashesAbsence: hashesAbsence, get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
    }

    /// A text field at `path`, read and written by `get` and `set` (the same property as
    /// `path`): a key path held in a variable is projected at run time, each read instantiating
    /// generic metadata, where a closure is a direct load. ``content``'s fields are read five
    /// times a record (normalizing, hashing, binding): through their key paths that was a
    /// tenth of a fresh ingest's storing thread (callgrind, issue 23).
    public static func text(_ column: String, _ path: WritableKeyPath<Incident, String?> & Sendable, hashesAbsence: Bool = true,
                            get: @escaping @Sendable (Incident) -> String?,
                            set: @escaping @Sendable (inout Incident, String?) -> Void) -> IncidentField {
        IncidentField(columns: [column], storage: .text, hashesAbsence: hashesAbsence, textPath: path,
                      value: { get($0).map(IncidentValue.text) ?? .null },
                      assign: { incident, value in if case .text(let text) = value { set(&incident, text) } else { set(&incident, nil) } })
    }

    /// An instant field, read and written by `get` and `set` (not a key path: see
    /// ``text(_:_:hashesAbsence:get:set:)``).
    public static func instant(_ column: String, get: @escaping @Sendable (Incident) -> UTCInstant?,
                               set: @escaping @Sendable (inout Incident, UTCInstant?) -> Void) -> IncidentField {
        IncidentField(columns: [column], storage: .instant,
                      value: { get($0).map(IncidentValue.instant) ?? .null },
                      assign: { incident, value in if case .instant(let instant) = value { set(&incident, instant) } else { set(&incident, nil) } })
    }
}

extension IncidentField {
    /// Every content field, in column order. The identity (`source`, `external_id`) and the
    /// store's lifecycle columns (`first_seen_at`, `cleared_at`, …) are not content.
    public static let content: [IncidentField] = [
        IncidentField(columns: ["category"], storage: .text, value: { .text($0.category.rawValue) },
                      assign: { incident, value in
                          if case .text(let text) = value { incident.category = IncidentCategory(rawValue: text) ?? .other }
                      }),
        .text("provider_category", \.providerCategory, get: { $0.providerCategory }, set: { $0.providerCategory = $1 }),
        .text("description", \.description, get: { $0.description }, set: { $0.description = $1 }),
        .text("road", \.road, get: { $0.road }, set: { $0.road = $1 }),
        .text("location", \.location, get: { $0.location }, set: { $0.location = $1 }),
        .text("direction", \.direction, get: { $0.direction }, set: { $0.direction = $1 }),
        .text("restriction", \.restriction, get: { $0.restriction }, set: { $0.restriction = $1 }),
        IncidentField(columns: ["latitude", "longitude"], storage: .coordinate,
                      value: { $0.coordinate.map(IncidentValue.coordinate) ?? .null },
                      assign: { incident, value in
                          if case .coordinate(let coordinate) = value { incident.coordinate = coordinate } else { incident.coordinate = nil }
                      }),
        .text("link_id", \.linkID, get: { $0.linkID }, set: { $0.linkID = $1 }),
        .instant("started_at", get: { $0.startedAt }, set: { $0.startedAt = $1 }),
        .instant("confirmed_at", get: { $0.confirmedAt }, set: { $0.confirmedAt = $1 }),
        .instant("expected_end_at", get: { $0.expectedEndAt }, set: { $0.expectedEndAt = $1 }),
        .instant("ended_at", get: { $0.endedAt }, set: { $0.endedAt = $1 }),
        // Added by migration 0006.
        .text("road_ref", \.roadRef, hashesAbsence: false, get: { $0.roadRef }, set: { $0.roadRef = $1 }),
        IncidentField(columns: ["geometry", "min_longitude", "max_longitude", "min_latitude", "max_latitude"], storage: .geometry,
                      hashesAbsence: false, value: { $0.geometry.map(IncidentValue.geometry) ?? .null },
                      assign: { incident, value in
                          if case .geometry(let geometry) = value { incident.geometry = geometry } else { incident.geometry = nil }
                      }),
        // Added by migration 0008 (PostgreSQL 0004).
        IncidentField(columns: ["validity"], storage: .text, hashesAbsence: false,
                      value: { $0.validity.map { .text($0.rawValue) } ?? .null },
                      assign: { incident, value in
                          if case .text(let text) = value { incident.validity = IncidentValidity(rawValue: text) } else { incident.validity = nil }
                      }),
    ]
}

extension IncidentField {
    /// The fields of ``content`` that hash their absence: those of the first schema (see
    /// ``Incident/hashWithoutAddedFields``).
    static let contentHashingAbsence = content.filter(\.hashesAbsence)
}

extension Incident {
    /// Builds an incident from stored values, one per field of `fields`, in that order.
    public init(source: String, externalID: String, values: [IncidentValue], fields: [IncidentField] = IncidentField.content) {
        self.init(source: source, externalID: externalID, category: .other)
        for (field, value) in zip(fields, values) { field.assign(&self, value) }
    }

    /// The hash of everything a provider can change about an incident: every field of
    /// `fields` (not its identity, not the store's lifecycle columns). Equal hashes mean
    /// "unchanged since the last poll". FNV-1a 64 over each value: text as its UTF-8 bytes
    /// plus a 0x1F separator; instants (seconds since 1970) and each degree of a coordinate
    /// as 0x01 plus 8 little-endian bytes; an absent value as 0x00 per column.
    public func contentHash(fields: [IncidentField] = IncidentField.content) -> Int64 {
        contentValues(fields: fields).hash
    }

    /// The hash of this incident without the fields that do not hash their absence (those that
    /// migrations added: `road_ref`, `geometry`, `validity`): the hash a row stored before they
    /// existed has. A stored row with this hash holds the same content from the provider, and
    /// lacks only what this version derives or keeps besides; a store fills those in place,
    /// without a revision (issue 20: after migration 0006 every incident's next poll wrote
    /// one revision `road_ref - → 고속국도1호선`).
    public var hashWithoutAddedFields: Int64 {
        contentHash(fields: IncidentField.contentHashingAbsence)
    }

    /// ``contentValues(fields:)`` and the hash of the fields of `fields` that hash their absence
    /// (``hashWithoutAddedFields`` when `fields` is ``IncidentField/content``), from one pass over
    /// the values: a PostgreSQL poll stages all three for every record, and computing the second
    /// hash apart built every value again (its strings, retained and released).
    public func contentValuesAndBaseHash(fields: [IncidentField] = IncidentField.content)
        -> (values: [IncidentValue], hash: Int64, baseHash: Int64) {
        var hasher = FNV1a64()
        var base = FNV1a64()
        let values = fields.map { field in
            let value = field.value(self)
            hasher.combine(value: value, of: field)
            if field.hashesAbsence { base.combine(value: value, of: field) }
            return value
        }
        return (values, hasher.signed, base.signed)
    }

    /// The incident's stored values, one per field of `fields`, and their ``contentHash(fields:)``,
    /// computed together (a store writes both for every record).
    public func contentValues(fields: [IncidentField] = IncidentField.content) -> (values: [IncidentValue], hash: Int64) {
        var hasher = FNV1a64()
        let values = fields.map { field in
            let value = field.value(self)
            hasher.combine(value: value, of: field)
            return value
        }
        return (values, hasher.signed)
    }
}

extension FNV1a64 {
    /// Adds one stored value (see ``Incident/contentHash(fields:)`` for the encoding).
    public mutating func combine(value: IncidentValue, of field: IncidentField) {
        switch value {
        case .null:
            guard field.hashesAbsence else { return }
            combine(field: nil)
            if field.storage == .coordinate { combine(field: nil) }
        case .geometry(let geometry): combine(field: geometry.geoJSON)
        case .text(let text): combine(field: text)
        case .coordinate(let coordinate):
            combine(bits: coordinate.latitude.bitPattern)
            combine(bits: coordinate.longitude.bitPattern)
        case .instant(let instant): combine(bits: UInt64(bitPattern: instant.secondsSince1970))
        }
    }
}
