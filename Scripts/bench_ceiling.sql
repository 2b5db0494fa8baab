-- Scripts/bench: what the C ceiling adds to its own schema so that it keeps the same indexes,
-- R*Tree, full-text index and counts as the product (Migrations/0005_query_indexes.sql) and
-- maintains them the same way. Scripts/bench copies ../shared/bench/ceiling.c (read-only) into
-- .build/bench/ and runs the part before "-- at commit" after the ceiling creates its table, and
-- the part after it in the ceiling's one transaction, just before its COMMIT, as the product
-- runs them at the end of each poll (Sources/IncidentSQLite/DerivedIndexes.swift). Both use
-- SQLite's default page cache.
--
-- The ceiling's table (WITHOUT ROWID, raw GITS fields) stands in for the product's columns:
-- startDate for started_at, endDate for ended_at, inciPlace1 for road, restrictType (six values)
-- for category (six values in the generated feed), inciDesc and inciPlace2 for description and
-- location, coord_x/coord_y for longitude/latitude, the regSeq number for the incident id.
CREATE INDEX IF NOT EXISTS ceiling_by_start ON incidents (startDate);
-- incidents_active: every new row, in arrival order (regSeq grows as the product's ids).
CREATE INDEX IF NOT EXISTS ceiling_active ON incidents (regSeq, endDate) WHERE source IS NOT NULL;
-- incidents_by_seen: one value per poll, so new rows land at its end.
CREATE INDEX IF NOT EXISTS ceiling_by_seen ON incidents (source);
CREATE INDEX IF NOT EXISTS ceiling_by_road ON incidents (inciPlace1);
CREATE INDEX IF NOT EXISTS ceiling_by_category ON incidents (restrictType);
CREATE VIRTUAL TABLE IF NOT EXISTS ceiling_bbox USING rtree(id, min_longitude, max_longitude, min_latitude, max_latitude);
CREATE VIRTUAL TABLE IF NOT EXISTS ceiling_search USING fts5(
    description, location, content = '', tokenize = 'trigram', detail = 'none', columnsize = 0);
CREATE TABLE IF NOT EXISTS ceiling_counts (
    dimension TEXT NOT NULL, key TEXT NOT NULL, incidents INTEGER NOT NULL, PRIMARY KEY (dimension, key)) WITHOUT ROWID;
-- at commit
INSERT INTO ceiling_search (rowid, description, location)
    SELECT CAST(regSeq AS INTEGER), inciDesc, inciPlace2 FROM incidents;
INSERT INTO ceiling_bbox (id, min_longitude, max_longitude, min_latitude, max_latitude)
    SELECT CAST(regSeq AS INTEGER), coord_x, coord_x, coord_y, coord_y FROM incidents WHERE coord_x <> '' AND coord_y <> '';
INSERT INTO ceiling_counts (dimension, key, incidents)
    SELECT 'source', source, count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'category', restrictType, count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'road', coalesce(inciPlace1, ''), count(*) FROM incidents GROUP BY 2
    UNION ALL SELECT 'start_minute', coalesce(substr(startDate, 12, 5), ''), count(*) FROM incidents GROUP BY 2
    ON CONFLICT (dimension, key) DO UPDATE SET incidents = incidents + excluded.incidents;
