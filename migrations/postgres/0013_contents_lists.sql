-- Whether a chunk's lines are a contents list, as its leaders declare one (titles, each followed by
-- leaders and its page or reference: indexer/chunking.py contents_entries): read once at the build
-- and stored, so a search ranks the list after the pages it lists without reading any text. False
-- until the next build reads each file again (the chunker's version names this change). No vector
-- changes.
ALTER TABLE chunks ADD COLUMN is_contents BOOLEAN NOT NULL DEFAULT FALSE;
