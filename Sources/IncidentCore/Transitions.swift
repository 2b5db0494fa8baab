/// The transition log (docs/analyst.md, "History and changes"): what each poll did to each incident it
/// touched, appended in the poll's own transaction, in the order the change feed reads it.

/// What happened to an incident in one poll.
public enum TransitionKind: String, Sendable, CaseIterable, Codable {
    /// First listed by a poll (or, by an older replay or a stale document, listed at a moment
    /// before any logged appearance: history at its own time).
    case appeared
    /// Listed with other content; ``IncidentTransition/fields`` names what changed.
    case revised
    /// Listed with the provider's end time newly set (a revision that ends it).
    case ended
    /// A complete poll no longer listed it (``IncidentTransition/at`` is the instant it was
    /// cleared at: the poll's observation, or for an answer of several pages the previous
    /// complete poll's). Never logged for an incomplete, stale or failed poll.
    case cleared
    /// Listed again after it was cleared.
    case reopened
    /// A record of it was set aside with a reason (``IncidentTransition/externalID`` nil when
    /// its id could not be read).
    case quarantined

    /// The kinds that start or end an incident's active interval (`--at`, `timeline`).
    public static let lifecycle: [TransitionKind] = [.appeared, .reopened, .cleared]
}

/// One entry of the transition log.
public struct IncidentTransition: Hashable, Sendable {
    /// The change feed's cursor: every transition committed later has a larger one, on every
    /// store (PostgreSQL: assigned under a commit-order lock at the end of the poll's
    /// transaction; docs/analyst.md, "History and changes").
    public var cursor: Int64
    public var kind: TransitionKind
    public var source: String
    /// The provider's id; nil for a quarantined record whose id could not be read.
    public var externalID: String?
    /// The stored incident; nil for a quarantined record of no stored incident.
    public var incidentID: Int64?
    /// For `revised`, `ended` and `reopened`: the content fields that changed
    /// (``IncidentField/name``, in ``IncidentField/content`` order); empty otherwise.
    public var fields: [String]
    /// When it happened, by poll evidence: the poll's observation time (a stale document's own
    /// time), or for `cleared` the instant it was cleared at.
    public var at: UTCInstant
    /// The run that logged it (nil when the rebuild of an existing database found none).
    public var runID: Int64?

    public init(cursor: Int64, kind: TransitionKind, source: String, externalID: String?, incidentID: Int64?,
                fields: [String] = [], at: UTCInstant, runID: Int64?) {
        self.cursor = cursor
        self.kind = kind
        self.source = source
        self.externalID = externalID
        self.incidentID = incidentID
        self.fields = fields
        self.at = at
        self.runID = runID
    }
}

/// One item of the change feed: a transition with the incident's current fields and the run
/// that logged it.
public struct IncidentChange: Equatable, Sendable {
    public var transition: IncidentTransition
    /// The incident as stored now; nil for a quarantined record of no stored incident.
    public var incident: StoredIncident?
    /// The run that logged it; nil when it was pruned or the rebuild found none.
    public var run: IngestRun?

    public init(transition: IncidentTransition, incident: StoredIncident?, run: IngestRun?) {
        self.transition = transition
        self.incident = incident
        self.run = run
    }
}

/// The change feed and the log's reads (`incidents changes`, `incidents serve`'s
/// `GET /changes?after=` and its event stream, `--at`, `timeline`).
public protocol ChangeFeedReader: Sendable {
    /// Transitions with a cursor greater than `cursor`, in cursor order, at most `limit`. A
    /// reader that passes the last cursor it received never misses one nor gets one twice,
    /// whatever order concurrent polls commit in. Cursor 0 reads from the start.
    func changes(after cursor: Int64, limit: Int) throws -> [IncidentChange]
    /// The largest cursor committed (0 when the log is empty): where `--follow` from now starts.
    func lastCursor() throws -> Int64
    /// Per source of the run log, by name: its last run started at or before `instant`, and its
    /// last poll then that stored a response (`--at`'s "as of": a source that was failing then
    /// shows it).
    func sourcesAsOf(_ instant: UTCInstant) throws -> [SourceAsOf]
    /// Calls `entry` for every appearance, reopening and clear of a stored incident at or before
    /// `instant`, by incident id, then time, then cursor (intervals of activity: `timeline`).
    func forEachLifecycleEntry(through instant: UTCInstant,
                               _ entry: (_ incidentID: Int64, _ kind: TransitionKind, _ at: UTCInstant) throws -> Void) throws
}

extension ChangeFeedReader {
    /// Refuses a cursor this log never gave: one past its last (``lastCursor()``). Such a cursor
    /// comes from another database, or from this one before it was restored from an older copy;
    /// reading "after" it would wait in silence for transitions that already came.
    /// - Throws: ``QueryError`` naming the cursor, the last one and where to start again.
    public func checkCursor(_ cursor: Int64) throws {
        let last = try lastCursor()
        guard cursor <= last else {
            throw QueryError("cursor \(cursor) is past the change feed's last, \(last): it was not given by this database "
                             + "(another database, or this one restored from an older copy); start again from \(last) or from 0")
        }
    }
}

/// What was known of a source at a moment (``ChangeFeedReader/sourcesAsOf(_:)``).
public struct SourceAsOf: Equatable, Sendable {
    public var source: String
    /// Its last run started at or before the moment, of any status; nil when none had.
    public var lastRun: IngestRun?
    /// Its poll that stored a response (succeeded, incomplete or stale) observed last at or
    /// before the moment (``IngestRun/observedAt``: a replay's `--as-of`, which is also when its
    /// rows count as listed): what was listed at the moment is as of this poll.
    public var lastPoll: IngestRun?

    public init(source: String, lastRun: IngestRun?, lastPoll: IngestRun?) {
        self.source = source
        self.lastRun = lastRun
        self.lastPoll = lastPoll
    }

    /// The statuses of a run that stored a response.
    public static let storedStatuses: [RunStatus] = [.succeeded, .incomplete, .stale]

    /// Groups the runs a store found with ``lastRunIDs(at:)`` by source name: each source's last
    /// run started at or before `instant`, and its poll observed last at or before it.
    public static func grouping(_ runs: [IngestRun], at instant: UTCInstant) -> [SourceAsOf] {
        Dictionary(grouping: runs, by: \.source).map { source, runs in
            let byID = runs.sorted { ($0.id ?? 0) < ($1.id ?? 0) }
            let polls = byID.filter { storedStatuses.contains($0.status) && $0.observedAt <= instant }
            return SourceAsOf(source: source, lastRun: byID.last { $0.startedAt <= instant },
                              lastPoll: polls.max { ($0.observedAt, $0.id ?? 0) < ($1.observedAt, $1.id ?? 0) })
        }.sorted { Array($0.source.utf8).lexicographicallyPrecedes(Array($1.source.utf8)) }
    }

    /// The SQL that selects, per source (of a CTE `sources`), the id of its last run (so that a
    /// source not polled yet at the instant is named), of its last run started at or before the
    /// instant parameter `instant`, and for each status that stores a response the id of its run
    /// of that status observed last at or before it (each a seek of `ingest_runs_by_source` or
    /// `ingest_runs_by_completion`; the same text for both stores). The last run started by the
    /// instant is read back from the last run: on SQLite in `ingest_runs_by_source_started`
    /// (0017), which holds the start, not row by row.
    public static func lastRunIDs(at instant: String) -> String {
        (["""
            SELECT (SELECT max(r.id) FROM ingest_runs r WHERE r.source = s.source) FROM sources s
            """, """
            SELECT (SELECT max(r.id) FROM ingest_runs r WHERE r.source = s.source AND r.started_at <= \(instant)) FROM sources s
            """] + storedStatuses.map { status in
            """
            SELECT (SELECT r.id FROM ingest_runs r WHERE r.source = s.source AND r.status = '\(status.rawValue)' AND r.observed_at <= \(instant)
                ORDER BY r.observed_at DESC, r.id DESC LIMIT 1) FROM sources s
            """
        }).joined(separator: "\nUNION ")
    }
}

extension IncidentField {
    /// The field's name in the transition log and the change feed: its column, or
    /// `coordinate` for the latitude and longitude pair.
    public var name: String { storage == .coordinate ? "coordinate" : columns[0] }

    /// A SQL expression naming, comma-separated in field order, the fields whose columns differ
    /// between the rows `new` and `old` (table aliases with their dot); '' when none differ.
    /// `distinct` is the store's null-safe inequality (`IS NOT` in SQLite, `IS DISTINCT FROM`
    /// in PostgreSQL). A geometry compares its GeoJSON only (its box follows from it).
    public static func changedFieldsSQL(_ fields: [IncidentField], new: String, old: String, distinct: String) -> String {
        let tests = fields.map { field in
            let columns = field.storage == .geometry ? [field.columns[0]] : field.columns
            let differs = columns.map { "\(new)\($0) \(distinct) \(old)\($0)" }.joined(separator: " OR ")
            return "CASE WHEN \(differs) THEN '\(field.name),' ELSE '' END"
        }
        return "rtrim(" + tests.joined(separator: " || ") + ", ',')"
    }
}

extension IncidentChange {
    /// The feed's items for `transitions`, each with its incident and run when found.
    public static func assemble(_ transitions: [IncidentTransition], incidents: [Int64: StoredIncident],
                                runs: [Int64: IngestRun]) -> [IncidentChange] {
        transitions.map { transition in
            IncidentChange(transition: transition, incident: transition.incidentID.flatMap { incidents[$0] },
                           run: transition.runID.flatMap { runs[$0] })
        }
    }
}

extension IncidentTransition {
    /// A stored entry: `fields` as stored (comma-separated names, or nil).
    public init?(cursor: Int64, kind: String, source: String, externalID: String?, incidentID: Int64?, fields: String?,
                 at: UTCInstant?, runID: Int64?) {
        guard let kind = TransitionKind(rawValue: kind), let at else { return nil }
        self.init(cursor: cursor, kind: kind, source: source, externalID: externalID, incidentID: incidentID,
                  fields: fields.map { $0.split(separator: ",").map(String.init) } ?? [], at: at, runID: runID)
    }

    /// `1, 2, 3`: an SQL list of ids (integers, so nothing to escape); `NULL` when empty.
    public static func sqlList(_ ids: some Collection<Int64>) -> String {
        ids.isEmpty ? "NULL" : ids.map(String.init).joined(separator: ", ")
    }
}
