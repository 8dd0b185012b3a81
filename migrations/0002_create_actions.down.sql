DROP FUNCTION IF EXISTS lore_ensure_action_partition(date);
DROP TABLE IF EXISTS actions;
DROP TABLE IF EXISTS sessions;
