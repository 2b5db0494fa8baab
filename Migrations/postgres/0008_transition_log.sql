-- PostgreSQL 0008: the transition log (issue 22; README, "History and changes"), as SQLite's 0011.
-- Forward-only: never edit this file after it has landed.
--
-- `cursor` is the change feed's cursor. Several hosts commit polls concurrently, and a number
-- drawn from a sequence inside a transaction is not in commit order: a reader that saw 8 (its
-- poll committed first) and asks for "after 8" would never see 7 committing later. So a poll's
-- cursors are drawn at the very end of its transaction from the one row of `change_feed`, whose
-- row lock the poll then holds until it commits: the next poll to draw waits for that commit,
-- so cursors are handed out in commit order and a reader that sees cursor N already sees every
-- cursor below N. Polls serialize only for that last step (and not at all when they log
-- nothing); pg_snapshot_xmin horizons would avoid even that, but need every reader to hold back
-- behind the oldest open transaction of the whole server, long-running readers included.
CREATE TABLE incident_transitions (
    cursor      bigint      PRIMARY KEY,
    incident_id bigint      REFERENCES incidents (id) ON DELETE CASCADE,
    source      text        COLLATE "C" NOT NULL,
    external_id text        COLLATE "C",
    run_id      bigint,
    kind        text        COLLATE "C" NOT NULL
                CHECK (kind IN ('appeared', 'revised', 'ended', 'cleared', 'reopened', 'quarantined')),
    fields      text        COLLATE "C",
    at          timestamptz NOT NULL
);
CREATE INDEX incident_transitions_by_incident ON incident_transitions (incident_id, at);

-- The last cursor handed out (one row).
CREATE TABLE change_feed (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last_cursor bigint  NOT NULL
);

-- rebuild: as SQLite's 0011.
INSERT INTO incident_transitions (cursor, incident_id, source, external_id, run_id, kind, fields, at)
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
                   CASE WHEN n.category IS DISTINCT FROM o.category THEN 'category,' ELSE '' END ||
                   CASE WHEN n.provider_category IS DISTINCT FROM o.provider_category THEN 'provider_category,' ELSE '' END ||
                   CASE WHEN n.description IS DISTINCT FROM o.description THEN 'description,' ELSE '' END ||
                   CASE WHEN n.road IS DISTINCT FROM o.road THEN 'road,' ELSE '' END ||
                   CASE WHEN n.location IS DISTINCT FROM o.location THEN 'location,' ELSE '' END ||
                   CASE WHEN n.direction IS DISTINCT FROM o.direction THEN 'direction,' ELSE '' END ||
                   CASE WHEN n.restriction IS DISTINCT FROM o.restriction THEN 'restriction,' ELSE '' END ||
                   CASE WHEN n.latitude IS DISTINCT FROM o.latitude OR n.longitude IS DISTINCT FROM o.longitude THEN 'coordinate,' ELSE '' END ||
                   CASE WHEN n.link_id IS DISTINCT FROM o.link_id THEN 'link_id,' ELSE '' END ||
                   CASE WHEN n.started_at IS DISTINCT FROM o.started_at THEN 'started_at,' ELSE '' END ||
                   CASE WHEN n.confirmed_at IS DISTINCT FROM o.confirmed_at THEN 'confirmed_at,' ELSE '' END ||
                   CASE WHEN n.expected_end_at IS DISTINCT FROM o.expected_end_at THEN 'expected_end_at,' ELSE '' END ||
                   CASE WHEN n.ended_at IS DISTINCT FROM o.ended_at THEN 'ended_at,' ELSE '' END ||
                   CASE WHEN n.road_ref IS DISTINCT FROM o.road_ref THEN 'road_ref,' ELSE '' END ||
                   CASE WHEN n.geometry IS DISTINCT FROM o.geometry THEN 'geometry,' ELSE '' END ||
                   CASE WHEN n.validity IS DISTINCT FROM o.validity THEN 'validity,' ELSE '' END, ',') AS fields
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
SELECT row_number() OVER (ORDER BY at, phase, incident_id), incident_id, source, external_id, run_id, kind, fields, at FROM log;
INSERT INTO change_feed (last_cursor) SELECT coalesce(max(cursor), 0) FROM incident_transitions;
