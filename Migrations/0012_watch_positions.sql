-- 0012: each watch's position in the change feed, in the database (issue 22 item 5;
-- docs/analyst.md, "Watches"), where a file beside the database (`DATABASE.watches`) kept it.
-- Forward-only: never edit this file after it has landed.
--
-- One row per watch ever registered. `cursor` is the last transition delivered or passed over;
-- it moves only after the receiver's 2xx, and only while the process delivering the watch
-- still holds its claim (holder_host, holder_pid until expires_at, as in source_leases: a
-- claim of a dead pid on this host counts as expired). IncidentCore's WatchPositions states the
-- rules. A scheduler takes the cursors of an existing `DATABASE.watches` file over on its
-- first run and renames the file (`.imported`). Times are RFC 3339 UTC.
CREATE TABLE watch_positions (
    watch         TEXT    PRIMARY KEY,
    cursor        INTEGER NOT NULL CHECK (cursor >= 0),
    holder_host   TEXT,              -- NULL before the first claim
    holder_pid    INTEGER,
    expires_at    TEXT,              -- NULL once released
    delivered_at  TEXT,              -- when the cursor last moved past a delivered transition
    last_error    TEXT,              -- the last failed delivery, kept after later successes
    last_error_at TEXT
) WITHOUT ROWID;
