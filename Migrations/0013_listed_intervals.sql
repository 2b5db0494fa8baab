-- 0013: an index of when each incident was listed as active (issue 22: `list --at`, the server's
-- `datetime` instant; docs/analyst.md, "History and changes").
-- Forward-only: never edit this file after it has landed.
--
-- An incident is listed at T when its last appearance, reopening or clear at or before T (in the
-- log's order: time, then id) is an appearance or a reopening. That is: when T lies in one of its
-- intervals, each from an appearance or a reopening to the first clear of the incident after it,
-- open while none followed. `list --at` looked the last entry up in the log for every incident it
-- read, in start order: a page for a moment a week ago read every incident started since.
--
-- The intervals, each keyed by its appearance's or reopening's id in incident_transitions, in
-- whole seconds since 2020-01-01T00:00:00Z (1577836800 since 1970; 32-bit: 1951 to 2088):
-- - ended ones in an R*Tree (https://www.sqlite.org/rtree.html, rtree_i32), which finds those that
--   contain T;
-- - open ones in a table, by their start: they are what the sources list now. An R*Tree insert
--   costs about 7 µs, so a first poll of 300,000 incidents would have spent 2 s on them.
-- The store adds a poll's intervals as open and moves the ones its clears end, in the poll's
-- transaction (PollTransitions.indexIntervals), and removes an incident's before deleting it.
CREATE VIRTUAL TABLE incident_listed_intervals USING rtree_i32(id, listed_from, listed_until, +incident_id);
CREATE TABLE incident_listed_open (
    id          INTEGER PRIMARY KEY,
    incident_id INTEGER NOT NULL,
    listed_from INTEGER NOT NULL
);
CREATE INDEX incident_listed_open_by_start ON incident_listed_open (listed_from);

-- rebuild: every appearance and reopening of the log, to the first clear after it.
CREATE TEMP TABLE listed_interval_ends AS
SELECT o.id, o.incident_id, unixepoch(o.at) - 1577836800 AS listed_from,
       unixepoch((SELECT min(c.at) FROM incident_transitions c
                  WHERE c.incident_id = o.incident_id AND c.kind = 'cleared' AND c.at >= o.at AND (c.at > o.at OR c.id > o.id)))
       - 1577836800 AS listed_until
FROM incident_transitions o
WHERE o.kind IN ('appeared', 'reopened') AND o.incident_id IS NOT NULL;
INSERT INTO incident_listed_intervals (id, listed_from, listed_until, incident_id)
SELECT id, listed_from, listed_until, incident_id FROM temp.listed_interval_ends WHERE listed_until IS NOT NULL ORDER BY id;
INSERT INTO incident_listed_open (id, incident_id, listed_from)
SELECT id, incident_id, listed_from FROM temp.listed_interval_ends WHERE listed_until IS NULL ORDER BY id;
DROP TABLE temp.listed_interval_ends;
