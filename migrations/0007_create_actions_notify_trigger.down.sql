DROP TRIGGER IF EXISTS actions_notify ON actions;
DROP FUNCTION IF EXISTS lore_notify_new_actions();
