-- When each build was last seen alive: set when it starts, with every commit of a group (at least
-- every 15 s while it runs, see BuildOptions.commit_seconds) and when it ends, so a killed build's duration ends there instead
-- of growing with the time since it started.
ALTER TABLE builds ADD COLUMN seen_at REAL;
UPDATE builds SET seen_at = COALESCE(finished_at, started_at);
