-- 0011: the transition log (issue 22; README, "History and changes").
-- Forward-only: never edit this file after it has landed.
--
-- One row per thing a poll did to an incident it touched: appeared, revised (`fields` names the
-- content fields that changed, comma-separated), ended (revised with the provider's end time
-- newly set), cleared (by a complete poll; `at` is the instant it was cleared at), reopened,
-- quarantined. Each poll appends its rows in its own transaction. `id` is the change feed's
-- cursor: one writer at a time (BEGIN IMMEDIATE) commits in id order, and AUTOINCREMENT never
-- hands out an id again after a prune deleted the largest (https://www.sqlite.org/autoinc.html).
-- `run_id` is not a foreign key: pruning a run keeps the history of incidents it touched.
CREATE TABLE incident_transitions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id INTEGER REFERENCES incidents (id) ON DELETE CASCADE,
    source      TEXT    NOT NULL,
    external_id TEXT,
    run_id      INTEGER,
    kind        TEXT    NOT NULL CHECK (kind IN ('appeared', 'revised', 'ended', 'cleared', 'reopened', 'quarantined')),
    fields      TEXT,
    at          TEXT    NOT NULL
);
-- An incident's state at a moment (`list --at`): its last lifecycle transition at or before it.
CREATE INDEX incident_transitions_by_incident ON incident_transitions (incident_id, at);

-- rebuild: the log of an existing database, from its incidents, revisions, runs and records set
-- aside, in time order (README, "History and changes", says what it cannot know). The run of a
-- revision or a clear is the source's poll observed at that instant.
INSERT INTO incident_transitions (incident_id, source, external_id, run_id, kind, fields, at)
WITH versions AS (
    SELECT incident_id, revision, category, provider_category, description, road, location, direction, restriction, latitude, longitude, link_id, started_at, confirmed_at, expected_end_at, ended_at, road_ref, geometry, validity, cleared_at, superseded_at FROM incident_revisions
    UNION ALL
    SELECT id, revision, category, provider_category, description, road, location, direction, restriction, latitude, longitude, link_id, started_at, confirmed_at, expected_end_at, ended_at, road_ref, geometry, validity, cleared_at, NULL FROM incidents
), steps AS (
    SELECT o.incident_id, o.cleared_at AS was_cleared_at, o.superseded_at AS at,
           CASE WHEN o.cleared_at IS NOT NULL THEN 'reopened'
                WHEN o.ended_at IS NULL AND n.ended_at IS NOT NULL THEN 'ended'
                ELSE 'revised' END AS kind,
           rtrim(
                   CASE WHEN n.category IS NOT o.category THEN 'category,' ELSE '' END ||
                   CASE WHEN n.provider_category IS NOT o.provider_category THEN 'provider_category,' ELSE '' END ||
                   CASE WHEN n.description IS NOT o.description THEN 'description,' ELSE '' END ||
                   CASE WHEN n.road IS NOT o.road THEN 'road,' ELSE '' END ||
                   CASE WHEN n.location IS NOT o.location THEN 'location,' ELSE '' END ||
                   CASE WHEN n.direction IS NOT o.direction THEN 'direction,' ELSE '' END ||
                   CASE WHEN n.restriction IS NOT o.restriction THEN 'restriction,' ELSE '' END ||
                   CASE WHEN n.latitude IS NOT o.latitude OR n.longitude IS NOT o.longitude THEN 'coordinate,' ELSE '' END ||
                   CASE WHEN n.link_id IS NOT o.link_id THEN 'link_id,' ELSE '' END ||
                   CASE WHEN n.started_at IS NOT o.started_at THEN 'started_at,' ELSE '' END ||
                   CASE WHEN n.confirmed_at IS NOT o.confirmed_at THEN 'confirmed_at,' ELSE '' END ||
                   CASE WHEN n.expected_end_at IS NOT o.expected_end_at THEN 'expected_end_at,' ELSE '' END ||
                   CASE WHEN n.ended_at IS NOT o.ended_at THEN 'ended_at,' ELSE '' END ||
                   CASE WHEN n.road_ref IS NOT o.road_ref THEN 'road_ref,' ELSE '' END ||
                   CASE WHEN n.geometry IS NOT o.geometry THEN 'geometry,' ELSE '' END ||
                   CASE WHEN n.validity IS NOT o.validity THEN 'validity,' ELSE '' END, ',') AS fields
    FROM versions o JOIN versions n ON n.incident_id = o.incident_id AND n.revision = o.revision + 1
), log AS (
    -- appeared: when the first poll listed it
    SELECT 3 AS phase, i.id AS incident_id, i.source, i.external_id, i.first_seen_run_id AS run_id,
           'appeared' AS kind, NULL AS fields, i.first_seen_at AS at
    FROM incidents i
    UNION ALL
    -- revised, ended, reopened: each archived revision, against the values that replaced it
    SELECT 2, s.incident_id, i.source, i.external_id, (SELECT max(id) FROM ingest_runs u WHERE u.source = i.source AND u.status IN ('succeeded', 'incomplete', 'stale') AND u.observed_at = s.at), s.kind, nullif(s.fields, ''), s.at
    FROM steps s JOIN incidents i ON i.id = s.incident_id
    UNION ALL
    -- cleared before a reopening: the archived revision's clear
    SELECT 4, s.incident_id, i.source, i.external_id, (SELECT max(id) FROM ingest_runs u WHERE u.source = i.source AND u.status IN ('succeeded', 'incomplete', 'stale') AND u.observed_at = s.was_cleared_at), 'cleared', NULL, s.was_cleared_at
    FROM steps s JOIN incidents i ON i.id = s.incident_id WHERE s.was_cleared_at IS NOT NULL
    UNION ALL
    -- cleared now
    SELECT 4, i.id, i.source, i.external_id, (SELECT max(id) FROM ingest_runs u WHERE u.source = i.source AND u.status IN ('succeeded', 'incomplete', 'stale') AND u.observed_at = i.cleared_at), 'cleared', NULL, i.cleared_at
    FROM incidents i WHERE i.cleared_at IS NOT NULL
    UNION ALL
    -- quarantined: every record set aside, with its run
    SELECT 1, i.id, r.source, r.external_id, r.run_id, 'quarantined', NULL, r.rejected_at
    FROM rejected_records r LEFT JOIN incidents i ON i.source = r.source AND i.external_id = r.external_id
)
SELECT incident_id, source, external_id, run_id, kind, fields, at FROM log ORDER BY at, phase, incident_id;
