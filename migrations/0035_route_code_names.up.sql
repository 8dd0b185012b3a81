-- Grouping routes a name of the code among a template's first two tokens
-- (`queueStream`, `record_ledger`, `tests::total`, `cart.total`) as a
-- wildcard, as it did a call (`load_user()`): the name says where the
-- error happened, not which error it is (lore_grouping::template, route
-- and is_code_name). The routes stored before are computed again here by
-- the same rule; a store test holds this function to the Rust one.
CREATE FUNCTION lore_template_route(tokens text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT cardinality(tokens)::text || coalesce(string_agg(
        ' ' || CASE
            WHEN right(token, 2) = '()'
              OR strpos(token, '_') > 0
              OR strpos(token, '::') > 0
              OR strpos(rtrim(token, '.'), '.') > 0
              OR (token ~ '^[[:lower:]]' AND token ~ '[[:lower:]][[:upper:]]')
            THEN '<*>' ELSE token END,
        '' ORDER BY position), '')
    FROM unnest(tokens[1:2]) WITH ORDINALITY AS route_token (token, position)
$$;

UPDATE qa_patterns SET route = lore_template_route(template_tokens)
WHERE route IS DISTINCT FROM lore_template_route(template_tokens);
