-- The index on PostgreSQL: the same tables as migrations/sqlite, with the vectors in a pgvector column
-- of the chunks table and the keywords in a generated tsvector column (no separate tables to keep in
-- step). The extension itself is created by the store before the first migration, since creating it
-- needs a superuser and deserves its own error message.
--
-- The embedding column starts untyped: pgvector's HNSW index needs a fixed dimension (vector(N)), which
-- only the first batch of the first build knows. The store then types the column and creates the HNSW
-- index (PostgresStore.create_vector_table), as the SQLite store creates its vec0 table.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per file seen under a root. status: 'indexed', or why it was skipped ('binary', 'encoding',
-- 'empty'), so that an unchanged skipped file is not read again on the next run.
CREATE TABLE files (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    root         TEXT NOT NULL,
    path         TEXT NOT NULL,
    size         BIGINT NOT NULL,
    mtime_ns     BIGINT NOT NULL,
    content_hash TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'indexed',
    UNIQUE (root, path)
);

CREATE TABLE chunks (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_id     BIGINT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    start_line  INTEGER NOT NULL,
    end_line    INTEGER NOT NULL,
    heading     TEXT NOT NULL,
    text        TEXT NOT NULL,
    -- hash of the text the model read (heading + text); identical text re-uses the same vector
    text_hash   TEXT NOT NULL,
    embedding   vector NOT NULL,
    -- keywords of heading and text, kept by PostgreSQL itself in the same row, hence the same transaction
    search_text tsvector GENERATED ALWAYS AS (to_tsvector('english', heading || ' ' || text)) STORED
);
CREATE INDEX chunks_by_file ON chunks (file_id, seq);
CREATE INDEX chunks_by_hash ON chunks (text_hash);
CREATE INDEX chunks_search_text ON chunks USING gin (search_text);

-- One row per build: what it did and what it cost, for `index status`.
CREATE TABLE builds (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    root            TEXT NOT NULL,
    started_at      DOUBLE PRECISION NOT NULL,
    finished_at     DOUBLE PRECISION,
    outcome         TEXT NOT NULL DEFAULT 'running',
    model           TEXT NOT NULL,
    files_added     INTEGER NOT NULL DEFAULT 0,
    files_changed   INTEGER NOT NULL DEFAULT 0,
    files_removed   INTEGER NOT NULL DEFAULT 0,
    files_failed    INTEGER NOT NULL DEFAULT 0,
    files_skipped   INTEGER NOT NULL DEFAULT 0,
    chunks_embedded INTEGER NOT NULL DEFAULT 0,
    chunks_reused   INTEGER NOT NULL DEFAULT 0,
    requests        BIGINT NOT NULL DEFAULT 0,
    tokens          BIGINT NOT NULL DEFAULT 0,
    error           TEXT
);
