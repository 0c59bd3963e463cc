-- Words of every script: the keyword index holds each run of Chinese, Japanese or Korean letters as
-- the pairs of characters that start at each of its positions (indexer/store/keywords.py), where
-- unicode61 made the whole run one word that nothing but the whole run matched. Other text is
-- indexed as before, word for word.
--
-- The index no longer reads its text from `chunks` (content = 'chunks'): what it holds is not the
-- text as stored, and an external-content table can only forget a row given the very values it
-- was given, which the rewriting would then have to reproduce forever. contentless_delete forgets a
-- row by its id alone. keyword_text() is the rewriting, registered by the store on the connection
-- that migrates; every chunk is indexed again, in one statement.
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    heading, text,
    content = '', contentless_delete = 1,
    tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);
INSERT INTO chunks_fts (rowid, heading, text) SELECT id, keyword_text(heading), keyword_text(text) FROM chunks;
-- A chunk in which the tokenizer found no word is not held: it has nothing to find, and counted in
-- BM25's statistics it would change every other chunk's score (SQLiteStore._forget_wordless_chunks).
DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks_fts_docsize WHERE sz = x'0000');
