-- 0017: the starts of a page of `list --at T` read from small indexes (issue 22: `list --at T --limit
-- 100` in start order, p95 336 ms and max 2.0 s on a quiet machine at 1,000,000 incidents, target
-- 150 ms). Forward-only: never edit this file after it has landed.
--
-- A page in start order takes the first candidates in that order from the intervals containing T
-- (Queries.swift, SQLiteStore.firstListedSQL). It read about 1,000 to 1,450 pages of 4 KiB a page
-- (the bench's moments; a plain page reads about 20), so that a moment whose pages were not in
-- memory waited on about as many reads:
-- - the start of each of the ~6,800 ended intervals' incidents, from the incidents' rows (~800
--   pages, a few rows a page). An index of each incident's start by id holds 100 or more a page;
-- - the open intervals from their index in start order (0016), which skipped every open interval
--   listed after T (~500 pages for a moment in the history's first days). Read instead from T's
--   start down: the open intervals listed after T that started before it are few. Those whose
--   start is after T and were listed by T can only be intervals listed before their incident's
--   start (planned work): the partial index below holds only those;
-- - and each source's last run started by T (its "as of" line, SourceAsOf.lastRunIDs), found by reading
--   the runs back from the last, each row (250 pages for a moment 29 days back, 5-minute runs):
--   the index of runs by source and id now holds their start too.
CREATE INDEX incidents_started_by_id ON incidents (id, started_at);
CREATE INDEX incident_listed_open_ahead ON incident_listed_open (started_at, incident_id, listed_from)
    WHERE started_at > strftime('%Y-%m-%dT%H:%M:%SZ', listed_from + 1577836800, 'unixepoch');
CREATE INDEX ingest_runs_by_source_started ON ingest_runs (source, id, started_at);
