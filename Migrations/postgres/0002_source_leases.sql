-- PostgreSQL 0002: per-source leases, so that schedulers on several hosts share the sources
-- (issue 15). Forward-only: never edit this file after it has landed.

-- One row per source ever claimed. A scheduler claims a source's lease before polling it and
-- releases it after (IncidentCore's SourceLeases documents the rules); a claim is one
-- `INSERT … ON CONFLICT … DO UPDATE … WHERE`, which locks the row, so concurrent claims from
-- several hosts are decided one after the other and exactly one wins.
CREATE TABLE source_leases (
    source          text        COLLATE "C" PRIMARY KEY,
    holder_host     text        COLLATE "C" NOT NULL,
    holder_pid      integer     NOT NULL,
    expires_at      timestamptz,           -- NULL once released
    last_started_at timestamptz NOT NULL   -- when holder_host last claimed it (started a poll)
);
