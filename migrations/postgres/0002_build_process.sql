-- Which process runs a build, so a refused builder can name it and a reader can tell a build whose
-- process is gone (killed, or stopped by SIGTERM) from one still running.
ALTER TABLE builds ADD COLUMN pid INTEGER;
ALTER TABLE builds ADD COLUMN host TEXT;
