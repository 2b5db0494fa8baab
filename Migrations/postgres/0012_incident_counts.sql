-- PostgreSQL 0012: incidents counted by key, kept by every writer in its own transaction, so
-- `stats` reads a few thousand counts instead of every incident (issue 23: 1.8-2.5 s at
-- 1,000,000 incidents, the cost of one pass over the table), as SQLite's incident_counts
-- (Migrations/0005). Forward-only: never edit this file after it has landed.
--
-- Keyed by source first: a poll changes only its own source's counts, and polls of one source
-- are serialized (PostgresStore.ingest's advisory lock), so polls of different sources on
-- several hosts never wait for one another's counts; a writer of several sources (prune, copy)
-- updates its counts in one statement in key order, so no two writers lock keys in opposite
-- orders. Dimensions (PostgresCounts.keys): `category`; `road` (an absent road is '');
-- `start_minute`, the UTC HH:MM of started_at ('' for none), from which `stats` makes the
-- hour in any time zone; `listed`, the incidents no complete poll cleared (the rest are
-- cleared), by whether the provider gave an end time (key `with_end`) or not (''). A source's
-- total is the sum of its `category` counts. Keys at zero are deleted.
CREATE TABLE incident_counts (
    source    text   COLLATE "C" NOT NULL,
    dimension text   COLLATE "C" NOT NULL CHECK (dimension IN ('category', 'road', 'start_minute', 'listed')),
    key       text   COLLATE "C" NOT NULL,
    incidents bigint NOT NULL,
    PRIMARY KEY (source, dimension, key)
);
-- The keys a writer brought to zero, deleted after it (without reading every key).
CREATE INDEX incident_counts_empty ON incident_counts (source) WHERE incidents = 0;
INSERT INTO incident_counts (source, dimension, key, incidents)
    SELECT i.source, k.dimension, k.key, count(*)
    FROM incidents i CROSS JOIN LATERAL (VALUES
        ('category', i.category),
        ('road', coalesce(i.road, '')),
        ('start_minute', coalesce(to_char(i.started_at AT TIME ZONE 'UTC', 'HH24:MI'), '')),
        ('listed', CASE WHEN i.cleared_at IS NOT NULL THEN NULL WHEN i.ended_at IS NULL THEN '' ELSE 'with_end' END))
        AS k (dimension, key)
    WHERE k.key IS NOT NULL
    GROUP BY 1, 2, 3;

-- The status of the listed incidents depends on the time of the query (StoredIncident.status):
-- `stats` counts the few that are not active through these, and the active ones are the rest
-- of `listed`: the ones that end later than now (the ended ones are the rest of `with_end`:
-- a source may list ended incidents for long),
CREATE INDEX incidents_listed_by_end ON incidents (ended_at) WHERE cleared_at IS NULL AND ended_at IS NOT NULL;
-- the suspended ones and the planned ones without a start (the planned ones with a future
-- start are a range of incidents_active_by_start, 0001).
CREATE INDEX incidents_listed_by_validity ON incidents (validity, started_at) WHERE cleared_at IS NULL AND validity IS NOT NULL;

-- `list --bbox … --limit N` and `--near` (issue 23: 188-233 ms and 86-140 ms at 1,000,000
-- incidents): the extent's GiST index (0003) made covering, so the ids of the incidents in a
-- box, in start order or nearest first, come from the index alone (an index-only scan, with
-- the exact test on the included coordinates), and only the rows listed are read from the
-- table, instead of every row of the box (one heap page each). PostgresStore.forEachIncident.
DROP INDEX incidents_by_extent;
CREATE INDEX incidents_by_extent ON incidents USING gist (
    box(point(coalesce(min_longitude, longitude), coalesce(min_latitude, latitude)),
        point(coalesce(max_longitude, longitude), coalesce(max_latitude, latitude))))
    INCLUDE (id, started_at, latitude, longitude, min_latitude, max_latitude, min_longitude, max_longitude);

-- The GiST index of the position alone (0001) has answered no query since 0003 (--bbox and
-- --near read the extent's): it cost every ingested row a GiST insert.
DROP INDEX incidents_by_position;
