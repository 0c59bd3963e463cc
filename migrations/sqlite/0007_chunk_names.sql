-- The names each chunk declares it defines (a Sphinx object directive, a man page's NAME line, a
-- function or class in source code), one per line: found once by the file's reader and stored, so a
-- one-name question finds its definition without reading any chunk's text at query time. Empty until
-- the next build reads each file again (the chunker's version names this change).
ALTER TABLE chunks ADD COLUMN names TEXT NOT NULL DEFAULT '';
