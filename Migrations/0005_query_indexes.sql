-- 0005: indexes designed from the queries the CLI offers, a spatial index, and the search index
-- and counts kept up to date by each poll instead of by the first search after it.
-- Forward-only: never edit this file after it has landed.
--
-- SQLite has no statistics here (no ANALYZE runs), so without help it would take any equality for
-- a rare value and sort all of a common one. The store therefore picks the index that drives each
-- query itself: it reads at most a few thousand entries of each candidate index to tell a rare
-- value from a common one (Sources/IncidentSQLite/Selection.swift), and QueryPlanTests pins the
-- resulting plans with EXPLAIN QUERY PLAN.
--
-- Every index costs each new incident a b-tree insert. An index whose new entries land at
-- random places (such as one on started_at when a backfill's start times are in no order) costs a
-- 300,000-record fresh ingest about 1.5 s of CPU here, most of it reading and writing pages the
-- 2 MB page cache could not keep; one whose new entries land at its end (the rowid, the poll's
-- time) about 0.2 s. So only the order of the listings is indexed by start time; the filters'
-- indexes are in rowid order within each value, and the listing sorts the rows of a rare value.

-- Default order (newest start first; `started-asc`), and --since/--until windows: a range of
-- started_at read in order. The implicit rowid gives the `id` tie-break of the order.
CREATE INDEX incidents_by_start ON incidents (started_at);

-- The active set (--active, the active count of `stats`, and the clearing of each complete poll):
-- the incidents no complete poll has cleared. Partial, so it holds only those (few, whatever the
-- length of the history), in id order, so new incidents are appended; ended_at and cleared_at
-- make it covering for counting the active ones (`ended_at IS NULL OR ended_at > now`).
CREATE INDEX incidents_active ON incidents (id, ended_at, cleared_at) WHERE cleared_at IS NULL;

-- --source: UNIQUE (source, external_id) (0001) finds one source's incidents.

-- --seen-since and --order last-seen. Each poll moves the entries of the incidents it lists to
-- the end (the poll's time).
CREATE INDEX incidents_by_seen ON incidents (last_seen_at);

-- --road: the road names containing the text are found among the distinct names (the `road`
-- keys of incident_counts, below), then their incidents here.
CREATE INDEX incidents_by_road ON incidents (road);

-- --category: a few values, but some are rare (weather, closures), and reading in start order
-- for a rare one would read the whole history.
CREATE INDEX incidents_by_category ON incidents (category);

-- --bbox, and the prefilter of --near: an R*Tree (https://www.sqlite.org/rtree.html) of each
-- incident's bounding box, today its position (min = max); geometries with an extent will feed
-- their boxes the same way. The store adds a poll's new incidents in the poll's transaction and
-- removes an incident's box before it changes or is deleted. Coordinates are 32-bit floats,
-- rounded outwards, so the R*Tree finds a superset and the query checks the exact position.
CREATE VIRTUAL TABLE incidents_bbox USING rtree(id, min_longitude, max_longitude, min_latitude, max_latitude);
INSERT INTO incidents_bbox (id, min_longitude, max_longitude, min_latitude, max_latitude)
    SELECT id, longitude, longitude, latitude, latitude FROM incidents
    WHERE latitude IS NOT NULL AND longitude IS NOT NULL ORDER BY id;

-- The full-text index (0003) is now kept up to date by the store in each poll's transaction,
-- for the rows the poll inserted or changed, so the first search after an ingest finds it
-- ready. Index what the lazy scheme had not reached yet, then drop that scheme.
DROP TRIGGER incidents_search_update;
DROP TRIGGER incidents_search_delete;
INSERT INTO incidents_search (rowid, description, location)
    SELECT id, description, location FROM incidents
    WHERE id > (SELECT indexed_through FROM search_index_state) ORDER BY id;
DROP TABLE search_index_state;

-- Incidents by source, category, road and the UTC minute of the day they started, kept by the
-- store in step with incidents (added with a poll's new rows, removed before a row changes or is
-- deleted), so `stats` reads a few hundred rows instead of every incident. An absent road or
-- start time is the key ''. `road` keys are also the distinct road names that --road searches.
CREATE TABLE incident_counts (
    dimension TEXT    NOT NULL CHECK (dimension IN ('source', 'category', 'road', 'start_minute')),
    key       TEXT    NOT NULL,
    incidents INTEGER NOT NULL,
    PRIMARY KEY (dimension, key)
) WITHOUT ROWID;
INSERT INTO incident_counts (dimension, key, incidents)
    SELECT 'source', source, count(*) FROM incidents GROUP BY source
    UNION ALL SELECT 'category', category, count(*) FROM incidents GROUP BY category
    UNION ALL SELECT 'road', coalesce(road, ''), count(*) FROM incidents GROUP BY coalesce(road, '')
    UNION ALL SELECT 'start_minute', coalesce(substr(started_at, 12, 5), ''), count(*) FROM incidents
        GROUP BY coalesce(substr(started_at, 12, 5), '');
