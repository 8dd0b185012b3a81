UPDATE qa_warning_deliveries SET outcome = 'not_applicable' WHERE outcome = 'task_incomplete';
ALTER TABLE qa_warning_deliveries DROP CONSTRAINT qa_warning_deliveries_outcome_check,
    ADD CONSTRAINT qa_warning_deliveries_outcome_check
        CHECK (outcome IN ('prevented', 'failed_anyway', 'not_applicable'));
CREATE INDEX qa_failures_task_title_trgm_idx ON qa_failures USING gin (task_title gin_trgm_ops);
DROP INDEX qa_patterns_task_words_idx;
ALTER TABLE qa_patterns DROP COLUMN task_words, DROP COLUMN task_titles;
