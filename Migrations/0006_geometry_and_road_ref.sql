-- 0006: line geometries (WZDx work zones, DATEX II linear locations, Open511 roads) and the
-- canonical road name beside the provider's.
-- Forward-only: never edit this file after it has landed.
--
-- `geometry` is the RFC 7946 GeoJSON geometry object when the feed gives more than a point
-- (NULL for a point: `latitude`/`longitude` hold it); `min_/max_longitude`, `min_/max_latitude`
-- are its bounding box, which the R*Tree (`incidents_bbox`, 0005) indexes instead of the point.
-- `road_ref` is the road's name in the public route numbering (`고속국도1호선`), which `--road`
-- also matches. All are content: revisions keep their previous values.
ALTER TABLE incidents ADD COLUMN road_ref TEXT;
ALTER TABLE incidents ADD COLUMN geometry TEXT;
ALTER TABLE incidents ADD COLUMN min_longitude REAL;
ALTER TABLE incidents ADD COLUMN max_longitude REAL;
ALTER TABLE incidents ADD COLUMN min_latitude REAL;
ALTER TABLE incidents ADD COLUMN max_latitude REAL;
ALTER TABLE incident_revisions ADD COLUMN road_ref TEXT;
ALTER TABLE incident_revisions ADD COLUMN geometry TEXT;
ALTER TABLE incident_revisions ADD COLUMN min_longitude REAL;
ALTER TABLE incident_revisions ADD COLUMN max_longitude REAL;
ALTER TABLE incident_revisions ADD COLUMN min_latitude REAL;
ALTER TABLE incident_revisions ADD COLUMN max_latitude REAL;

-- --road also matches the canonical name: its incidents by road_ref, as incidents_by_road does
-- for the provider's names.
CREATE INDEX incidents_by_road_ref ON incidents (road_ref) WHERE road_ref IS NOT NULL;

-- incident_counts (0005) also counts by canonical road: its keys are the canonical names
-- `--road` searches. SQLite cannot change a CHECK constraint in place: the table is rebuilt.
CREATE TABLE incident_counts_new (
    dimension TEXT    NOT NULL CHECK (dimension IN ('source', 'category', 'road', 'road_ref', 'start_minute')),
    key       TEXT    NOT NULL,
    incidents INTEGER NOT NULL,
    PRIMARY KEY (dimension, key)
) WITHOUT ROWID;
INSERT INTO incident_counts_new (dimension, key, incidents) SELECT dimension, key, incidents FROM incident_counts;
INSERT INTO incident_counts_new (dimension, key, incidents) SELECT 'road_ref', '', count(*) FROM incidents HAVING count(*) > 0;
DROP TABLE incident_counts;
ALTER TABLE incident_counts_new RENAME TO incident_counts;
