-- 0002: per-source state that outlives a run: the quota back-off.
-- Forward-only: never edit this file after it has landed.

-- A source whose provider said its request quota is used up (data.go.kr gateway code 22,
-- HTTP 429 past the retries) is not polled again until `exhausted_until`; runs in between are
-- recorded as skipped without any request.
CREATE TABLE source_state (
    source           TEXT PRIMARY KEY,
    exhausted_until  TEXT,   -- RFC 3339 UTC; NULL when the source may run
    exhausted_reason TEXT,   -- log-safe text of the error that exhausted it
    updated_at       TEXT NOT NULL
) WITHOUT ROWID;
