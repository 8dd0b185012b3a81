DROP INDEX qa_failure_resolutions_project_idx;
DROP INDEX qa_fix_attempts_failure_idx;
DROP INDEX qa_warning_deliveries_task_idx;
ALTER TABLE qa_warning_deliveries DROP COLUMN held_out;
DROP INDEX qa_grouping_corrections_templates_idx;
DROP INDEX qa_pattern_occurrences_failure_idx;
DROP INDEX qa_pattern_occurrences_task_idx;
ALTER TABLE qa_pattern_occurrences DROP COLUMN task_id;
DROP INDEX qa_patterns_search_idx;
DROP INDEX qa_patterns_task_categories_idx;
DROP INDEX qa_patterns_grouping_idx;
CREATE INDEX qa_patterns_grouping_idx ON qa_patterns (project, category)
    WHERE status IN ('candidate', 'active', 'promoted');
ALTER TABLE qa_patterns DROP COLUMN search_vector, DROP COLUMN task_categories, DROP COLUMN route;
