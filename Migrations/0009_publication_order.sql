-- 0009: the time order of a source's documents (issue 19).
-- Forward-only: never edit this file after it has landed.

-- The newest publication time (RFC 3339 UTC) a current document of the source stated: a
-- later poll whose document says it was published earlier is stored as history only (a cache
-- or a replica served an older copy).
ALTER TABLE source_state ADD COLUMN published_at TEXT;

-- The run log gains the `stale` status (stored as history only, nothing overwritten, reopened
-- or cleared) and each run's document publication time. SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt (https://www.sqlite.org/lang_altertable.html
-- #otheralter), and rejected_records with it: with foreign keys on, dropping the old
-- ingest_runs would cascade to the records its runs set aside.
CREATE TABLE ingest_runs_new (
    id           INTEGER PRIMARY KEY,
    source       TEXT    NOT NULL,
    started_at   TEXT    NOT NULL,
    finished_at  TEXT,
    status       TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'incomplete', 'stale', 'failed', 'cancelled', 'skipped')),
    fetched      INTEGER NOT NULL DEFAULT 0,
    inserted     INTEGER NOT NULL DEFAULT 0,
    updated      INTEGER NOT NULL DEFAULT 0,
    unchanged    INTEGER NOT NULL DEFAULT 0,
    reopened     INTEGER NOT NULL DEFAULT 0,
    cleared      INTEGER NOT NULL DEFAULT 0,
    error        TEXT,
    rejected     INTEGER NOT NULL DEFAULT 0,
    duplicates   INTEGER NOT NULL DEFAULT 0,
    origin       TEXT    NOT NULL DEFAULT 'live' CHECK (origin IN ('live', 'file')),
    file         TEXT,
    observed_at  TEXT,
    warnings     TEXT,
    host         TEXT,
    published_at TEXT     -- when the response's document says it was published; NULL when it does not
);
INSERT INTO ingest_runs_new (id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened,
                             cleared, error, rejected, duplicates, origin, file, observed_at, warnings, host)
    SELECT id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened,
           cleared, error, rejected, duplicates, origin, file, observed_at, warnings, host
    FROM ingest_runs;
CREATE TABLE rejected_records_new (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES ingest_runs_new (id) ON DELETE CASCADE,
    source      TEXT    NOT NULL,
    external_id TEXT,
    position    TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    excerpt     TEXT,
    rejected_at TEXT    NOT NULL
);
INSERT INTO rejected_records_new (id, run_id, source, external_id, position, reason, excerpt, rejected_at)
    SELECT id, run_id, source, external_id, position, reason, excerpt, rejected_at FROM rejected_records;
DROP TABLE rejected_records;
DROP TABLE ingest_runs;
-- Renaming rewrites rejected_records_new's foreign key to name ingest_runs (SQLite >= 3.26).
ALTER TABLE ingest_runs_new RENAME TO ingest_runs;
ALTER TABLE rejected_records_new RENAME TO rejected_records;
CREATE INDEX ingest_runs_by_source ON ingest_runs (source, id);
CREATE INDEX rejected_records_by_run ON rejected_records (run_id);
CREATE INDEX rejected_records_by_incident ON rejected_records (source, external_id);

-- A paged poll clears only what the previous complete poll also missed: that poll is found by
-- seeking here (the newest succeeded observation of the source before this one), not by reading
-- every run of the source.
CREATE INDEX ingest_runs_by_completion ON ingest_runs (source, status, observed_at);
