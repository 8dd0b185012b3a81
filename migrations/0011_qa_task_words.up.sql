-- "Similar past tasks" for warnings, read from the patterns instead of the
-- failures: a trigram search over every failure's task title cost 40-70 ms
-- at 100,000 failures, and the work grew with the failures, not with the
-- patterns. Each pattern now keeps the first titles of its tasks (for the
-- reason shown) and their English stemmed words (for the match), indexed.

ALTER TABLE qa_patterns
    ADD COLUMN task_titles text[] NOT NULL DEFAULT '{}',
    ADD COLUMN task_words text[] NOT NULL DEFAULT '{}';

UPDATE qa_patterns p SET task_titles = titles.titles, task_words = titles.words
FROM (
    SELECT pattern_id, (array_agg(DISTINCT task_title))[1:20] AS titles,
           coalesce((array_agg(DISTINCT word) FILTER (WHERE word IS NOT NULL))[1:200], '{}') AS words
    FROM (SELECT o.pattern_id, f.task_title, word
          FROM qa_pattern_occurrences o JOIN qa_failures f USING (failure_id)
          LEFT JOIN LATERAL unnest(tsvector_to_array(to_tsvector('english', f.task_title))) AS word ON true
          WHERE f.task_title <> '') AS seen
    GROUP BY pattern_id
) AS titles
WHERE p.pattern_id = titles.pattern_id;

CREATE INDEX qa_patterns_task_words_idx ON qa_patterns USING gin (task_words);
DROP INDEX qa_failures_task_title_trgm_idx;

-- The outcome the issue names for a task that ended before QA could tell.
ALTER TABLE qa_warning_deliveries DROP CONSTRAINT qa_warning_deliveries_outcome_check,
    ADD CONSTRAINT qa_warning_deliveries_outcome_check
        CHECK (outcome IN ('prevented', 'failed_anyway', 'not_applicable', 'task_incomplete'));
