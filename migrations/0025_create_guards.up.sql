-- Guards (issue 41): a person turns a warning at the call into a refusal.
-- While a project's guards are on, an agent's shell call of a guarded
-- shape is denied with the guard's reason and alternative.
CREATE TABLE qa_guards (
    guard_id    uuid PRIMARY KEY,
    project     text NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
    -- The guarded command's shape (program, subcommand, flags; paths and
    -- values as <arg>): what a pending call is matched by.
    shape       text NOT NULL CHECK (length(shape) BETWEEN 1 AND 2000),
    reason      text NOT NULL CHECK (length(reason) BETWEEN 1 AND 300),
    alternative text NOT NULL DEFAULT '' CHECK (length(alternative) <= 500),
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project, shape)
);

-- qa.guards.enabled, per project: off unless a person turns it on.
CREATE TABLE qa_guard_switches (
    project    text PRIMARY KEY REFERENCES projects (name) ON DELETE CASCADE,
    enabled    boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text NOT NULL DEFAULT ''
);

-- The ledger records what a hook gave with a call: a warning learned from
-- earlier calls, or a guard's refusal.
ALTER TABLE injections DROP CONSTRAINT injections_surface_check,
    ADD CONSTRAINT injections_surface_check CHECK (surface IN
        ('session_start', 'prompt', 'briefing', 'resume', 'search', 'get_entry', 'warnings', 'call'));
ALTER TABLE injection_items DROP CONSTRAINT injection_items_kind_check,
    ADD CONSTRAINT injection_items_kind_check CHECK (kind IN
        ('lesson', 'warning', 'last_session', 'similar_session', 'call_warning', 'guard'));

-- A briefing leaves out a QA warning the agent's hooks give at the call
-- that would fail (BriefRequest.at_call), and the ledger says so.
ALTER TABLE injection_items DROP CONSTRAINT injection_items_withheld_check,
    ADD CONSTRAINT injection_items_withheld_check CHECK (withheld IN
        ('quarantined', 'stale', 'over_budget', 'already_given', 'session_budget', 'held_out', 'at_call'));
