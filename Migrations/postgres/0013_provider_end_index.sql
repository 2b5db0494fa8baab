-- PostgreSQL 0013: the provider's end times of the incidents that have one, by themselves, as
-- SQLite's 0014 (issue 22: `incidents timeline`; docs/analyst.md, "History and changes").
-- Forward-only: never edit this file after it has landed.
--
-- A timeline cuts each listed range (0011) at its incident's provider's end, as stored now.
-- Without filters it reads no incident row: the ends before the window's end come from this
-- index alone (an index-only scan: the id is in it). Rows without an end are not in it.
CREATE INDEX incidents_by_end ON incidents (ended_at, id) WHERE ended_at IS NOT NULL;
