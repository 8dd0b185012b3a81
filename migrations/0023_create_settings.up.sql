-- Switches people flip while Lore runs (qa.warnings.enabled,
-- qa.learning.enabled). A row overrides the config's value; every replica
-- reads the table at start and again on each change (pg_notify), so a
-- switch takes effect at once everywhere.
CREATE TABLE settings (
    key        text PRIMARY KEY CHECK (key ~ '^[a-z][a-z0-9_.]{0,127}$'),
    value      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- The token's name that changed it.
    updated_by text NOT NULL DEFAULT ''
);

CREATE FUNCTION lore_notify_settings_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lore_settings', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER settings_notify
    AFTER INSERT OR UPDATE OR DELETE ON settings
    FOR EACH STATEMENT EXECUTE FUNCTION lore_notify_settings_change();

-- An agent acknowledges a warning it was shown: it read it and took it
-- into account. The effectiveness figures count acknowledged deliveries
-- apart.
ALTER TABLE qa_warning_deliveries
    ADD COLUMN acknowledged_at timestamptz,
    ADD COLUMN acknowledgement text NOT NULL DEFAULT '' CHECK (length(acknowledgement) <= 2000);

-- A briefing tells of similar past sessions; the ledger records each.
ALTER TABLE injection_items DROP CONSTRAINT injection_items_kind_check,
    ADD CONSTRAINT injection_items_kind_check CHECK (kind IN ('lesson', 'warning', 'last_session', 'similar_session'));

-- Hot spots and similar sessions read a session's failures and results.
CREATE INDEX qa_failures_session_idx ON qa_failures (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX qa_task_results_session_idx ON qa_task_results (session_id) WHERE session_id IS NOT NULL;
