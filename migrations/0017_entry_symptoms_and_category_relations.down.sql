DROP TABLE knowledge_category_relations;
ALTER TABLE knowledge_occurrences DROP COLUMN found_via_search;
ALTER TABLE knowledge_entries
    DROP COLUMN last_used_at,
    DROP COLUMN usage_count,
    DROP COLUMN root_causes,
    DROP COLUMN symptoms;
