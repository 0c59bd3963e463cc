-- Whether a chunk's lines are a contents list, as its leaders declare one (titles, each followed by
-- a run of dots and its page: indexer/chunking.py lists_contents): read once at the build and
-- stored, so a search ranks the list after the pages it lists without reading any text. False until
-- the next build reads each file again (the chunker's version names this change). No vector changes.
ALTER TABLE chunks ADD COLUMN is_contents BOOLEAN NOT NULL DEFAULT FALSE;
