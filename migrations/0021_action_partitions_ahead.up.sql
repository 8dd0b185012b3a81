-- The partitions of the action log from last month to three months ahead,
-- as one function of the schema: the server calls it at start-up and in
-- maintenance, and the test harness after migrating a test database, so
-- both make the same months.
CREATE FUNCTION lore_ensure_action_partitions() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lore_ensure_action_partition((now() + make_interval(months => m))::date)
    FROM generate_series(-1, 3) AS m;
END
$$;
