DROP INDEX qa_task_results_session_idx;
DROP INDEX qa_failures_session_idx;
DELETE FROM injection_items WHERE kind = 'similar_session';
ALTER TABLE injection_items DROP CONSTRAINT injection_items_kind_check,
    ADD CONSTRAINT injection_items_kind_check CHECK (kind IN ('lesson', 'warning', 'last_session'));
ALTER TABLE qa_warning_deliveries DROP COLUMN acknowledgement, DROP COLUMN acknowledged_at;
DROP TABLE settings;
DROP FUNCTION lore_notify_settings_change();
