-- Where a chunk is in the original when line numbers do not say it (a PDF's 'page 3', a notebook's
-- 'cells 4-6', a Word document's 'paragraphs 12-15'; '' for files cited by their lines), and the text
-- encoding a file was read with ('utf-8', 'cp1252'...; '' for PDF and DOCX, which are not text).
ALTER TABLE chunks ADD COLUMN locator TEXT NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN encoding TEXT NOT NULL DEFAULT '';
