DROP TABLE knowledge_auto_drafts;
ALTER TABLE qa_promotions DROP COLUMN instructions;
DROP TABLE qa_missed_opportunities;
DROP INDEX qa_warning_deliveries_result_idx;
DROP INDEX qa_warning_deliveries_open_idx;
UPDATE qa_warning_deliveries SET outcome = 'not_applicable' WHERE outcome = 'unrelated';
ALTER TABLE qa_warning_deliveries DROP COLUMN result_id,
    DROP CONSTRAINT qa_warning_deliveries_outcome_check,
    ADD CONSTRAINT qa_warning_deliveries_outcome_check
        CHECK (outcome IN ('prevented', 'failed_anyway', 'not_applicable', 'task_incomplete'));
DROP TABLE qa_task_results;
