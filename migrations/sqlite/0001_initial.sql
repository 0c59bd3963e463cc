-- The index: files found under one or more roots, their chunks, and a keyword index over the chunks.
-- The vector table (sqlite-vec vec0, rowid = chunks.id) is created by the store when the first build
-- fixes the dimension, because vec0 needs the dimension in its declaration.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per file seen under a root. status: 'indexed', or why it was skipped ('binary', 'encoding',
-- 'empty'), so that an unchanged skipped file is not read again on the next run.
CREATE TABLE files (
    id           INTEGER PRIMARY KEY,
    root         TEXT NOT NULL,
    path         TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'indexed',
    UNIQUE (root, path)
);

CREATE TABLE chunks (
    id         INTEGER PRIMARY KEY,
    file_id    INTEGER NOT NULL REFERENCES files (id),
    seq        INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    heading    TEXT NOT NULL,
    text       TEXT NOT NULL,
    -- hash of the text the model read (heading + text); identical text re-uses the same vector
    text_hash  TEXT NOT NULL
);
CREATE INDEX chunks_by_file ON chunks (file_id, seq);
CREATE INDEX chunks_by_hash ON chunks (text_hash);

-- Keyword index (BM25) over the same rows. The store writes and deletes its entries in the same
-- transactions as the chunks (in one statement per group of files, not with per-row triggers: FTS5
-- merges segments per statement).
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    heading, text,
    content = 'chunks', content_rowid = 'id',
    tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);

-- One row per build: what it did and what it cost, for `index status`.
CREATE TABLE builds (
    id              INTEGER PRIMARY KEY,
    root            TEXT NOT NULL,
    started_at      REAL NOT NULL,
    finished_at     REAL,
    outcome         TEXT NOT NULL DEFAULT 'running',
    model           TEXT NOT NULL,
    files_added     INTEGER NOT NULL DEFAULT 0,
    files_changed   INTEGER NOT NULL DEFAULT 0,
    files_removed   INTEGER NOT NULL DEFAULT 0,
    files_failed    INTEGER NOT NULL DEFAULT 0,
    files_skipped   INTEGER NOT NULL DEFAULT 0,
    chunks_embedded INTEGER NOT NULL DEFAULT 0,
    chunks_reused   INTEGER NOT NULL DEFAULT 0,
    requests        INTEGER NOT NULL DEFAULT 0,
    tokens          INTEGER NOT NULL DEFAULT 0,
    error           TEXT
);
