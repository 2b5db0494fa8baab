/// Reading a whole store row by row, as stored, so that another store can copy it (moving an
/// SQLite database to PostgreSQL keeps its history: issue 15, "Moving up").

/// An incident as stored, with the columns only the store keeps.
public struct IncidentRecord: Equatable, Sendable {
    public var stored: StoredIncident
    /// The stored content hash (``Incident/contentHash(fields:)`` when it was written).
    public var contentHash: Int64
    /// The runs (`ingest_runs.id`) that first and last listed it.
    public var firstSeenRunID: Int64
    public var lastSeenRunID: Int64

    public init(stored: StoredIncident, contentHash: Int64, firstSeenRunID: Int64, lastSeenRunID: Int64) {
        self.stored = stored
        self.contentHash = contentHash
        self.firstSeenRunID = firstSeenRunID
        self.lastSeenRunID = lastSeenRunID
    }
}

/// A previous version of an incident (`incident_revisions`), with its incident's row id.
public struct RevisionRecord: Equatable, Sendable {
    public var incidentID: Int64
    public var revision: IncidentRevision
    public var contentHash: Int64

    public init(incidentID: Int64, revision: IncidentRevision, contentHash: Int64) {
        self.incidentID = incidentID
        self.revision = revision
        self.contentHash = contentHash
    }
}

/// A quarantined record with its row id (ids keep response order).
public struct RejectionRecord: Equatable, Sendable {
    public var id: Int64
    public var rejection: StoredRejection

    public init(id: Int64, rejection: StoredRejection) {
        self.id = id
        self.rejection = rejection
    }
}

/// A source's quota state and newest publication time (`source_state`).
public struct QuotaState: Equatable, Sendable {
    public var source: String
    /// nil when the source may run.
    public var exhaustedUntil: UTCInstant?
    /// Log-safe text of the error that exhausted it.
    public var reason: String?
    public var updatedAt: UTCInstant
    /// The newest publication time a current document of the source stated (docs/providers.md, "Time order").
    public var publishedAt: UTCInstant?

    public init(source: String, exhaustedUntil: UTCInstant?, reason: String?, updatedAt: UTCInstant, publishedAt: UTCInstant? = nil) {
        self.source = source
        self.exhaustedUntil = exhaustedUntil
        self.reason = reason
        self.updatedAt = updatedAt
        self.publishedAt = publishedAt
    }
}

/// Row counts of the tables a copy moves.
public struct StoreCounts: Equatable, Sendable, CustomStringConvertible {
    public var incidents = 0
    public var revisions = 0
    public var runs = 0
    public var rejectedRecords = 0
    public var quotaStates = 0

    public init(incidents: Int = 0, revisions: Int = 0, runs: Int = 0, rejectedRecords: Int = 0, quotaStates: Int = 0) {
        self.incidents = incidents
        self.revisions = revisions
        self.runs = runs
        self.rejectedRecords = rejectedRecords
        self.quotaStates = quotaStates
    }

    public var description: String {
        "\(incidents) incidents, \(revisions) revisions, \(runs) runs, \(rejectedRecords) rejected records, \(quotaStates) quota states"
    }
}

/// A store read whole, table by table, each in row id order. Memory does not depend on the
/// number of rows: each row is passed on as it is read. Scheduling leases are not exported
/// (they describe the processes of the old store).
public protocol StoreExport: Sendable {
    /// The number of rows of each table.
    func exportCounts() throws -> StoreCounts
    /// Every incident, by id.
    func exportIncidents(_ row: (IncidentRecord) throws -> Void) throws
    /// Every revision, by incident id, then revision.
    func exportRevisions(_ row: (RevisionRecord) throws -> Void) throws
    /// Every run, by id.
    func exportRuns(_ row: (IngestRun) throws -> Void) throws
    /// Every quarantined record, by id.
    func exportRejections(_ row: (RejectionRecord) throws -> Void) throws
    /// Every source's quota state, by source.
    func exportQuotaStates() throws -> [QuotaState]
}
