DROP INDEX IF EXISTS actions_project_received_idx;
