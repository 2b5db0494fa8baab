-- PostgreSQL 0007: a lease holder is one process, named by host, process id and a token drawn
-- when the process starts (issue 24). Two schedulers on one host (or two containers with the
-- same host name and pid 1) both polled, each taking the other's starts for its own: now a
-- holder's own starts are those with its host, pid and token. Forward-only: never edit this
-- file after it has landed.
ALTER TABLE source_leases ADD COLUMN holder_token text COLLATE "C" NOT NULL DEFAULT '';
