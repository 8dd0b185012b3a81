SELECT f.category, count(*) AS n FROM qa_failures f WHERE {window} GROUP BY 1 ORDER BY 2 DESC, 1
