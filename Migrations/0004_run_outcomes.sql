-- 0004: how each poll ended and where its response came from; records set aside.
-- Forward-only: never edit this file after it has landed.

-- The run log gains the `incomplete` status (stored, nothing cleared), the origin of the
-- response (a live poll or a replayed file), when the response was fetched, counts of
-- quarantined and repeated records, warnings (one per line) and the scheduler's host.
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt
-- (https://www.sqlite.org/lang_altertable.html#otheralter).
CREATE TABLE ingest_runs_new (
    id          INTEGER PRIMARY KEY,
    source      TEXT    NOT NULL,
    started_at  TEXT    NOT NULL,
    finished_at TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'incomplete', 'failed', 'cancelled', 'skipped')),
    fetched     INTEGER NOT NULL DEFAULT 0,
    inserted    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    unchanged   INTEGER NOT NULL DEFAULT 0,
    reopened    INTEGER NOT NULL DEFAULT 0,
    cleared     INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    rejected    INTEGER NOT NULL DEFAULT 0,
    duplicates  INTEGER NOT NULL DEFAULT 0,
    origin      TEXT    NOT NULL DEFAULT 'live' CHECK (origin IN ('live', 'file')),
    file        TEXT,    -- the replayed file's path (origin 'file')
    observed_at TEXT,    -- when the response was fetched; NULL in runs older than 0004
    warnings    TEXT,    -- one per line: why the poll was incomplete, then other notes
    host        TEXT     -- the host name of the scheduler that ran the poll
);
INSERT INTO ingest_runs_new (id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged,
                             reopened, cleared, error)
    SELECT id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened, cleared, error
    FROM ingest_runs;
DROP TABLE ingest_runs;
ALTER TABLE ingest_runs_new RENAME TO ingest_runs;
CREATE INDEX ingest_runs_by_source ON ingest_runs (source, id);

-- Records a poll could not read faithfully (a bad value, a repeated field, no id), kept with
-- the reason and a redacted excerpt instead of stopping the source. Removed with their run.
CREATE TABLE rejected_records (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES ingest_runs (id) ON DELETE CASCADE,
    source      TEXT    NOT NULL,
    external_id TEXT,    -- when the record's id could be read
    position    TEXT    NOT NULL,  -- where in the response, e.g. "itemList at line 12"
    reason      TEXT    NOT NULL,
    excerpt     TEXT,
    rejected_at TEXT    NOT NULL
);
CREATE INDEX rejected_records_by_run ON rejected_records (run_id);
CREATE INDEX rejected_records_by_incident ON rejected_records (source, external_id);
