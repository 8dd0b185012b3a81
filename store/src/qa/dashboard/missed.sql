SELECT count(*) FROM qa_missed_opportunities m JOIN qa_task_results r USING (result_id)
WHERE m.project = $1 AND ($2::text[] IS NULL OR m.project = ANY($2))
  AND m.recorded_at >= $3 AND m.recorded_at < $4
  AND ($5::text IS NULL OR m.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                            AND category = $5))
  AND {of_agent}
