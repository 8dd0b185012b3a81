-- How a project's agents are warned at the call (issue 55): a warning
-- with strong evidence holds the call once before it runs (deny_once, the
-- default when a project has no row), comes beside the result (context),
-- or is not given (off).
CREATE TABLE qa_call_warning_modes (
    project    text PRIMARY KEY REFERENCES projects (name) ON DELETE CASCADE,
    mode       text NOT NULL CHECK (mode IN ('deny_once', 'context', 'off')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text NOT NULL DEFAULT ''
);
