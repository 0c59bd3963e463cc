-- How a chunk's first lines lie in a literal (code) block its file opened before the chunk, as the
-- file's reader found it at the build (indexer/records.py code_lead): the number of those lines,
-- negative when the last of them is the markup line that closes the block. A chunk read alone
-- cannot tell (its first fence would open a block, not close it), so a snippet shows its code as
-- written and what follows as prose with this. 0 until the next build reads each file again (the
-- chunker's version names this change): a snippet shows the chunk as before. No vector changes.
ALTER TABLE chunks ADD COLUMN code_lead INTEGER NOT NULL DEFAULT 0;
