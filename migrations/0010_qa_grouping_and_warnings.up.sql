-- What the QA-learning service needs beyond 0004: the grouping route of a
-- pattern (Drain's length + first tokens), the task categories and a text
-- vector for warnings, the task of each occurrence (distinct task counts),
-- and held-out deliveries for measuring warnings (A/B).

ALTER TABLE qa_patterns
    ADD COLUMN route text NOT NULL DEFAULT '',
    ADD COLUMN task_categories text[] NOT NULL DEFAULT '{}',
    ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', name || ' ' || description || ' ' || common_cause || ' ' || recommended_fix || ' '
                    || replace(template, '<*>', ''))
    ) STORED;

-- A capture compares a message with the patterns of its route only. Every
-- status stays in the lookup: a merged pattern's later matches follow the
-- merge, a retired one keeps counting without being warned about.
DROP INDEX qa_patterns_grouping_idx;
CREATE INDEX qa_patterns_grouping_idx ON qa_patterns (project, category, route);
CREATE INDEX qa_patterns_task_categories_idx ON qa_patterns USING gin (task_categories);
CREATE INDEX qa_patterns_search_idx ON qa_patterns USING gin (search_vector);

ALTER TABLE qa_pattern_occurrences ADD COLUMN task_id text NOT NULL DEFAULT '';
CREATE INDEX qa_pattern_occurrences_task_idx ON qa_pattern_occurrences (pattern_id, task_id);
CREATE INDEX qa_pattern_occurrences_failure_idx ON qa_pattern_occurrences (failure_id);

-- Splits are looked up by template.
CREATE INDEX qa_grouping_corrections_templates_idx ON qa_grouping_corrections USING gin (templates)
    WHERE kind = 'split';

-- A held-out delivery was chosen but not shown: the same task's later
-- failures tell what the warning would have prevented.
ALTER TABLE qa_warning_deliveries ADD COLUMN held_out boolean NOT NULL DEFAULT false;
CREATE INDEX qa_warning_deliveries_task_idx ON qa_warning_deliveries (project, task_id, pattern_id);

CREATE INDEX qa_fix_attempts_failure_idx ON qa_fix_attempts (failure_id, attempt_number);
CREATE INDEX qa_failure_resolutions_project_idx ON qa_failure_resolutions (project, resolved_at);
