-- Full text that finds code: PostgreSQL's parser keeps `os.path.isfile` as
-- one "host" token and `readFileLines` as one word, so a query for `isfile`
-- or `file lines` missed them. The search document now splits dotted names
-- and camelCase first (snake_case the parser already splits); queries are
-- split the same way before they reach SQL. On the CoSQA dev set this took
-- keyword nDCG@10 from 0.26 to the figure in docs/BENCHMARKS.md.

-- `a.b.c` -> `a b c` (not `1.2.3`), `readFileLines` -> `read File Lines`,
-- `HTTPServer` -> `HTTP Server`.
CREATE FUNCTION lore_code_words(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT regexp_replace(
               regexp_replace(
                   regexp_replace($1, '(?<=[[:alnum:]_])\.(?=[[:alpha:]_])', ' ', 'g'),
                   '(?<=[[:lower:][:digit:]])(?=[[:upper:]])', ' ', 'g'),
               '(?<=[[:upper:]])(?=[[:upper:]][[:lower:]])', ' ', 'g')
$$;

DROP INDEX knowledge_entries_search_idx;
ALTER TABLE knowledge_entries DROP COLUMN search_document;

CREATE OR REPLACE FUNCTION lore_entry_document(title text, summary text, body text, category text, tags text[])
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', lore_code_words(coalesce(title, ''))), 'A')
        || setweight(to_tsvector('english', coalesce(array_to_string(tags, ' '), '')), 'A')
        || setweight(to_tsvector('english', lore_code_words(coalesce(summary, '')) || ' ' || coalesce(category, '')), 'B')
        || setweight(to_tsvector('english', lore_code_words(coalesce(body, ''))), 'C')
$$;

ALTER TABLE knowledge_entries ADD COLUMN search_document tsvector GENERATED ALWAYS AS
    (lore_entry_document(title, summary, body, category, tags)) STORED;
CREATE INDEX knowledge_entries_search_idx ON knowledge_entries USING gin (search_document);
