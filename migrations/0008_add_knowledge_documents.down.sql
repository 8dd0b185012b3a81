DROP INDEX knowledge_entries_source_root_idx;
ALTER TABLE knowledge_entries DROP COLUMN source_root, DROP COLUMN document_hash;
