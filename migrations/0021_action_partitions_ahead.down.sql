DROP FUNCTION lore_ensure_action_partitions();
