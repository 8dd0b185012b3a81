SELECT count(*) AS failures, count(r.failure_id) AS resolved, coalesce(avg(r.attempts), 0)::float8 AS mean
FROM qa_failures f LEFT JOIN qa_failure_resolutions r USING (failure_id) WHERE {window}
