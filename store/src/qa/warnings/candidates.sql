-- The warning candidates of a task: each signal read through its own index
-- with the floors applied, ranked by relevance x warn_weight.
-- The title is stemmed once, not once per pattern compared.
WITH task AS MATERIALIZED (SELECT {title_words} AS words),
signals AS (
    SELECT pattern_id, occurrence_count, warn_weight,
           cardinality(ARRAY(SELECT unnest(file_globs) INTERSECT SELECT unnest($2::text[])))::float8
               / greatest(cardinality($2::text[]), 1) AS files,
           {same_category} AS category, 0::float8 AS similar_task, 0::float8 AS words
    FROM qa_patterns WHERE file_globs && $2 AND {live}
    UNION ALL
    SELECT pattern_id, occurrence_count, warn_weight, 0, {same_category},
           cardinality(ARRAY(SELECT unnest(task_words) INTERSECT SELECT unnest(task.words)))::float8
               / greatest(cardinality(task.words), 1),
           0
    FROM qa_patterns, task WHERE cardinality(task.words) > 0 AND task_words && task.words AND {live}
    UNION ALL
    SELECT pattern_id, occurrence_count, warn_weight, 0, {same_category}, 0,
           least(1, 10 * ts_rank(search_vector, query))
    FROM qa_patterns, to_tsquery('simple', $5) AS query
    WHERE $5 <> '' AND search_vector @@ query AND {live}
    UNION ALL
    -- Sharing only the category, patterns rank by their weight
    -- alone: only the first few can make the top N.
    (SELECT pattern_id, occurrence_count, warn_weight, 0, 1, 0, 0
     FROM qa_patterns WHERE $3 <> '' AND task_categories @> ARRAY[$3] AND {live}
     ORDER BY warn_weight DESC, pattern_id LIMIT $9)
), scored AS (
    SELECT pattern_id, max(files) AS files, max(category) AS category,
           max(similar_task) AS similar_task, max(words) AS words,
           least(1, $10 * max(files) + $11 * max(similar_task) + $12 * max(category) + $13 * max(words))
               AS relevance,
           max(occurrence_count) AS occurrence_count, max(warn_weight) AS warn_weight
    FROM signals GROUP BY pattern_id
), ranked AS (
    SELECT *, max(occurrence_count) OVER () AS most_frequent FROM scored
    ORDER BY relevance * warn_weight DESC, pattern_id
    LIMIT $9
)
SELECT {columns}, r.relevance, r.category = 1 AS same_category, r.similar_task, r.words,
       r.most_frequent,
       ARRAY(SELECT unnest(p.file_globs) INTERSECT SELECT unnest($2::text[])) AS matching_globs,
       (SELECT title FROM unnest(p.task_titles) AS title
        ORDER BY similarity(title, $4) DESC LIMIT 1) AS similar_title,
       COALESCE((SELECT a.files_changed FROM qa_fix_attempts a WHERE a.attempt_id = p.fix_attempt_id),
                '{}') AS fix_files
FROM ranked r JOIN qa_patterns p USING (pattern_id)
