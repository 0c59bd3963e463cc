-- How many chunks the index holds, kept with every write: the keyword search's scale (BM25's
-- document count) reads it on every query, and counting the rows each time costs a scan.
INSERT INTO meta (key, value) SELECT 'chunk_count', CAST(count(*) AS TEXT) FROM chunks WHERE true
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
