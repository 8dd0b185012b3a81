SELECT count(*) FILTER (WHERE NOT d.held_out) AS delivered,
       count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'prevented') AS prevented,
       count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'failed_anyway') AS failed_anyway,
       count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL) AS acknowledged,
       count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL
                        AND d.outcome = 'prevented') AS acknowledged_prevented,
       count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL
                        AND d.outcome = 'failed_anyway') AS acknowledged_failed_anyway
FROM qa_warning_deliveries d
WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
  AND d.delivered_at >= $3 AND d.delivered_at < $4
  AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                            AND category = $5))
  AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                            AND agent_id = $6))
