-- PostgreSQL 0003: line geometries and the canonical road name, as SQLite's 0006.
-- Forward-only: never edit this file after it has landed; add a new NNNN_*.sql instead.
--
-- `geometry` is the RFC 7946 GeoJSON geometry object when the feed gives more than a point
-- (NULL for a point: `latitude`/`longitude` hold it); `min_/max_longitude`, `min_/max_latitude`
-- are its bounding box (WGS84 degrees). `road_ref` is the road's name in the public route
-- numbering (`고속국도1호선`), which `--road` also matches. All are content: revisions keep
-- their previous values.
ALTER TABLE incidents ADD COLUMN road_ref text COLLATE "C";
ALTER TABLE incidents ADD COLUMN geometry text COLLATE "C";
ALTER TABLE incidents ADD COLUMN min_longitude double precision;
ALTER TABLE incidents ADD COLUMN max_longitude double precision;
ALTER TABLE incidents ADD COLUMN min_latitude double precision;
ALTER TABLE incidents ADD COLUMN max_latitude double precision;
ALTER TABLE incident_revisions ADD COLUMN road_ref text COLLATE "C";
ALTER TABLE incident_revisions ADD COLUMN geometry text COLLATE "C";
ALTER TABLE incident_revisions ADD COLUMN min_longitude double precision;
ALTER TABLE incident_revisions ADD COLUMN max_longitude double precision;
ALTER TABLE incident_revisions ADD COLUMN min_latitude double precision;
ALTER TABLE incident_revisions ADD COLUMN max_latitude double precision;

-- --bbox and --near on a line: a GiST index over the extent (the geometry's box, else the
-- point), queried with `&&` against the query's box.
CREATE INDEX incidents_by_extent ON incidents USING gist (
    box(point(coalesce(min_longitude, longitude), coalesce(min_latitude, latitude)),
        point(coalesce(max_longitude, longitude), coalesce(max_latitude, latitude))));
-- --road also matches the canonical name: a substring of it (LIKE, the trigram index, as for
-- road) or the canonical road the text names (=, the B-tree).
CREATE INDEX incidents_by_road_ref ON incidents (road_ref) WHERE road_ref IS NOT NULL;
CREATE INDEX incidents_road_ref_trgm ON incidents USING gin (road_ref gin_trgm_ops);
