-- Whether a chunk is of a source code file, as the file's reader is chosen (indexer/formats): the
-- keyword index reads such a chunk with the parts of the names it spells after its text
-- (indexer/store/keywords.py), so that `completions` finds `bash_completionsV2` and "user name"
-- finds `getUserName`; any other chunk as its text. False until the next build reads each file
-- again (the chunker's version names this change) and indexes its chunks anew; no vector changes.
ALTER TABLE chunks ADD COLUMN is_code INTEGER NOT NULL DEFAULT 0;
