DROP FUNCTION IF EXISTS lore_reject_update();
DROP TABLE IF EXISTS api_tokens;
DROP TABLE IF EXISTS projects;
