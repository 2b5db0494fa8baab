-- PostgreSQL 0011: an index of when each incident was listed as active, as SQLite's 0013 (issue 22:
-- `list --at`, the server's `datetime` instant; docs/analyst.md, "History and changes").
-- Forward-only: never edit this file after it has landed.
--
-- An incident is listed at T when its last appearance, reopening or clear at or before T (in the
-- log's order: time, then cursor) is an appearance or a reopening: when T lies in one of its
-- ranges, each from an appearance or a reopening to the first clear of the incident after it,
-- open while none followed. One row per appearance or reopening (`opening`, its cursor). The
-- ended ranges are found by a GiST index (PollTransitionLog.listed), the open ones, which are what
-- the sources list now, by a B-tree of their start: a GiST insert costs several times a B-tree's,
-- and a first poll inserts an open range per incident. The store adds a poll's ranges open and
-- ends the ones its clears end, in the poll's transaction (PollTransitionLog.indexIntervals);
-- deleting an incident deletes its log, which deletes its ranges.
CREATE TABLE incident_listed_intervals (
    opening     bigint    PRIMARY KEY REFERENCES incident_transitions (cursor) ON DELETE CASCADE,
    incident_id bigint    NOT NULL,
    listed      tstzrange NOT NULL
);
CREATE INDEX incident_listed_intervals_ended ON incident_listed_intervals USING gist (listed) WHERE NOT upper_inf(listed);
CREATE INDEX incident_listed_intervals_open ON incident_listed_intervals (lower(listed)) WHERE upper_inf(listed);

-- rebuild: every appearance and reopening of the log, to the first clear after it.
INSERT INTO incident_listed_intervals (opening, incident_id, listed)
SELECT o.cursor, o.incident_id,
       tstzrange(o.at, (SELECT min(c.at) FROM incident_transitions c
                        WHERE c.incident_id = o.incident_id AND c.kind = 'cleared' AND c.at >= o.at
                          AND (c.at, c.cursor) > (o.at, o.cursor)), '[)')
FROM incident_transitions o
WHERE o.kind IN ('appeared', 'reopened') AND o.incident_id IS NOT NULL;
