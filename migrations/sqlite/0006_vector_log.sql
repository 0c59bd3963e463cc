-- Every chunk written or deleted, in order. The vector graph saved beside the index file reflects the
-- index up to one position of this log (its record in meta, 'vector_graph'); whoever searches reads the
-- chunks logged after it, so the graph never answers with a deleted chunk nor misses a committed one.
-- Triggers, so that no write can forget it: one small row per chunk (FTS5's per-statement merging,
-- the reason chunks_fts has none, does not apply to a plain table). A fold of the graph deletes the
-- rows it has taken in; AUTOINCREMENT keeps positions growing after that.
CREATE TABLE vector_log (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id INTEGER NOT NULL
);
INSERT INTO vector_log (chunk_id) SELECT id FROM chunks ORDER BY id;
CREATE TRIGGER vector_log_chunk_added AFTER INSERT ON chunks
BEGIN
    INSERT INTO vector_log (chunk_id) VALUES (new.id);
END;
CREATE TRIGGER vector_log_chunk_removed AFTER DELETE ON chunks
BEGIN
    INSERT INTO vector_log (chunk_id) VALUES (old.id);
END;
-- Which log this is: an index deleted and built anew, or replaced by a rebuild, has another, so a
-- process that searched the old one does not read the new one's positions as its own.
INSERT INTO meta (key, value) VALUES ('vector_log_id', lower(hex(randomblob(8))));
