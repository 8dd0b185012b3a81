-- The files a `file_edit` action names (`context.details.files`, as the
-- hooks' recognizers write it), none when that is missing or not an array.
-- One definition for every query that reads what a session edited: the hot
-- spots and the similar past sessions. A single SELECT in SQL, neither
-- strict nor volatile, so PostgreSQL inlines it into the calling query.
CREATE FUNCTION edited_files(context jsonb) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT path
    FROM jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(context->'details'->'files') = 'array'
             THEN context->'details'->'files' ELSE '[]'::jsonb END) AS files(path)
$$;
