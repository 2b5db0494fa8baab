-- 0016: the number of incidents listed in each past hour, and the open intervals' starts (issue 22: `incidents timeline --per hour`
-- over 30 days at 1,000,000 incidents took 15 s; the target is 500 ms). Forward-only: never edit
-- this file after it has landed.
--
-- A timeline counts, per bucket, the incidents listed at some moment of it (docs/analyst.md,
-- "History and changes"): over 30 days that is every one of 2,000,000 listed intervals, read,
-- cut, joined per incident and summed at every read. An hour before the current one no longer
-- changes but for a poll logging in the past (a replay, a stale document), a prune and a
-- provider's end stored anew, so its count is kept here, in hours since 2020-01-01T00:00:00Z
-- (the listed intervals' seconds / 3600, from 0): a timeline per hour reads the hours it holds
-- and counts only the others (the window's partial first and last hours, the current hour,
-- hours a change took out) from the intervals. Kept by the polls (PollTransitions.countHours):
-- each poll takes out the hours from its earliest log entry's on, then counts the hours since
-- the last one held, at most a day back; a prune takes out the hours of the intervals it
-- removes; the trigger below those from an incident's old or new provider end on.
CREATE TABLE listed_hours (
    hour   INTEGER PRIMARY KEY,
    listed INTEGER NOT NULL
);
CREATE TRIGGER listed_hours_after_provider_end AFTER UPDATE OF ended_at ON incidents
WHEN old.ended_at IS NOT new.ended_at
BEGIN
    DELETE FROM listed_hours WHERE hour >= (min(coalesce(unixepoch(old.ended_at), 9000000000000000), coalesce(unixepoch(new.ended_at), 9000000000000000))
                                            - 1577836800 - 3600) / 3600;
END;

-- `list --at T --limit 100` in start order (issue 22: p95 592 ms, target 150 ms) read the start of
-- every incident listed at T, tens of thousands, from incidents_active by id. The open intervals
-- (most of those listed at any moment) keep their incident's start, kept equal by the trigger
-- below, in an index in start order: the first of them in the page's order are read from it alone.
ALTER TABLE incident_listed_open ADD COLUMN started_at TEXT;
CREATE INDEX incident_listed_open_by_incident ON incident_listed_open (incident_id);
CREATE INDEX incident_listed_open_by_started ON incident_listed_open (started_at, incident_id, listed_from);
CREATE TRIGGER incident_listed_open_started AFTER UPDATE OF started_at ON incidents
WHEN old.started_at IS NOT new.started_at
BEGIN
    UPDATE incident_listed_open SET started_at = new.started_at WHERE incident_id = new.id;
END;

-- rebuild: the open intervals' starts; the hours from the first listed interval's to the one before the current hour.
UPDATE incident_listed_open SET started_at = (SELECT started_at FROM incidents WHERE incidents.id = incident_listed_open.incident_id);
INSERT INTO listed_hours (hour, listed)
WITH w(s0, e0) AS (
    SELECT max(0, min(f)) / 3600 * 3600, (unixepoch('now') - 1577836800) / 3600 * 3600
    FROM (SELECT min(listed_from) AS f FROM incident_listed_intervals UNION ALL SELECT min(listed_from) FROM incident_listed_open)),
spans(incident, s, e) AS (
    SELECT incident_id, listed_from, listed_until FROM incident_listed_intervals, w WHERE listed_from < e0 AND listed_until > s0
    UNION ALL SELECT incident_id, listed_from, e0 FROM incident_listed_open, w WHERE listed_from < e0),
cut(id, s, e) AS (
    SELECT spans.incident, max(spans.s, s0), min(spans.e, e0, coalesce(unixepoch(incidents.ended_at) - 1577836800, e0))
    FROM spans JOIN incidents ON incidents.id = spans.incident, w),
ranges(id, first, last) AS (SELECT id, s / 3600, (e - 1) / 3600 FROM cut WHERE s < e),
joined(first, last, before) AS (
    SELECT first, last, max(last) OVER (PARTITION BY id ORDER BY first, last ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
    FROM ranges),
steps(hour, change) AS (
    SELECT max(first, coalesce(before + 1, first)), 1 FROM joined WHERE coalesce(before, -1) < last
    UNION ALL SELECT last + 1, -1 FROM joined WHERE coalesce(before, -1) < last),
totals(hour, change) AS (SELECT hour, sum(change) FROM steps GROUP BY hour),
hours(hour) AS (SELECT s0 / 3600 FROM w WHERE s0 < e0 AND s0 IS NOT NULL UNION ALL SELECT hour + 1 FROM hours, w WHERE hour + 1 < e0 / 3600)
SELECT hours.hour, sum(coalesce(totals.change, 0)) OVER (ORDER BY hours.hour) FROM hours LEFT JOIN totals ON totals.hour = hours.hour;
