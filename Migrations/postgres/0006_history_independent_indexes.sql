-- PostgreSQL 0006: the indexes of SQLite's 0010 that apply here (issue 23): prune finds the
-- incidents cleared, and the runs finished, before its horizon through an index instead of
-- reading every incident and every run; a status refresh finds each source's last runs from the
-- end of ingest_runs_by_source (0001). Forward-only: never edit this file after it has landed.

-- Partial: an incident costs nothing here until it is cleared.
CREATE INDEX incidents_by_cleared ON incidents (cleared_at) WHERE cleared_at IS NOT NULL;

CREATE INDEX ingest_runs_by_finished ON ingest_runs (finished_at);
