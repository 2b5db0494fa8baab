import IncidentCore
internal import CSQLite3

extension SQLiteStore: IngestStore {
    public func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
        try withDatabase { db in
            try db.execute("BEGIN IMMEDIATE")
            do {
                var run = IngestRun(source: poll.source, startedAt: poll.startedAt, finishedAt: poll.startedAt,
                                    status: .succeeded, origin: poll.origin, observedAt: poll.observedAt, host: poll.host)
                let runID = try RunRow.insert(run, running: true, db: db)
                let writer = try PollWriter(db: db, columns: columns, poll: poll, runID: runID)
                defer { writer.restoreCacheSize() }
                let verdict = try produce(writer)
                try writer.createDeferredIndexes()
                let publication = try Publication(stated: verdict.publishedAt, poll: poll,
                                                  newestApplied: try Self.newestPublication(of: poll.source, db: db))
                run.counts = try writer.counts()
                var outcome = PollOutcome(verdict: verdict, counts: run.counts, rejectedWithoutID: writer.rejectedWithoutID,
                                          older: writer.older, poll: poll, publication: publication)
                run.counts.cleared = try outcome.clear(writer, poll: poll)
                try writer.finish()
                if let newest = publication.newestApplied(after: poll) {
                    try Self.recordPublication(newest, of: poll.source, at: poll.startedAt, db: db)
                }
                run.id = runID
                run.status = outcome.status
                run.warnings = outcome.runWarnings
                run.publishedAt = verdict.publishedAt
                run.finishedAt = clock.now()
                try RunRow.finish(run, db: db)
                if poll.dryRun {
                    try db.execute("ROLLBACK")
                    run.id = nil
                    writer.restoreCacheSize()
                } else {
                    try db.execute("COMMIT")
                    writer.restoreCacheSize()
                    // Committed: a failure here changes no answer (see countHours).
                    _ = try? PollTransitions.countHours(before: poll.startedAt, db: db)
                    db.checkpoint()
                }
                return run
            } catch {
                db.rollbackQuietly()
                throw error
            }
        }
    }

    public func recordRun(_ run: IngestRun) throws {
        try withDatabase { db in
            try db.writeTransaction {
                _ = try RunRow.insert(run, running: false, db: db)
                if let resumesAt = run.resumesAt {
                    try db.run("""
                        INSERT INTO source_state (source, exhausted_until, exhausted_reason, updated_at)
                        VALUES (:source, :until, :reason, :updated_at)
                        ON CONFLICT (source) DO UPDATE SET exhausted_until = excluded.exhausted_until,
                            exhausted_reason = excluded.exhausted_reason, updated_at = excluded.updated_at
                        """, ["source": .text(run.source), "until": .text(resumesAt.rfc3339),
                              "reason": .optional(run.error), "updated_at": .text(run.finishedAt.rfc3339)])
                }
            }
        }
    }

    /// The newest publication time a current document of `source` stated (`source_state`).
    static func newestPublication(of source: String, db: Database) throws -> UTCInstant? {
        var newest: UTCInstant?
        try db.query("SELECT published_at FROM source_state WHERE source = :source", ["source": .text(source)]) {
            newest = $0.instant(at: 0)
        }
        return newest
    }

    /// Keeps `instant` as the newest publication time of `source`, unless a later one is kept,
    /// by the poll that started at `now`.
    static func recordPublication(_ instant: UTCInstant, of source: String, at now: UTCInstant, db: Database) throws {
        try db.run("""
            INSERT INTO source_state (source, published_at, updated_at) VALUES (:source, :published_at, :updated_at)
            ON CONFLICT (source) DO UPDATE SET published_at = max(coalesce(published_at, ''), excluded.published_at),
                updated_at = excluded.updated_at
            """, ["source": .text(source), "published_at": .text(instant.rfc3339), "updated_at": .text(now.rfc3339)])
    }

    public func quotaResumesAt(source: String) throws -> UTCInstant? {
        try withDatabase { db in
            var until: UTCInstant?
            try db.query("SELECT exhausted_until FROM source_state WHERE source = :source", ["source": .text(source)]) {
                until = $0.instant(at: 0)
            }
            return until
        }
    }
}

/// Writes one poll's records inside the store's open transaction.
///
/// Per incident, usually one statement:
/// - *touch*: `UPDATE … SET last_seen_at, last_seen_run_id WHERE (source, external_id) matches
///   AND content_hash is the same AND not cleared AND not yet listed by this poll` — the
///   incident is unchanged;
/// - *guarded upsert*: insert a new `(source, external_id)`, or, for a known one with the same
///   content hash that is not cleared and not yet listed by this poll, do the touch (the
///   statement the benchmark's C ceiling runs, plus the guard);
/// - anything else changes no row and takes the slow path: an id this poll already listed is a
///   duplicate (the first occurrence was kept), or with other content a twin, set aside; a
///   response older than the stored state of the incident (a replayed file, a stale document)
///   only moves `first_seen_at` earlier; otherwise the content
///   changed, or the incident had been cleared: the previous values go to
///   `incident_revisions`, the row is updated and `revision` incremented.
///
/// Seen times: `first_seen_at` is the earliest and `last_seen_at` the latest observation of
/// the incident, whatever order responses are ingested in (a replayed file never moves them
/// to the time of the replay).
///
/// Either of the first two settles most records; which one to try first is guessed from the
/// record before (a poll is mostly new incidents — a first poll, a backfill — or mostly unchanged
/// ones — every later poll — or, after the provider rewrote its texts, mostly changed ones),
/// because a miss costs a whole statement: trying the touch first cost a fresh 30,000-record
/// ingest 10 % more instructions, trying the upsert first cost an unchanged re-ingest 12 % more
/// (callgrind), and a changed record after a changed one goes straight to the slow path's
/// lookup, which settles a new or unchanged record too (a touch and an upsert that both missed
/// were 7 % of the SQL time of a poll in which all 100,000 records changed). The guess never
/// changes the outcome: inserted rows are counted at the end, as the rows with an id above the
/// largest before the poll.
///
/// The derived structures (``DerivedIndexes``) follow in ``finish()``: for the poll's changed
/// incidents (their previous values kept before each change) and its new ones, all at once.
final class PollWriter: PollSink, UnlistedIncidents {
    private let db: Database
    private let columns: ContentColumns
    private let poll: PollContext
    private let runID: Int64
    /// The largest incident id before this poll: the poll's new incidents have larger ones.
    private let lastIDBefore: Int64
    private(set) var fetched = 0
    /// Rows the touch or the guarded upsert changed: inserted or unchanged.
    private var insertedOrUnchanged = 0
    private var updated = 0
    private var reopened = 0
    private var duplicates = 0
    private var rejected = 0
    private(set) var rejectedWithoutID = 0
    private(set) var older = 0
    /// The ids this poll listed first by a record whose content the row does not hold: a record
    /// set aside (nil until the first readable one comes), or an older one with other content
    /// (its content hash). Twins are told from repeats by it; empty in a current poll of
    /// readable records (a replay of an old file holds one entry per changed record).
    private var firstsNotStored: [String: Int64?] = [:]
    /// What the previous record was, and so which statement to try first for the next.
    private enum Guess {
        /// Unchanged: the touch.
        case unchanged
        /// New: the guarded upsert.
        case new
        /// Changed, reopened, older or listed twice: the slow path's lookup.
        case changed
    }
    private var guess: Guess

    private let touch: Statement
    private let touchParameters: (observed: Statement.Parameter, run: Statement.Parameter, source: Statement.Parameter,
                                  externalID: Statement.Parameter, hash: Statement.Parameter)
    private let upsertStatement: Statement
    private let upsertBinder: ContentColumns.Binder
    private let upsertParameters: (source: Statement.Parameter, externalID: Statement.Parameter, hash: Statement.Parameter,
                                   observed: Statement.Parameter, run: Statement.Parameter)
    /// The positions in `columns.fields` of the fields stored in one column that an index of
    /// `incidents` holds (``indexedColumns``), in the order of the lookup's columns.
    private let indexedFields: [Int]
    /// The statements that write a change (``change(writing:reopening:)``), by what they write.
    private var changes: [Int: (statement: Statement, binder: ContentColumns.Binder, fields: [Int])] = [:]
    /// A change's update without a new revision: a row stored before migrations added fields takes them
    /// in place (``Incident/hashWithoutAddedFields``).
    private let fill: Statement
    private let fillBinder: ContentColumns.Binder
    /// The `CREATE INDEX` statements of the indexes of `incidents` dropped for a load into an
    /// empty table (``dropIndexes(of:)``), until ``createDeferredIndexes()``.
    private var deferredIndexes: [String] = []
    /// The same for `incident_listed_open`, until the end of ``finish()``, which fills it.
    private var deferredIntervalIndexes: [String] = []
    /// Whether the database held no incident and no log entry of one before the poll
    /// (``PollTransitions/isUnlogged(lastIDBefore:db:)``): a first poll, a load into an emptied database.
    private let unlogged: Bool
    /// The connection's page cache size before the poll (`PRAGMA cache_size`), restored by
    /// ``restoreCacheSize()``.
    private let cacheSizeBefore: Int64
    private var cacheRestored = false

    init(db: Database, columns: ContentColumns, poll: PollContext, runID: Int64) throws {
        self.db = db
        self.columns = columns
        self.poll = poll
        self.runID = runID
        touch = try db.cachedStatement("""
            UPDATE incidents SET last_seen_at = max(last_seen_at, :observed), first_seen_at = min(first_seen_at, :observed),
                last_seen_run_id = :run
            WHERE source = :source AND external_id = :external_id AND content_hash = :content_hash
              AND cleared_at IS NULL AND last_seen_run_id <> :run
            """)
        touchParameters = (try touch.parameter("observed"), try touch.parameter("run"), try touch.parameter("source"),
                           try touch.parameter("external_id"), try touch.parameter("content_hash"))
        upsertStatement = try db.cachedStatement("""
            INSERT INTO incidents (source, external_id, \(columns.list), content_hash,
                revision, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id)
            VALUES (:source, :external_id, \(columns.parameters), :content_hash, 1, :observed, :observed, :run, :run)
            ON CONFLICT (source, external_id) DO UPDATE
                SET last_seen_at = max(last_seen_at, excluded.last_seen_at),
                    first_seen_at = min(first_seen_at, excluded.first_seen_at),
                    last_seen_run_id = excluded.last_seen_run_id
                WHERE content_hash = excluded.content_hash AND cleared_at IS NULL
                  AND last_seen_run_id <> excluded.last_seen_run_id
            """)
        upsertBinder = try columns.binder(for: upsertStatement)
        upsertParameters = (try upsertStatement.parameter("source"), try upsertStatement.parameter("external_id"),
                            try upsertStatement.parameter("content_hash"), try upsertStatement.parameter("observed"),
                            try upsertStatement.parameter("run"))
        indexedFields = columns.fields.indices.filter { i in
            let field = columns.fields[i]
            return field.columns.count == 1 && Self.indexedColumns.contains(field.columns[0])
                && [.text, .instant].contains(field.storage)
        }
        fill = try db.cachedStatement("""
            UPDATE incidents SET \(columns.assignments), content_hash = :content_hash,
                last_seen_at = max(last_seen_at, :observed), first_seen_at = min(first_seen_at, :observed), last_seen_run_id = :run
            WHERE id = :id
            """)
        fillBinder = try columns.binder(for: fill)
        guess = try db.scalarInt("SELECT EXISTS (SELECT 1 FROM incidents WHERE source = :source)",
                                 ["source": .text(poll.source)]) == 1 ? .unchanged : .new
        lastIDBefore = try db.scalarInt("SELECT coalesce(max(id), 0) FROM incidents") ?? 0
        unlogged = try PollTransitions.isUnlogged(lastIDBefore: lastIDBefore, db: db)
        listed = try PollTransitions.prepareListed(for: poll, unlogged: unlogged, db: db)
        cacheSizeBefore = try db.scalarInt("PRAGMA cache_size") ?? -2000
        if lastIDBefore == 0 {
            deferredIndexes = try dropIndexes(of: "incidents")
            try setCacheSize(kibibytes: Self.largeCacheKiB)
        }
        if try db.scalarInt("SELECT max(id) IS NULL FROM incident_listed_open") == 1 {
            deferredIntervalIndexes = try dropIndexes(of: "incident_listed_open")
        }
        try PollTransitions.prepare(db: db)
        try DerivedIndexes.prepareChanges(in: db)
    }

    /// A replay's or a stale document's record of the ids it lists (``PollTransitions/prepareListed(for:unlogged:db:)``);
    /// nil for a live poll and an unlogged one.
    private let listed: Statement?

    /// Notes that this poll lists `externalID` (a replay's or a stale document's history starts from them).
    private func noteListed(_ externalID: String) throws {
        guard let listed else { return }
        listed.reset()
        try listed.bind(["external_id": .text(externalID)])
        try listed.run()
    }

    /// A poll into a database with no incidents (a first poll, a backfill) inserts every row:
    /// each index of `incidents` but the unique key the upsert needs is dropped for the load and
    /// created again after it (``createDeferredIndexes()``), from one sort of the table each,
    /// instead of kept row by row, as the bench's ceiling builds them (issue 23); so are the
    /// indexes of `incident_listed_open` when it is empty, created at the end of ``finish()``,
    /// which fills it (one open interval per new incident: its start index took them in random
    /// order). In the poll's transaction: a poll that fails or is rolled back leaves them as they
    /// were. Returns the `CREATE INDEX` statements of the indexes dropped.
    private func dropIndexes(of table: String) throws -> [String] {
        var indexes: [(name: String, sql: String)] = []
        try db.query("""
            SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = :table AND sql IS NOT NULL ORDER BY name
            """, ["table": .text(table)]) { row in
            if let name = row.string(at: 0), let sql = row.string(at: 1) { indexes.append((name, sql)) }
        }
        for index in indexes {
            try db.execute("DROP INDEX \"\(index.name)\"")
        }
        return indexes.map(\.sql)
    }

    /// Creates the indexes of `incidents` ``dropIndexes(of:)`` dropped; the store calls it when
    /// the poll's records are in, before anything reads the table by those indexes.
    func createDeferredIndexes() throws {
        // Each index's sort buffer is the size of the page cache: SQLite's default for them.
        try setCacheSize(kibibytes: nil)
        for sql in deferredIndexes { try db.execute(sql) }
        deferredIndexes = []
    }

    /// The page cache of a load into an empty table (``init``) and of the search index's and the
    /// R*Tree's fill after it (``finish()``), in KiB; SQLite's default (2 MiB) otherwise. The
    /// unique key the load's upsert keeps (about 25 bytes an incident) and the R*Tree's nodes
    /// then stay in memory instead of being read and written again through the -wal at each
    /// record (a fresh 300,000-record ingest spent a quarter of its CPU in the kernel, issue 23).
    /// Not while sorting (``createDeferredIndexes()``, the counts): a sorter's buffer is the size
    /// of the cache, one per `GROUP BY`. With 12 MiB a fresh 300,000-record ingest peaked at
    /// 41.6 MiB from a file and 58.6 MiB over HTTP (`Scripts/bench`; 16 MiB took a file ingest
    /// 4.5 MiB higher), within the 64 MiB budget (issue 23).
    static let largeCacheKiB = 12 << 10

    /// Sets the page cache to `kibibytes`, or to what it was before the poll (nil).
    private func setCacheSize(kibibytes: Int?) throws {
        try db.execute("PRAGMA cache_size = \(kibibytes.map { -Int64($0) } ?? cacheSizeBefore)")
    }

    /// Sets the page cache back to what it was before the poll and, when the poll had a larger
    /// one, gives its memory back to the system (the pages SQLite frees stay in the process's
    /// heap otherwise, and the hours counted after the commit would sort on top of them); the
    /// store calls it when the poll's transaction ends, whether it succeeded or not.
    func restoreCacheSize() {
        guard !cacheRestored else { return }
        cacheRestored = true
        try? setCacheSize(kibibytes: nil)
        guard lastIDBefore == 0 else { return }
        try? db.execute("PRAGMA shrink_memory")
        csqlite3_trim_heap()
    }

    func upsert(_ incident: Incident) throws {
        fetched += 1
        try noteListed(incident.externalID)
        let (values, hash) = columns.values(of: incident)
        switch guess {
        case .unchanged:
            if try touched(incident, hash: hash) { return }
        case .changed:
            if try slowPath(incident, values: values, hash: hash) { return }
        case .new:
            break
        }
        try insertOrTouch(incident, values: values, hash: hash)
    }

    /// The touch: true when it found the incident unchanged (and counted it).
    private func touched(_ incident: Incident, hash: Int64) throws -> Bool {
        touch.reset()
        try touch.bind(poll.observedAt, to: touchParameters.observed)
        try touch.bind(runID, to: touchParameters.run)
        try touch.bind(poll.source, to: touchParameters.source)
        try touch.bind(incident.externalID, to: touchParameters.externalID)
        try touch.bind(hash, to: touchParameters.hash)
        try touch.run()
        guard db.changes == 1 else { return false }
        insertedOrUnchanged += 1
        guess = .unchanged
        return true
    }

    /// The guarded upsert, then the slow path for what it refused.
    private func insertOrTouch(_ incident: Incident, values: [IncidentValue], hash: Int64) throws {
        upsertStatement.reset()
        try upsertStatement.bind(poll.source, to: upsertParameters.source)
        try upsertStatement.bind(incident.externalID, to: upsertParameters.externalID)
        try upsertBinder.bind(values, to: upsertStatement)
        try upsertStatement.bind(hash, to: upsertParameters.hash)
        try upsertStatement.bind(poll.observedAt, to: upsertParameters.observed)
        try upsertStatement.bind(runID, to: upsertParameters.run)
        let rowIDBefore = db.lastInsertRowID
        try upsertStatement.run()
        // One row changed: inserted or touched. None: the guard refused the update. (Not
        // RETURNING: it materializes its rows in a temporary b-tree per statement, which cost a
        // third more than the insert itself.)
        if db.changes == 1 {
            insertedOrUnchanged += 1
            // An upsert that took the update branch leaves last_insert_rowid as it was.
            guess = db.lastInsertRowID == rowIDBefore ? .unchanged : .new
            return
        }
        guard try slowPath(incident, values: values, hash: hash) else {
            throw SQLiteError(code: .error, message: "incident \(incident.externalID) vanished during its upsert")
        }
    }

    /// A known incident that is listed twice, older than the stored state, changed or reopened;
    /// an unchanged one is touched. False, with nothing done, when the incident is not stored.
    private func slowPath(_ incident: Incident, values: [IncidentValue], hash: Int64) throws -> Bool {
        let lookup = try db.cachedStatement("""
            SELECT id, cleared_at IS NOT NULL AS cleared, last_seen_run_id, content_hash,
                   max(last_seen_at, coalesce(cleared_at, '')) AS latest\(indexedFields.map { ", " + columns.fields[$0].columns[0] }.joined())
            FROM incidents WHERE source = :source AND external_id = :external_id
            """)
        try lookup.bind(["source": .text(poll.source), "external_id": .text(incident.externalID)])
        guard try lookup.step(), let id = lookup.int64(at: try lookup.column("id")) else {
            lookup.reset()
            return false
        }
        let wasCleared = lookup.int64(at: try lookup.column("cleared")) == 1
        let listedByThisPoll = lookup.int64(at: try lookup.column("last_seen_run_id")) == runID
        let latest = lookup.string(at: try lookup.column("latest")) ?? ""
        let storedHash = lookup.int64(at: try lookup.column("content_hash"))
        // The indexed fields whose stored text is not the text the record's value is written as.
        var indexedChanged = 0
        for (bit, field) in indexedFields.enumerated() {
            let stored = lookup.string(at: Int32(5 + bit))  // after the five columns above
            let written: String? = switch values[field] {
            case .text(let text): text
            case .instant(let instant): instant.rfc3339
            default: nil
            }
            if stored != written { indexedChanged |= 1 << bit }
        }
        lookup.reset()
        // What the touch would have settled (the guard of the upsert).
        if storedHash == hash, !wasCleared, !listedByThisPoll {
            guard try touched(incident, hash: hash) else {
                throw SQLiteError(code: .error, message: "incident \(incident.externalID) changed during its upsert")
            }
            return true
        }
        guess = .changed
        // The same id twice in one response: the first occurrence wins. Taking each in turn
        // would record two revisions per poll forever. With other content ("twins") the later
        // one is set aside with the reason.
        if listedByThisPoll {
            let first: Int64?
            switch firstsNotStored[incident.externalID] {
            case .some(.some(let hash)): first = hash
            case .some(.none):
                // Its first listing was a record set aside: this is its first readable one.
                firstsNotStored[incident.externalID] = hash
                first = hash
            case .none: first = storedHash
            }
            if first == hash {
                duplicates += 1
            } else {
                try quarantine(RejectedRecord.twin(of: incident, position: fetched))
            }
            return true
        }
        if poll.stale != nil || poll.observedAt.rfc3339 < latest {
            if hash != storedHash { firstsNotStored[incident.externalID] = hash }
            older += 1
            try db.run("""
                UPDATE incidents SET first_seen_at = min(first_seen_at, :observed), last_seen_run_id = :run WHERE id = :id
                """, ["observed": .text(poll.observedAt.rfc3339), "run": .integer(runID), "id": .integer(id)])
            return true
        }
        /// Writes the record's values of `fields` (all by default) over the stored row `id`.
        func overwrite(_ statement: Statement, _ binder: ContentColumns.Binder, fields: [Int]? = nil) throws {
            statement.reset()
            try binder.bind(fields.map { $0.map { values[$0] } } ?? values, to: statement)
            try statement.bind(hash, to: try statement.parameter("content_hash"))
            try statement.bind(poll.observedAt, to: try statement.parameter("observed"))
            try statement.bind(runID, to: try statement.parameter("run"))
            try statement.bind(id, to: try statement.parameter("id"))
            try statement.run()
        }
        // Stored before migrations added fields, and otherwise the same: filled in place.
        if !wasCleared, storedHash == incident.hashWithoutAddedFields {
            try DerivedIndexes.removeBeforeChange(.id(id), in: db)
            try overwrite(fill, fillBinder)
            insertedOrUnchanged += 1
            return true
        }
        // Changed, or cleared and back: archive the current values, then overwrite them.
        try db.run("""
            INSERT INTO incident_revisions (incident_id, revision, \(columns.list), content_hash, cleared_at, superseded_at)
            SELECT id, revision, \(columns.list), content_hash, cleared_at, :superseded_at FROM incidents WHERE id = :id
            """, ["superseded_at": .text(poll.observedAt.rfc3339), "id": .integer(id)])
        try DerivedIndexes.removeBeforeChange(.id(id), in: db)
        let change = try change(writing: indexedChanged, reopening: wasCleared)
        try overwrite(change.statement, change.binder, fields: change.fields)
        try PollTransitions.changed(id, position: fetched, at: poll.observedAt, fields: columns.fields, db: db)
        if wasCleared { reopened += 1 } else { updated += 1 }
        return true
    }

    /// The content columns an index of `incidents` holds (migrations 0005, 0006, 0008): SQLite
    /// moves a row's entries in every index on a column an UPDATE sets, whatever its value, so a
    /// change sets these only when they changed (a poll in which all 100,000 descriptions
    /// changed moved six indexes' entries of every row, for nothing). A column missing here is
    /// always written: slower, never wrong.
    static let indexedColumns: Set<String> = ["category", "road", "road_ref", "started_at", "ended_at", "validity"]

    /// The update of a change: every content field but the indexed ones whose bit in `indexed`
    /// (over ``indexedFields``) is clear, a new revision, and for a reopening no clear time.
    private func change(writing indexed: Int, reopening: Bool) throws -> (statement: Statement, binder: ContentColumns.Binder, fields: [Int]) {
        let key = indexed << 1 | (reopening ? 1 : 0)
        if let change = changes[key] { return change }
        let fields = columns.fields.indices.filter { i in
            indexedFields.firstIndex(of: i).map { indexed & (1 << $0) != 0 } ?? true
        }
        let written = ContentColumns(fields.map { columns.fields[$0] })
        let statement = try db.cachedStatement("""
            UPDATE incidents SET \(written.assignments), content_hash = :content_hash, revision = revision + 1,
                last_seen_at = max(last_seen_at, :observed), first_seen_at = min(first_seen_at, :observed),
                last_seen_run_id = :run\(reopening ? ", cleared_at = NULL" : "")
            WHERE id = :id
            """)
        let change = (statement, try written.binder(for: statement), fields)
        changes[key] = change
        return change
    }

    func reject(_ record: RejectedRecord) throws {
        fetched += 1
        try quarantine(record)
    }

    /// Stores a record set aside; `fetched` already counts it.
    private func quarantine(_ record: RejectedRecord) throws {
        rejected += 1
        if record.externalID == nil { rejectedWithoutID += 1 }
        try db.run("""
            INSERT INTO rejected_records (run_id, source, external_id, position, reason, excerpt, rejected_at)
            VALUES (:run, :source, :external_id, :position, :reason, :excerpt, :rejected_at)
            """, ["run": .integer(runID), "source": .text(poll.source), "external_id": .optional(record.externalID),
                  "position": .text(record.position), "reason": .text(record.reason), "excerpt": .optional(record.excerpt),
                  "rejected_at": .text(poll.observedAt.rfc3339)])
        try PollTransitions.quarantined(record.externalID, position: fetched, at: poll.observedAt, db: db)
        if let externalID = record.externalID {
            try noteListed(externalID)
            // Listed, though unreadable: this poll must not clear it.
            try db.run("""
                UPDATE incidents SET last_seen_run_id = :run
                WHERE source = :source AND external_id = :external_id AND last_seen_run_id <> :run
                """, ["run": .integer(runID), "source": .text(poll.source), "external_id": .text(externalID)])
            if db.changes == 1 { firstsNotStored[externalID] = .some(nil) }
        }
    }

    /// Marks cleared, at `instant` (the observation time, or for an answer of several pages the
    /// previous complete poll's), every active incident of the source that this complete poll
    /// did not list (nor reject) and that no poll saw at or after that time (an older replay
    /// never clears what a newer poll listed). Reads the source's active set (its index, 0015),
    /// not the source's whole history nor the other sources' active incidents.
    func clearUnlisted(at instant: UTCInstant) throws -> Int {
        try PollTransitions.clearing(at: instant, source: poll.source, runID: runID, db: db)
        try db.run("""
            UPDATE incidents INDEXED BY incidents_active_by_source SET cleared_at = :observed
            WHERE cleared_at IS NULL AND source = :source AND last_seen_run_id <> :run AND last_seen_at < :observed
            """, ["observed": .text(instant.rfc3339), "source": .text(poll.source), "run": .integer(runID)])
        return db.changes
    }

    /// The active incidents of the source this poll did not list and no poll saw at or after it.
    func unlistedActive() throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM incidents INDEXED BY incidents_active_by_source
            WHERE cleared_at IS NULL AND source = :source AND last_seen_run_id <> :run AND last_seen_at < :observed
            """, ["observed": .text(poll.observedAt.rfc3339), "source": .text(poll.source), "run": .integer(runID)]) ?? 0)
    }

    /// The active incidents of the source this poll did not list that a poll saw at or after
    /// it, and the latest time one was seen: read from the source's active set (0015), as the clears.
    func listedLater() throws -> (count: Int, lastSeen: UTCInstant)? {
        var later: (count: Int, lastSeen: UTCInstant)?
        try db.query("""
            SELECT count(*), max(last_seen_at) FROM incidents INDEXED BY incidents_active_by_source
            WHERE cleared_at IS NULL AND source = :source AND last_seen_run_id <> :run AND last_seen_at >= :observed
            """, ["observed": .text(poll.observedAt.rfc3339), "source": .text(poll.source), "run": .integer(runID)]) { row in
            if let count = row.int64(at: 0), count > 0, let lastSeen = row.instant(at: 1) { later = (Int(count), lastSeen) }
        }
        return later
    }

    /// When the source's previous complete poll (`succeeded`) was fetched, before this one.
    func previousCompleteObservation() throws -> UTCInstant? {
        var previous: UTCInstant?
        try db.query("""
            SELECT max(observed_at) FROM ingest_runs
            WHERE source = :source AND status = 'succeeded' AND id <> :run AND observed_at < :observed
            """, ["source": .text(poll.source), "run": .integer(runID), "observed": .text(poll.observedAt.rfc3339)]) {
            previous = $0.instant(at: 0)
        }
        return previous
    }

    /// Adds the poll's new incidents to the derived structures, in the poll's transaction.
    func finish() throws {
        try DerivedIndexes.finishChanges(in: db)
        if lastIDBefore == 0 { try setCacheSize(kibibytes: Self.largeCacheKiB) }
        try DerivedIndexes.addSearchAndBoxes(.after(lastIDBefore), in: db)
        try setCacheSize(kibibytes: nil)
        try DerivedIndexes.addCounts(.after(lastIDBefore), in: db)
        try PollTransitions.append(poll: poll, runID: runID, lastIDBefore: lastIDBefore, unlogged: unlogged, db: db)
        for sql in deferredIntervalIndexes { try db.execute(sql) }
        deferredIntervalIndexes = []
    }

    /// The poll's counts; `cleared` is filled in by the store.
    func counts() throws -> IngestCounts {
        let inserted = Int(try db.scalarInt("SELECT count(*) FROM incidents WHERE id > :last_id_before",
                                            ["last_id_before": .integer(lastIDBefore)]) ?? 0)
        return IngestCounts(fetched: fetched, inserted: inserted, updated: updated,
                            unchanged: insertedOrUnchanged - inserted, reopened: reopened,
                            rejected: rejected, duplicates: duplicates)
    }
}
