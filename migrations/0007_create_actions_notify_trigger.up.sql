-- New actions notify Resume followers on every replica (channel
-- lore_actions, payload the project), once per statement and project. In a
-- trigger, so writers pay no extra round trip and nothing can forget it;
-- notifications are delivered on commit.
CREATE FUNCTION lore_notify_new_actions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lore_actions', project) FROM (SELECT DISTINCT project FROM new_actions) AS projects;
    RETURN NULL;
END
$$;

CREATE TRIGGER actions_notify AFTER INSERT ON actions
    REFERENCING NEW TABLE AS new_actions
    FOR EACH STATEMENT EXECUTE FUNCTION lore_notify_new_actions();
