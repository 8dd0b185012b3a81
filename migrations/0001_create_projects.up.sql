-- Extensions, projects and API tokens.
--
-- Tenancy: every row of every table belongs to a project (the `project`
-- column) and every store function takes the caller's project scope, so the
-- auth layer enforces isolation in SQL with `project = ANY($scope)`.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE projects (
    name        text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,128}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Bearer tokens. Only a SHA-256 of the secret is stored; the secret is shown
-- once, at creation.
CREATE TABLE api_tokens (
    token_id      uuid PRIMARY KEY,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    role          text NOT NULL CHECK (role IN ('agent', 'sidecar', 'reader', 'admin')),
    -- The projects the token may touch; ignored when all_projects is set.
    projects      text[] NOT NULL DEFAULT '{}',
    all_projects  boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    last_used_at  timestamptz,
    revoked_at    timestamptz
);

-- Rejects UPDATE on append-only tables. Attached by the migrations that
-- create such tables; corrections are recorded beside the facts instead.
CREATE FUNCTION lore_reject_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'table % is append-only: rows cannot be updated', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END
$$;
