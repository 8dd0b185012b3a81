WITH started AS (
    SELECT r.task_id FROM qa_task_results r
    WHERE r.project = $1 AND ($2::text[] IS NULL OR r.project = ANY($2)) AND r.attempt = 1
      AND r.occurred_at >= $3 AND r.occurred_at < $4 AND {of_agent}
      -- A category keeps the tasks that failed in it.
      AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM qa_failures f WHERE f.project = $1
                                       AND f.task_id = r.task_id AND f.category = $5))
), per_task AS (
    SELECT r.task_id, bool_or(NOT r.passed) AS failed, bool_or(r.passed AND r.attempt = 1) AS first_time,
           min(r.attempt) FILTER (WHERE r.passed) AS attempts_to_pass
    FROM qa_task_results r JOIN started USING (task_id) WHERE r.project = $1 GROUP BY r.task_id
)
SELECT count(*) AS tasks, count(*) FILTER (WHERE failed) AS failed,
       count(attempts_to_pass) AS passed, count(*) FILTER (WHERE first_time) AS first_time,
       coalesce(avg(attempts_to_pass), 0)::float8 AS mean FROM per_task
