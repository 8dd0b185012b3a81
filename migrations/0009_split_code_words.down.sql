DROP INDEX knowledge_entries_search_idx;
ALTER TABLE knowledge_entries DROP COLUMN search_document;

CREATE OR REPLACE FUNCTION lore_entry_document(title text, summary text, body text, category text, tags text[])
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', coalesce(array_to_string(tags, ' '), '')), 'A')
        || setweight(to_tsvector('english', coalesce(summary, '') || ' ' || coalesce(category, '')), 'B')
        || setweight(to_tsvector('english', coalesce(body, '')), 'C')
$$;

ALTER TABLE knowledge_entries ADD COLUMN search_document tsvector GENERATED ALWAYS AS
    (lore_entry_document(title, summary, body, category, tags)) STORED;
CREATE INDEX knowledge_entries_search_idx ON knowledge_entries USING gin (search_document);

DROP FUNCTION lore_code_words(text);
