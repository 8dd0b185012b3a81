ALTER TABLE qa_patterns DROP COLUMN last_change;
