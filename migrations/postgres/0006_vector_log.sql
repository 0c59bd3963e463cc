-- Nothing to do here: the SQLite engine's vector log (its 0006) tells the vector graph saved beside
-- the index file what changed; pgvector's HNSW index lives inside PostgreSQL and follows every write
-- itself. The step exists so both engines keep the same numbered steps.
SELECT 1;
