-- 0014: the provider's end times of the incidents that have one, by themselves (issue 22:
-- `incidents timeline`; docs/analyst.md, "History and changes").
-- Forward-only: never edit this file after it has landed.
--
-- A timeline cuts each listed interval (0013) at its incident's provider's end, as stored now.
-- Without filters it reads no incident row: the ends come from this index of the rows that
-- have one (id and end in the index), so a count over 1,000,000 incidents without ends reads
-- none of them. Rows without an end are not in it, and a poll that sets no end does not touch it.
CREATE INDEX incidents_by_end ON incidents (ended_at) WHERE ended_at IS NOT NULL;
