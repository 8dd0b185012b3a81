SELECT day, sum(failures)::bigint AS failures, count(DISTINCT task_id) AS tasks FROM (
    SELECT (f.occurred_at AT TIME ZONE 'UTC')::date AS day, f.task_id, 1 AS failures
    FROM qa_failures f WHERE {window}
    UNION ALL
    SELECT (d.delivered_at AT TIME ZONE 'UTC')::date, d.task_id, 0
    FROM qa_warning_deliveries d
    WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
      AND d.delivered_at >= $3 AND d.delivered_at < $4 AND $5::text IS NULL
      AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                AND agent_id = $6))
) AS reached GROUP BY day ORDER BY day
