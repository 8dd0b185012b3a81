ALTER TABLE qa_warning_deliveries DROP COLUMN acknowledgement, DROP COLUMN acknowledged_at;
DROP TABLE settings;
DROP FUNCTION lore_notify_settings_change();
