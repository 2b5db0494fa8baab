-- PostgreSQL 0005: the time order of a source's documents, as SQLite's 0009 (issue 19).
-- Forward-only: never edit this file after it has landed; add a new NNNN_*.sql instead.

-- The newest publication time a current document of the source stated: a later poll whose
-- document says it was published earlier is stored as history only.
ALTER TABLE source_state ADD COLUMN published_at timestamptz;

-- Each run's document publication time, and the `stale` status (stored as history only).
ALTER TABLE ingest_runs ADD COLUMN published_at timestamptz;
ALTER TABLE ingest_runs DROP CONSTRAINT ingest_runs_status_check;
ALTER TABLE ingest_runs ADD CONSTRAINT ingest_runs_status_check
    CHECK (status IN ('running', 'succeeded', 'incomplete', 'stale', 'failed', 'cancelled', 'skipped'));

-- A paged poll clears only what the previous complete poll also missed: that poll is found by
-- seeking here (the newest succeeded observation of the source before this one), not by reading
-- every run of the source.
CREATE INDEX ingest_runs_by_completion ON ingest_runs (source, status, observed_at);
