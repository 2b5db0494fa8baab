-- PostgreSQL 0004: the provider's word that a listed incident is not in force now, as SQLite's 0008.
-- Forward-only: never edit this file after it has landed; add a new NNNN_*.sql instead.
--
-- `validity` is NULL (nothing said), 'planned' or 'suspended' (DATEX II `validityStatus`). It
-- is content: revisions keep the previous value. An incident's status (active, planned,
-- suspended, ended, cleared) is computed at query time from it, `started_at`, `ended_at` and
-- `cleared_at` (IncidentStatus).
ALTER TABLE incidents ADD COLUMN validity text COLLATE "C" CHECK (validity IN ('planned', 'suspended'));
ALTER TABLE incident_revisions ADD COLUMN validity text COLLATE "C";
