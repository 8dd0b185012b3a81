SELECT d.held_out, count(DISTINCT d.task_id) AS tasks,
       count(DISTINCT d.task_id) FILTER (WHERE d.outcome = 'failed_anyway') AS failed
FROM qa_warning_deliveries d
WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
  AND d.outcome IN ('prevented', 'failed_anyway', 'unrelated')
  AND d.outcome_at >= $3 AND d.outcome_at < $4
  AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                            AND category = $5))
  AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                            AND agent_id = $6))
GROUP BY d.held_out
