-- 0003: full-text search over descriptions and locations (SQLite FTS5).
-- Forward-only: never edit this file after it has landed.
--
-- The trigram tokenizer is the FTS5 tokenizer that finds substrings of Korean text
-- (`잠실` inside `잠실대교`); detail=none keeps the index small (the query re-checks each
-- candidate row, so no positions are needed).
--
-- The index is brought up to date lazily, in bulk, by the first search after new incidents
-- arrive (rows with id > indexed_through): indexing row by row at ingest time made a large
-- ingest ten times slower. Searches stay complete meanwhile: rows past indexed_through are
-- scanned. Rows already indexed are kept in sync by the triggers below (changes and
-- deletions are rare: revisions and pruning).
CREATE VIRTUAL TABLE incidents_search USING fts5(
    description, location,
    content = 'incidents', content_rowid = 'id',
    tokenize = 'trigram', detail = 'none', columnsize = 0
);

CREATE TABLE search_index_state (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through INTEGER NOT NULL   -- every incident with id <= this is in incidents_search
);
INSERT INTO search_index_state (id, indexed_through) VALUES (1, 0);

CREATE TRIGGER incidents_search_update AFTER UPDATE OF description, location ON incidents
WHEN old.id <= (SELECT indexed_through FROM search_index_state)
BEGIN
    INSERT INTO incidents_search (incidents_search, rowid, description, location)
        VALUES ('delete', old.id, old.description, old.location);
    INSERT INTO incidents_search (rowid, description, location) VALUES (new.id, new.description, new.location);
END;

CREATE TRIGGER incidents_search_delete AFTER DELETE ON incidents
WHEN old.id <= (SELECT indexed_through FROM search_index_state)
BEGIN
    INSERT INTO incidents_search (incidents_search, rowid, description, location)
        VALUES ('delete', old.id, old.description, old.location);
END;
