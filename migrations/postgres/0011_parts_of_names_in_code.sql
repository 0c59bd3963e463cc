-- Whether a chunk is of a source code file, as the file's reader is chosen (indexer/formats): the
-- keyword column of such a chunk holds, after its text, the parts of the names it spells (snake_case,
-- camelCase, letters and digits), so that `completions` finds `bash_completionsV2` and "user name"
-- finds `getUserName`; any other chunk's is as before. False until the next build reads each file
-- again (the chunker's version names this change) and writes its chunks anew; no vector changes.
-- name_words() is indexer/store/keywords.py's index_text for code, as SQL (the tests hold the two to
-- the same words), after 0008's keyword_text() has written the pairs.
ALTER TABLE chunks ADD COLUMN is_code BOOLEAN NOT NULL DEFAULT FALSE;

-- name_parts: the words a name is made of, as keywords.name_parts gives them: lower case, each once
-- in the order it first comes, not the name itself nor a single character. Its parts between `_`
-- and camelCase humps, then the letters and the digits of a part that mixes them.
CREATE FUNCTION name_parts(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT string_agg(word, ' ' ORDER BY place)
    FROM (
        SELECT lower(piece) AS word, min(place) AS place
        FROM (
            SELECT part[1] AS piece, ARRAY[part_place, 0] AS place
            FROM regexp_matches(name, '[A-Z]?[a-z0-9]+|[A-Z]{2,}s(?![a-z])|[A-Z]+[0-9]*(?![a-z])', 'g')
                WITH ORDINALITY AS parts (part, part_place)
            UNION ALL
            SELECT piece[1], ARRAY[part_place, piece_place]
            FROM regexp_matches(name, '[A-Z]?[a-z0-9]+|[A-Z]{2,}s(?![a-z])|[A-Z]+[0-9]*(?![a-z])', 'g')
                WITH ORDINALITY AS parts (part, part_place),
                LATERAL regexp_matches(part[1], '[A-Za-z]+|[0-9]+', 'g') WITH ORDINALITY AS pieces (piece, piece_place)
            WHERE part[1] ~ '[A-Za-z]' AND part[1] ~ '[0-9]'
        ) AS pieces
        WHERE char_length(piece) > 1 AND lower(piece) <> lower(name)
        GROUP BY lower(piece)
    ) AS words
$$;

-- name_words: the text, then the parts of each name it holds, once a name, in the order the names
-- first come. The text is cut into runs of ASCII letters, digits and `_` and runs of anything else;
-- a run of the first kind that no letter of another alphabet touches is a name. Only a name with a
-- `_`, a digit, a hump (`aB`) or two capitals (`HTTPServer`) has parts other than itself: the
-- others (most words of a text) are not cut at all.
CREATE FUNCTION name_words(body text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN parts IS NULL THEN body ELSE body || ' ' || parts END
    FROM (
        SELECT string_agg(name_parts(run), ' ' ORDER BY place) AS parts
        FROM (
            SELECT run, min(place) AS place
            FROM (
                SELECT run[1] AS run, place, lag(run[1]) OVER runs AS before, lead(run[1]) OVER runs AS after
                FROM regexp_matches(body, '[A-Za-z0-9_]+|[^A-Za-z0-9_]+', 'g') WITH ORDINALITY AS found (run, place)
                WINDOW runs AS (ORDER BY place)
            ) AS runs
            WHERE run ~ '^[A-Za-z0-9_]' AND run ~ '_|[0-9]|[a-z][A-Z]|[A-Z][A-Z]'
                AND coalesce(before, '') !~ '[^\x01-\x7f]$'
                AND coalesce(after, '') !~ '^[^\x01-\x7f]'
            GROUP BY run
        ) AS names
    ) AS tail
$$;

CREATE OR REPLACE FUNCTION chunk_keywords() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.search_text := to_tsvector('english', CASE
        WHEN NEW.is_code THEN name_words(keyword_text(NEW.heading || ' ' || NEW.text))
        ELSE keyword_text(NEW.heading || ' ' || NEW.text)
    END);
    RETURN NEW;
END
$$;

DROP TRIGGER chunk_keywords ON chunks;
CREATE TRIGGER chunk_keywords BEFORE INSERT OR UPDATE OF heading, text, is_code ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunk_keywords();
