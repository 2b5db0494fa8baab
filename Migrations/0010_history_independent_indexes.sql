-- 0010: indexes that keep a poll, a prune and a status refresh independent of the history
-- (issue 23): each finds its few rows through an index instead of scanning every stored incident
-- or every run. Forward-only: never edit this file after it has landed.
--
-- Measured before (a 1,000-record poll, 5 % changed): 63 ms on an empty database, 464 ms with
-- 3,000,000 incidents; a prune that deletes nothing 27 ms → 851 ms. PollPlanTests runs the poll, prune
-- and status statements through EXPLAIN QUERY PLAN and fails on a whole scan.

-- prune: the incidents cleared before the horizon. Partial, so an incident costs nothing here
-- until it is cleared, and its entry lands near the end (cleared at the poll's time).
CREATE INDEX incidents_by_cleared ON incidents (cleared_at) WHERE cleared_at IS NOT NULL;

-- The count keys that fell to zero (a changed or pruned incident's old keys), deleted after each
-- removal: without it, that DELETE read every key (every road name ever seen) per changed record.
CREATE INDEX incident_counts_empty ON incident_counts (incidents) WHERE incidents = 0;

-- prune: the runs finished before the horizon (one row a poll: millions after a few years).
CREATE INDEX ingest_runs_by_finished ON ingest_runs (finished_at);
