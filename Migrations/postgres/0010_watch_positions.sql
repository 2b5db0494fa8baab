-- PostgreSQL 0010: each watch's position in the change feed, in the database every scheduler
-- host shares (issue 22 item 5; docs/analyst.md, "Watches"), as SQLite's 0012. It was a file
-- (`watchState`) that one host kept, so only one host could deliver. Forward-only: never edit
-- this file after it has landed.
--
-- One row per watch ever registered. A host claims a watch before delivering it: one
-- `UPDATE … WHERE <claimable>`, which locks the row, so of several hosts claiming at once one
-- wins. `cursor` moves only after the receiver's 2xx, only while its mover holds the claim
-- (holder host, pid and token, until expires_at on the server's clock) and only from the
-- cursor it read, so each transition is delivered by one host. IncidentCore's WatchPositions
-- states the rules. Existing `watchState` files are taken over by the scheduler (renamed
-- `.imported`).
CREATE TABLE watch_positions (
    watch         text        COLLATE "C" PRIMARY KEY,
    cursor        bigint      NOT NULL CHECK (cursor >= 0),
    holder_host   text        COLLATE "C",  -- NULL before the first claim
    holder_pid    integer,
    holder_token  text        COLLATE "C",
    expires_at    timestamptz,              -- NULL once released
    delivered_at  timestamptz,              -- when the cursor last moved past a delivered transition
    last_error    text,                     -- the last failed delivery, kept after later successes
    last_error_at timestamptz
);
