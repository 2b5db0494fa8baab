-- 0007: per-source leases, so that several schedulers share the sources (issue 15).
-- Forward-only: never edit this file after it has landed.

-- One row per source ever claimed. A scheduler claims a source's lease before polling it and
-- releases it after (IncidentCore's SourceLeases documents the rules). The holder is one
-- process: host name and pid; on SQLite a lease of a dead pid on the same host counts as
-- expired. Times are RFC 3339 UTC.
CREATE TABLE source_leases (
    source          TEXT    PRIMARY KEY,
    holder_host     TEXT    NOT NULL,
    holder_pid      INTEGER NOT NULL,
    expires_at      TEXT,             -- NULL once released
    last_started_at TEXT    NOT NULL  -- when holder_host last claimed it (started a poll)
) WITHOUT ROWID;
