-- Scripts/bench: what the C ceiling stores beside its feed's rows, so that it stores what the
-- product stores for a fresh ingest (every table, column kind and index of a product database,
-- `sqlite3 DB .schema` after `incident-scheduler ingest --source gits --file FEED`), built as fast
-- as C and SQLite can build it (issue 23: the floor of the same stored result, however it is
-- built). Scripts/bench copies ../shared/bench/ceiling.c (read-only) into .build/bench/ and
-- (bench_lib.py ceiling-source) runs the part before "-- upsert" after the ceiling creates its
-- table, prepares the "-- upsert" statement in place of the ceiling's own (the same 16
-- parameters, bound by ceiling.c), and runs the part after "-- at commit" in the ceiling's one
-- transaction, after the load, just before its COMMIT.
--
-- How it is built:
-- - a page cache of 24 MiB (the default is 2 MiB) for the load, measured on 100,000 records 1.25 x
--   less CPU than the default 2 MiB and row-by-row indexes; 16 MiB after it, for the index sorts
--   (SQLite's sorter keeps up to the cache's size in memory besides the cache): peak RSS 61.1 MiB
--   on 300,000 records, within the product's 64 MiB budget (24 MiB throughout: 65.6 MiB; 20 MiB
--   for the sorts: 63.5 MiB; no CPU difference measurable at load 7); `PRAGMA threads = 2` (the
--   sorter's helper threads) gave no wall time at load 4 on 2 cores and 2.7 MiB more: not used;
-- - only the unique key the upsert needs is kept row by row; every other B-tree index is created
--   after the load from one sort of the table; the search index, the R*Tree, the counts, the
--   transition log and the open listing intervals are one INSERT ... SELECT each over every row
--   (as the product builds them for a poll's new incidents, Sources/IncidentSQLite/DerivedIndexes.swift);
-- - the hour counts: the 24 hours before the current one (PollTransitions.countedHoursBack), each
--   the number of open listing intervals begun before its end (an index seek: 0 on a fresh ingest,
--   as the product counts them).
--
-- What maps to what (product -> ceiling):
-- - incidents: a rowid table, its integer id (INTEGER PRIMARY KEY id in the product, the rowid
--   here: the same stored integer key) and UNIQUE (source, external_id). The ceiling's raw GITS
--   columns stand in for the product's parsed ones: startDate for started_at, endDate for ended_at
--   ('' for none, where the product stores NULL), inciPlace1 for road, restrictType (six values)
--   for category and restriction, inciDesc and inciPlace2 for description and location,
--   coord_x/coord_y (text) for longitude/latitude, linkId for link_id, confirmDate/estEndDate for
--   confirmed_at/expected_end_at; routeId, spotId and regSeq (the external id again) stand in for
--   provider_category and direction. Added with the product's kinds: content_hash (an 8-byte
--   integer derived from the external id: the product's FNV-1a is computed in Swift), revision,
--   first_seen_at/last_seen_at (the run's start, a literal: the product formats it once per run),
--   first/last_seen_run_id, cleared_at, road_ref (the road when it names an expressway: 210,245
--   of the 300,000-record feed, where the product's KoreanRoads.canonical gives 180,281, so the
--   ceiling's partial index and counts hold a little more), geometry, min/max_longitude/latitude,
--   validity (NULL for GITS points, as in the product).
-- - incidents' indexes: every one of the product's (active, active_by_source, by_category,
--   by_cleared, by_end, by_road, by_road_ref, by_seen, by_start, started_by_id) on the stand-in
--   columns, with the same partial conditions.
-- - incidents_search (fts5 trigram, detail none; the product's is external-content over
--   incidents, this one contentless: the same stored index), incidents_bbox (R*Tree),
--   incident_counts (source, category, road, road_ref, start_minute; its partial index),
--   incident_transitions (one 'appeared' per incident; AUTOINCREMENT, its index),
--   incident_listed_open (one per incident; its four indexes), incident_listed_intervals
--   (rtree_i32, empty after a fresh ingest), listed_hours, ingest_runs (one row, its four
--   indexes), and the tables a fresh ingest leaves empty (incident_revisions, rejected_records,
--   source_state, source_leases, watch_positions, schema_migrations).
-- Left out: the product's two triggers (they fire on updates only, never on a fresh ingest) and
-- schema_migrations' 17 rows (bookkeeping of how the schema was made, not the feed's result).
PRAGMA cache_size = -24576;
BEGIN;
DROP TABLE incidents;
CREATE TABLE incidents (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, external_id TEXT NOT NULL,
    routeId, linkId, spotId, regSeq, confirmDate, startDate, estEndDate, endDate, restrictType, inciDesc, inciPlace1, inciPlace2, coord_x, coord_y,
    content_hash INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 1,
    first_seen_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, first_seen_run_id INTEGER NOT NULL, last_seen_run_id INTEGER NOT NULL,
    cleared_at TEXT, road_ref TEXT, geometry TEXT, min_longitude REAL, max_longitude REAL, min_latitude REAL, max_latitude REAL, validity TEXT,
    UNIQUE (source, external_id));
CREATE TABLE incident_revisions (
    incident_id INTEGER NOT NULL, revision INTEGER NOT NULL, category TEXT NOT NULL, provider_category TEXT, description TEXT,
    road TEXT, location TEXT, direction TEXT, restriction TEXT, latitude REAL, longitude REAL, link_id TEXT, started_at TEXT,
    confirmed_at TEXT, expected_end_at TEXT, ended_at TEXT, content_hash INTEGER NOT NULL, cleared_at TEXT, superseded_at TEXT NOT NULL,
    road_ref TEXT, geometry TEXT, min_longitude REAL, max_longitude REAL, min_latitude REAL, max_latitude REAL, validity TEXT,
    PRIMARY KEY (incident_id, revision)) WITHOUT ROWID;
CREATE VIRTUAL TABLE ceiling_bbox USING rtree(id, min_longitude, max_longitude, min_latitude, max_latitude);
CREATE VIRTUAL TABLE ceiling_search USING fts5(
    description, location, content = '', tokenize = 'trigram', detail = 'none', columnsize = 0);
CREATE TABLE ceiling_counts (
    dimension TEXT NOT NULL, key TEXT NOT NULL, incidents INTEGER NOT NULL, PRIMARY KEY (dimension, key)) WITHOUT ROWID;
CREATE INDEX ceiling_counts_empty ON ceiling_counts (incidents) WHERE incidents = 0;
CREATE TABLE incident_transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, incident_id INTEGER, source TEXT NOT NULL, external_id TEXT,
    run_id INTEGER, kind TEXT NOT NULL, fields TEXT, at TEXT NOT NULL);
CREATE INDEX incident_transitions_by_incident ON incident_transitions (incident_id, at);
CREATE VIRTUAL TABLE incident_listed_intervals USING rtree_i32(id, listed_from, listed_until, +incident_id);
CREATE TABLE incident_listed_open (id INTEGER PRIMARY KEY, incident_id INTEGER NOT NULL, listed_from INTEGER NOT NULL, started_at TEXT);
CREATE TABLE listed_hours (hour INTEGER PRIMARY KEY, listed INTEGER NOT NULL);
CREATE TABLE ingest_runs (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
    fetched INTEGER NOT NULL DEFAULT 0, inserted INTEGER NOT NULL DEFAULT 0, updated INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0, reopened INTEGER NOT NULL DEFAULT 0, cleared INTEGER NOT NULL DEFAULT 0, error TEXT,
    rejected INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0, origin TEXT NOT NULL DEFAULT 'live', file TEXT,
    observed_at TEXT, warnings TEXT, host TEXT, published_at TEXT);
CREATE INDEX ingest_runs_by_source ON ingest_runs (source, id);
CREATE INDEX ingest_runs_by_completion ON ingest_runs (source, status, observed_at);
CREATE INDEX ingest_runs_by_finished ON ingest_runs (finished_at);
CREATE INDEX ingest_runs_by_source_started ON ingest_runs (source, id, started_at);
CREATE TABLE rejected_records (
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, source TEXT NOT NULL, external_id TEXT, position TEXT NOT NULL,
    reason TEXT NOT NULL, excerpt TEXT, rejected_at TEXT NOT NULL);
CREATE INDEX rejected_records_by_run ON rejected_records (run_id);
CREATE INDEX rejected_records_by_incident ON rejected_records (source, external_id);
CREATE TABLE source_state (source TEXT PRIMARY KEY, exhausted_until TEXT, exhausted_reason TEXT, updated_at TEXT NOT NULL, published_at TEXT) WITHOUT ROWID;
CREATE TABLE source_leases (source TEXT PRIMARY KEY, holder_host TEXT NOT NULL, holder_pid INTEGER NOT NULL, expires_at TEXT, last_started_at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE watch_positions (
    watch TEXT PRIMARY KEY, cursor INTEGER NOT NULL, holder_host TEXT, holder_pid INTEGER, expires_at TEXT,
    delivered_at TEXT, last_error TEXT, last_error_at TEXT) WITHOUT ROWID;
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL);
COMMIT;
-- upsert
INSERT INTO incidents (source, external_id, routeId, linkId, spotId, regSeq, confirmDate, startDate, estEndDate, endDate,
    restrictType, inciDesc, inciPlace1, inciPlace2, coord_x, coord_y,
    content_hash, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id, road_ref)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
    CAST(?2 AS INTEGER) * 1000003, '2026-12-02T14:04:24Z', '2026-12-02T14:04:24Z', 1, 1,
    CASE WHEN instr(?13, '고속도로') THEN ?13 END)
ON CONFLICT (source, external_id) DO UPDATE SET inciDesc = excluded.inciDesc, endDate = excluded.endDate
-- at commit
PRAGMA cache_size = -16384;
INSERT INTO ingest_runs (source, started_at, status, origin, file, observed_at, host)
    VALUES ('gits', '2026-12-02T14:04:24Z', 'running', 'file', 'FEED', '2026-12-02T14:04:24Z', 'vm');
CREATE INDEX incidents_active ON incidents (id, endDate, startDate, validity, cleared_at) WHERE cleared_at IS NULL;
CREATE INDEX incidents_active_by_source ON incidents (source, id) WHERE cleared_at IS NULL;
CREATE INDEX incidents_by_category ON incidents (restrictType);
CREATE INDEX incidents_by_cleared ON incidents (cleared_at) WHERE cleared_at IS NOT NULL;
CREATE INDEX incidents_by_end ON incidents (endDate) WHERE endDate <> '';
CREATE INDEX incidents_by_road ON incidents (inciPlace1);
CREATE INDEX incidents_by_road_ref ON incidents (road_ref) WHERE road_ref IS NOT NULL;
CREATE INDEX incidents_by_seen ON incidents (last_seen_at);
CREATE INDEX incidents_by_start ON incidents (startDate);
CREATE INDEX incidents_started_by_id ON incidents (id, startDate);
INSERT INTO ceiling_search (rowid, description, location) SELECT id, inciDesc, inciPlace2 FROM incidents;
INSERT INTO ceiling_bbox (id, min_longitude, max_longitude, min_latitude, max_latitude)
    SELECT id, coord_x, coord_x, coord_y, coord_y FROM incidents WHERE coord_x <> '' AND coord_y <> '';
INSERT INTO ceiling_counts (dimension, key, incidents)
    SELECT 'source', source, count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'category', restrictType, count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'road', coalesce(inciPlace1, ''), count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'road_ref', road_ref, count(*) FROM incidents WHERE road_ref IS NOT NULL GROUP BY 2
    UNION ALL SELECT 'start_minute', coalesce(substr(startDate, 12, 5), ''), count(*) FROM incidents GROUP BY 2
    ON CONFLICT (dimension, key) DO UPDATE SET incidents = incidents + excluded.incidents;
INSERT INTO incident_transitions (incident_id, source, external_id, run_id, kind, at)
    SELECT id, source, external_id, 1, 'appeared', first_seen_at FROM incidents ORDER BY id;
INSERT INTO incident_listed_open (incident_id, listed_from, started_at)
    SELECT id, (SELECT unixepoch() - 1577836800), startDate FROM incidents ORDER BY id;
CREATE INDEX incident_listed_open_ahead ON incident_listed_open (started_at, incident_id, listed_from)
    WHERE started_at > strftime('%Y-%m-%dT%H:%M:%SZ', listed_from + 1577836800, 'unixepoch');
CREATE INDEX incident_listed_open_by_incident ON incident_listed_open (incident_id);
CREATE INDEX incident_listed_open_by_start ON incident_listed_open (listed_from);
CREATE INDEX incident_listed_open_by_started ON incident_listed_open (started_at, incident_id, listed_from);
INSERT INTO listed_hours (hour, listed)
    WITH RECURSIVE now(h) AS (SELECT (unixepoch() - 1577836800) / 3600),
    hours(hour) AS (SELECT h - 24 FROM now UNION ALL SELECT hour + 1 FROM hours, now WHERE hour + 1 < h)
    SELECT hour, (SELECT count(*) FROM incident_listed_open WHERE listed_from < (hour + 1) * 3600) FROM hours;
UPDATE ingest_runs SET finished_at = '2026-12-02T14:04:26Z', status = 'succeeded',
    fetched = (SELECT count(*) FROM incidents), inserted = (SELECT count(*) FROM incidents);
