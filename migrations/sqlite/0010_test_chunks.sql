-- Whether a chunk's lines are tests, as their language or its test tool declares them (Go's _test.go
-- files, Rust's #[test], JUnit's @Test, pytest's test_*.py...): read once by the code reader and
-- stored, so a search ranks the code a test calls before the test without reading any text. False
-- until the next build reads each file again (the chunker's version names this change).
ALTER TABLE chunks ADD COLUMN is_test INTEGER NOT NULL DEFAULT 0;
