DROP TRIGGER api_tokens_notify ON api_tokens;
DROP FUNCTION lore_notify_token_change();
DROP INDEX api_tokens_live_name;
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_some_project;
