-- The token table of migration 0001 comes into use. Only a BLAKE3 hash of
-- each secret is stored (token_hash): the secrets are 256 random bits, so a
-- fast hash is enough (nothing to brute-force) and the lookup is one index
-- probe.
ALTER TABLE api_tokens
    ADD CONSTRAINT api_tokens_some_project CHECK (all_projects OR cardinality(projects) > 0);

CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;

-- Every replica caches the tokens it verified; a revocation (or any other
-- change) tells them all to forget, so it takes effect at once everywhere.
CREATE FUNCTION lore_notify_token_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lore_tokens', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER api_tokens_notify
    AFTER UPDATE OF role, projects, all_projects, expires_at, revoked_at OR DELETE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION lore_notify_token_change();
