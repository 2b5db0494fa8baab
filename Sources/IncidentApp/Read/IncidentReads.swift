import Foundation
import IncidentCore
import IncidentFeeds
import IncidentJSON

/// The read use cases every front end shares (the CLI's `list`, `show`, `stats`, `runs` and
/// `status`; an HTTP server's routes). Each returns values or streams rows; what a front end
/// adds is argument parsing and presentation (a table, text, an HTTP response), and the
/// encoders of ``IncidentOutput`` write to any ``ByteSink``.
enum IncidentReads {
    /// `list`: each incident matching `query`, as listed (its status at `query.now`, its
    /// distance to the `near` point), in the query's order, as the store reads them.
    /// - Throws: the reader's errors, ``QueryError``, or what `row` throws.
    static func list(_ reader: any IncidentReader, _ query: IncidentQuery, _ row: (ListedIncident) throws -> Void) throws {
        try QueryIncidents(reader: reader).forEach(query) { try row(ListedIncident($0, query: query)) }
    }

    /// `list` on the fast path of exports: the rows of ``list(_:_:_:)`` (same statement, same
    /// rows, same order) as the store holds them, each with how to read the list's columns
    /// from it (``ListingCells``, resolved at the first row): a ``ListingRowWriter`` writes
    /// them with no ``Incident`` of Strings per row (issue 23).
    /// - Throws: as ``list(_:_:_:)``.
    static func listRows(_ reader: any ListingRowReader, _ query: IncidentQuery,
                         _ row: (any ListingRow, ListingCells) throws -> Void) throws {
        var cells: ListingCells?
        try reader.forEachListingRow(matching: query) { listing in
            if cells == nil {
                cells = try ListingCells(IncidentOutput.listColumns(withDistance: query.near != nil).map(\.name), in: listing, query: query)
            }
            try row(listing, cells!)
        }
    }

    /// `show`: one incident with its versions and what changed between them; nil when no
    /// incident has that id.
    static func show(_ reader: any IncidentReader, id: Int64, now: UTCInstant) throws -> IncidentDetail? {
        try reader.history(ofIncident: id).map { IncidentDetail($0, now: now) }
    }

    /// `stats`: the counts of the incidents matching `query`, their hours of start in `zone`
    /// (at the offset in force at each start, for a zone with daylight saving time).
    static func statistics(_ reader: any IncidentReader, _ query: IncidentQuery, _ zone: DisplayZone) throws -> IncidentStatistics {
        var stats = try reader.statistics(matching: query, utcOffsetSeconds: zone.fixedOffsetSeconds ?? 0)
        if zone.fixedOffsetSeconds == nil { stats.byHour = try counts(reader, query, by: .hour, per: nil, zone).map { ($0.key, $0.count) } }
        return stats
    }

    /// `stats --by FIELD [--per BUCKET]`: the store's counts; in a zone whose offset changes
    /// (daylight saving time), counts that depend on local time are made by ``GroupCounter`` at
    /// the offset in force at each start, which the store's fixed-offset grouping cannot do.
    static func counts(_ reader: any IncidentReader, _ query: IncidentQuery, by field: IncidentGrouping, per bucket: TimeBucket?,
                       _ zone: DisplayZone) throws -> [GroupCount] {
        if let offset = zone.fixedOffsetSeconds {
            return try reader.groupCounts(matching: query, by: field, per: bucket, utcOffsetSeconds: offset)
        }
        if !field.isTime && bucket == nil { return try reader.groupCounts(matching: query, by: field, per: nil, utcOffsetSeconds: 0) }
        return try GroupCounter.count(reader, matching: query, by: field, per: bucket) { zone.offsetSeconds(at: $0) }
    }

    /// A filter that emptied a result: the parameter as given, and how many incidents match
    /// the other filters without it.
    struct EmptyingFilter: Equatable {
        var name: String
        var values: [String]
        var matchesWithout: Int
    }

    /// Why a query given as catalogue `parameters` (``IncidentFilter/Parameter``) matched
    /// nothing: each parameter whose removal alone lets incidents match (`radius` goes with
    /// `near`), with that count; empty when only several together, or none, emptied it. One
    /// count query per parameter given, run only for an empty answer.
    /// - Throws: what the store throws.
    static func emptyingFilters(_ reader: any IncidentReader, parameters: [(name: String, values: [String])],
                                context: IncidentFilter.ParsingContext) throws -> [EmptyingFilter] {
        var found: [EmptyingFilter] = []
        for (name, values) in parameters where name != IncidentFilter.Parameter.radius.name {
            let others = parameters.filter { $0.name != name && !(name == IncidentFilter.Parameter.near.name && $0.name == IncidentFilter.Parameter.radius.name) }
            guard let query = try? IncidentQuery(parameters: others, context: context) else { continue }
            let total = try reader.statistics(matching: query, utcOffsetSeconds: 0).total
            if total > 0 { found.append(EmptyingFilter(name: name, values: values, matchesWithout: total)) }
        }
        return found
    }

    /// `runs`: the run log, newest first (failed runs first with `failuresFirst`).
    static func runs(_ reader: any IncidentReader, source: String?, limit: Int, failuresFirst: Bool) throws -> [IngestRun] {
        try reader.runs(source: source, limit: limit, failuresFirst: failuresFirst)
    }

    /// `status`: the health of each configured source at `now`; stale when its last success is
    /// older than `staleAfter` of its intervals (or it never succeeded).
    static func status(_ reader: any IncidentReader, sources: [SourceDefinition], staleAfter intervals: Int,
                       now: UTCInstant) throws -> [SourceHealth] {
        let (summaries, active) = (try reader.sourceSummaries(), try reader.activeIncidentCounts(at: now))
        let byName = Dictionary(summaries.map { ($0.source, $0) }, uniquingKeysWith: { first, _ in first })
        return sources.map { source in
            let summary = byName[source.name] ?? SourceSummary(source: source.name)
            let horizon = now.adding(seconds: -Int64(intervals) * source.intervalSeconds)
            return SourceHealth(source: source, summary: summary, activeIncidents: active[source.name] ?? 0,
                                stale: summary.lastSuccessAt.map { $0 < horizon } ?? true,
                                pausedUntil: summary.quotaExhaustedUntil.flatMap { $0 > now ? $0 : nil })
        }
    }
}

/// One incident as `show` gives it: its history, its status now, every version and the field
/// changes from each to the next.
struct IncidentDetail {
    var history: IncidentHistory
    /// At the `now` it was read at (``StoredIncident/status(at:)``).
    var status: IncidentStatus
    /// Every version, oldest first, the current one last.
    var versions: [Version]
    /// One per version after the first: what changed from the one before.
    var changes: [Change]

    /// The change from one version to the next.
    struct Change {
        var revision: Int
        /// When a poll first saw the new version.
        var from: UTCInstant
        /// The version before was cleared: this one is a reopening.
        var reopened: Bool
        /// The content fields whose value differs, in column order: (name, old, new).
        var fields: [(String, FieldValue, FieldValue)]
    }

    init(_ history: IncidentHistory, now: UTCInstant) {
        self.history = history
        status = history.current.status(at: now)
        let versions = Self.versions(history)
        self.versions = versions
        changes = versions.indices.dropFirst().map { index in
            Change(revision: versions[index].revision, from: versions[index].from, reopened: versions[index - 1].clearedAt != nil,
                   fields: Self.changes(from: versions[index - 1], to: versions[index]))
        }
    }

    /// One version of the incident: a revision, or the current row.
    struct Version {
        var revision: Int
        var incident: Incident
        var clearedAt: UTCInstant?
        /// When a poll first saw this version: first seen for revision 1, else when the
        /// previous version was superseded.
        var from: UTCInstant
        var isCurrent: Bool
    }

    /// Every version, oldest first, the current one last.
    static func versions(_ history: IncidentHistory) -> [Version] {
        let current = history.current
        var versions: [Version] = []
        var from = current.firstSeenAt
        for revision in history.revisions {
            versions.append(Version(revision: revision.revision, incident: revision.incident, clearedAt: revision.clearedAt,
                                    from: from, isCurrent: false))
            from = revision.supersededAt
        }
        versions.append(Version(revision: current.revision, incident: current.incident, clearedAt: current.clearedAt,
                                from: from, isCurrent: true))
        return versions
    }

    /// The fields a version has: every content field of ``IncidentOutput/fields(_:)``, and
    /// `cleared_at` when `cleared`.
    static func fields(_ version: Version, cleared: Bool = false) -> [(String, FieldValue)] {
        let snapshot = StoredIncident(id: 0, incident: version.incident, firstSeenAt: version.from, lastSeenAt: version.from,
                                      clearedAt: version.clearedAt, revision: version.revision)
        return IncidentOutput.fields(snapshot).filter {
            !["id", "source", "external_id", "first_seen_at", "last_seen_at", "revision"].contains($0.0)
                && (cleared || $0.0 != "cleared_at")
        }
    }

    /// The content fields whose value differs between `old` and `new`, in column order:
    /// (name, old, new). Clearing is not a field change: it happens during a version (its
    /// `clearedAt`), and the next version, if any, is a reopening.
    static func changes(from old: Version, to new: Version) -> [(String, FieldValue, FieldValue)] {
        zip(fields(old), fields(new)).compactMap { a, b in
            a.1.json == b.1.json ? nil : (a.0, a.1, b.1)
        }
    }
}

/// The health of one configured source (`incident-scheduler status`).
struct SourceHealth {
    var source: SourceDefinition
    var summary: SourceSummary
    var activeIncidents: Int
    var stale: Bool
    var pausedUntil: UTCInstant?

    /// `stale`, `paused`, `failing` or `ok`, the first that applies.
    var state: String {
        if stale { return "stale" }
        if pausedUntil != nil { return "paused" }
        return summary.consecutiveFailures > 0 ? "failing" : "ok"
    }

    /// The error of the last run when it stored nothing.
    var lastError: String? {
        guard let run = summary.lastRun, !run.status.stored else { return nil }
        return run.error
    }
}

/// What `status` concludes from the sources' health, for monitoring: stale sources first
/// (`incident-scheduler status` exits 3), then failing ones (exit 1), else every source is ok or
/// paused for its quota (exit 0). `incidents serve`'s `/status` says the same with its HTTP
/// status: 200 for ok, 503 for either of the others.
struct StatusVerdict {
    /// The sources (or other things, such as the metrics file) whose last success is too old.
    var stale: [String]
    /// The sources whose last runs failed, though they are not stale yet.
    var failing: [String]

    init(_ health: [SourceHealth]) {
        stale = health.filter(\.stale).map(\.source.name)
        failing = health.filter { $0.state == "failing" }.map(\.source.name)
    }

    var isOK: Bool { stale.isEmpty && failing.isEmpty }

    /// - Throws: ``StaleSources`` (exit 3) or ``FailingSources`` (exit 1) unless ``isOK``.
    func check(intervals: Int) throws {
        if !stale.isEmpty { throw StaleSources(sources: stale, intervals: intervals) }
        if !failing.isEmpty { throw FailingSources(sources: failing) }
    }
}

extension IncidentOutput {
    /// `status --format json`: an array of each source's ``fields(_:intervals:)``.
    static func json(_ health: [SourceHealth], intervals: Int) -> String {
        JSONText.array(health.map { object(fields($0, intervals: intervals)) })
    }

    /// The JSON fields of one run: snake_case, as the run log's columns.
    static func fields(_ run: IngestRun) -> [(String, FieldValue)] {
        let c = run.counts
        let file: String? = if case .file(let path, _) = run.origin { path } else { nil }
        return [
            ("id", .integer(run.id ?? 0)), ("source", .text(run.source)), ("status", .text(run.status.rawValue)),
            ("origin", .text(file == nil ? "live" : "file")), ("file", .text(file)),
            ("started_at", .text(run.startedAt.rfc3339)), ("finished_at", .text(run.finishedAt.rfc3339)),
            ("observed_at", .text(run.observedAt.rfc3339)), ("published_at", .text(run.publishedAt?.rfc3339)),
            ("fetched", .integer(Int64(c.fetched))), ("inserted", .integer(Int64(c.inserted))),
            ("updated", .integer(Int64(c.updated))), ("unchanged", .integer(Int64(c.unchanged))),
            ("reopened", .integer(Int64(c.reopened))), ("cleared", .integer(Int64(c.cleared))),
            ("rejected", .integer(Int64(c.rejected))), ("duplicates", .integer(Int64(c.duplicates))),
            ("error", .text(run.error)), ("warnings", .texts(run.warnings)), ("host", .text(run.host)),
        ]
    }

    /// The JSON fields of one source: snake_case, instants RFC 3339 UTC, null when absent.
    static func fields(_ h: SourceHealth, intervals: Int) -> [(String, FieldValue)] {
        let run = h.summary.lastRun
        return [
            ("source", .text(h.source.name)), ("provider", .text(h.source.provider)), ("health", .text(h.state)),
            ("stale_after_seconds", .integer(Int64(intervals) * h.source.intervalSeconds)),
            ("interval_seconds", .integer(h.source.intervalSeconds)),
            ("last_success_at", .text(h.summary.lastSuccessAt?.rfc3339)), ("last_run_at", .text(run?.finishedAt.rfc3339)),
            ("last_run_status", .text(run?.status.rawValue)), ("failing_since", .text(h.summary.failingSince?.rfc3339)),
            ("consecutive_failures", .integer(Int64(h.summary.consecutiveFailures))), ("last_error", .text(h.lastError)),
            ("stale_runs", .integer(Int64(h.summary.staleRuns))),
            ("quota_paused_until", .text(h.pausedUntil?.rfc3339)), ("active_incidents", .integer(Int64(h.activeIncidents))),
        ]
    }
}
