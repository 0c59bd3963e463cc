-- Words of every script: the keyword column holds each run of Chinese, Japanese or Korean letters as
-- the pairs of characters that start at each of its positions, where the text search parser made
-- the whole run one word that nothing but the whole run matched. Other text is indexed as before.
-- keyword_text() is indexer/store/keywords.py's index_text, as SQL, so that PostgreSQL keeps the
-- column itself as before (the tests hold the two to the same words); unspaced_letters() its
-- UNSPACED_LETTERS.
CREATE FUNCTION unspaced_letters() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT '\u1100-\u11FF\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303B-\u303C\u3041-\u3096'
        '\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3105-\u312F\u3131-\u318E\u31A0-\u31BF'
        '\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF'
        '\uFF66-\uFF9F\uFFA0-\uFFDC\U0001B000-\U0001B16F\U00020000-\U000323AF'
$$;

-- The text cut into runs of those letters and runs of anything else, in order; each run of letters
-- written as its pairs (substr of 2 from each position: the last is the letter alone), all set apart
-- by spaces. Text without those letters is returned as it is, after one test.
CREATE FUNCTION keyword_text(body text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN body !~ ('[' || unspaced_letters() || ']') THEN body
        ELSE (
            SELECT string_agg(
                CASE
                    WHEN run[1] ~ ('^[' || unspaced_letters() || ']') THEN (
                        SELECT string_agg(substr(run[1], start, 2), ' ' ORDER BY start)
                        FROM generate_series(1, char_length(run[1])) AS start
                    )
                    ELSE run[1]
                END,
                ' ' ORDER BY place
            )
            FROM regexp_matches(
                body, '[' || unspaced_letters() || ']+|[^' || unspaced_letters() || ']+', 'g'
            ) WITH ORDINALITY AS runs (run, place)
        )
    END
$$;

-- The keyword column was generated from the text. Generated anew, it would rewrite the whole table
-- and rebuild the HNSW graph with it, whatever the text: it becomes a plain column that a trigger
-- sets from the text on every insert and every change of the text, and only the rows holding such
-- letters are written again.
ALTER TABLE chunks ALTER COLUMN search_text DROP EXPRESSION;

CREATE FUNCTION chunk_keywords() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.search_text := to_tsvector('english', keyword_text(NEW.heading || ' ' || NEW.text));
    RETURN NEW;
END
$$;

CREATE TRIGGER chunk_keywords BEFORE INSERT OR UPDATE OF heading, text ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunk_keywords();

UPDATE chunks SET search_text = to_tsvector('english', keyword_text(heading || ' ' || text))
WHERE heading || ' ' || text ~ ('[' || unspaced_letters() || ']');
