-- PostgreSQL 0009: a status refresh finds each source's last run that stored records with one
-- seek (issue 23, found by PostgresPlanTests on a log of 20,000 runs). The lookup `… WHERE
-- source = $1 AND status IN ('succeeded', 'incomplete') ORDER BY id DESC LIMIT 1` walked the
-- primary key backwards from the newest run of any source: for a source that has stored nothing
-- since its last runs (a new source, a wrong key) that is every run in the log (20,008 rows).
-- Partial: the runs that stored records, by source and id. Forward-only: never edit this file
-- after it has landed.

CREATE INDEX ingest_runs_stored_by_source ON ingest_runs (source, id) WHERE status IN ('succeeded', 'incomplete');
