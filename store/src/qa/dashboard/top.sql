SELECT {columns}
FROM (SELECT o.pattern_id, count(*) AS in_window FROM qa_pattern_occurrences o
      JOIN qa_failures f USING (failure_id) WHERE {window} GROUP BY o.pattern_id
      ORDER BY count(*) DESC LIMIT $7) AS w
JOIN qa_patterns p USING (pattern_id) ORDER BY w.in_window DESC, p.pattern_id
