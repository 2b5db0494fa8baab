-- 0001: incidents, their revision history, and the run log.
-- Forward-only: never edit this file after it has landed; add a new NNNN_*.sql instead.
-- Times are RFC 3339 UTC text ("2023-03-21T05:13:00Z"); coordinates WGS84 decimal degrees.

-- One row per run of one source (a poll, a file ingest, or a skipped/failed attempt).
-- A successful run's row is written in the same transaction as its incidents; a run that fails
-- is rolled back and then recorded here alone, with the reason in `error` (API keys redacted).
CREATE TABLE ingest_runs (
    id          INTEGER PRIMARY KEY,
    source      TEXT    NOT NULL,
    started_at  TEXT    NOT NULL,
    finished_at TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    fetched     INTEGER NOT NULL DEFAULT 0,
    inserted    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    unchanged   INTEGER NOT NULL DEFAULT 0,
    reopened    INTEGER NOT NULL DEFAULT 0,
    cleared     INTEGER NOT NULL DEFAULT 0,
    error       TEXT
);
CREATE INDEX ingest_runs_by_source ON ingest_runs (source, id);

-- The current state of every incident ever seen, one row per (source, external_id).
CREATE TABLE incidents (
    id                INTEGER PRIMARY KEY,
    source            TEXT    NOT NULL,
    external_id       TEXT    NOT NULL,
    category          TEXT    NOT NULL,
    provider_category TEXT,
    description       TEXT,
    road              TEXT,
    location          TEXT,
    direction         TEXT,
    restriction       TEXT,
    latitude          REAL CHECK (latitude BETWEEN -90 AND 90),
    longitude         REAL CHECK (longitude BETWEEN -180 AND 180),
    link_id           TEXT,
    started_at        TEXT,
    confirmed_at      TEXT,
    expected_end_at   TEXT,
    ended_at          TEXT,    -- the provider's end time, when it publishes one
    content_hash      INTEGER NOT NULL,  -- FNV-1a 64 of the normalized fields above
    revision          INTEGER NOT NULL DEFAULT 1,
    first_seen_at     TEXT    NOT NULL,
    last_seen_at      TEXT    NOT NULL,
    first_seen_run_id INTEGER NOT NULL,  -- ingest_runs.id of the poll that first listed it
    last_seen_run_id  INTEGER NOT NULL,  -- ingest_runs.id of the last poll that listed it
    cleared_at        TEXT,    -- set when a complete poll of the source no longer listed it
    UNIQUE (source, external_id)
);
-- No other index: every one costs each ingested record an extra b-tree insert (an index on
-- started_at cost 6% of a 300,000-record ingest), while the query CLI's scans of a few hundred
-- thousand rows take milliseconds.

-- The previous values of an incident each time it changed or was reopened.
CREATE TABLE incident_revisions (
    incident_id       INTEGER NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    revision          INTEGER NOT NULL,
    category          TEXT    NOT NULL,
    provider_category TEXT,
    description       TEXT,
    road              TEXT,
    location          TEXT,
    direction         TEXT,
    restriction       TEXT,
    latitude          REAL,
    longitude         REAL,
    link_id           TEXT,
    started_at        TEXT,
    confirmed_at      TEXT,
    expected_end_at   TEXT,
    ended_at          TEXT,
    content_hash      INTEGER NOT NULL,
    cleared_at        TEXT,
    superseded_at     TEXT    NOT NULL,  -- when these values stopped being current
    PRIMARY KEY (incident_id, revision)
) WITHOUT ROWID;
