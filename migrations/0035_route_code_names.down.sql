-- Routes as before 0035: only a call among the first two tokens is a
-- wildcard.
UPDATE qa_patterns SET route = (
    SELECT cardinality(template_tokens)::text || coalesce(string_agg(
        ' ' || CASE WHEN right(token, 2) = '()' THEN '<*>' ELSE token END, '' ORDER BY position), '')
    FROM unnest(template_tokens[1:2]) WITH ORDINALITY AS route_token (token, position)
);
DROP FUNCTION lore_template_route(text[]);
