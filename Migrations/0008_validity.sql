-- 0008: the provider's word that a listed incident is not in force now (DATEX II
-- `validityStatus` `planned` or `suspended`), and an active-set index that covers the status.
-- Forward-only: never edit this file after it has landed.
--
-- `validity` is NULL (nothing said), 'planned' or 'suspended'. It is content: revisions keep
-- the previous value. An incident's status (active, planned, suspended, ended, cleared) is
-- computed at query time from it, `started_at`, `ended_at` and `cleared_at` (IncidentStatus).
ALTER TABLE incidents ADD COLUMN validity TEXT CHECK (validity IN ('planned', 'suspended'));
ALTER TABLE incident_revisions ADD COLUMN validity TEXT;

-- The active set (0005) also holds what the status reads, so that counting the states of the
-- incidents still listed reads this index alone, as counting the active ones did.
DROP INDEX incidents_active;
CREATE INDEX incidents_active ON incidents (id, ended_at, started_at, validity, cleared_at) WHERE cleared_at IS NULL;
