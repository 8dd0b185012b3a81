-- ActionService: sessions and the append-only, time-partitioned action log.

CREATE TABLE sessions (
    -- Chosen by the client (or the sidecar) so a session can start while the
    -- server is unreachable; doubles as the idempotency id of StartSession.
    session_id        uuid PRIMARY KEY,
    project           text NOT NULL REFERENCES projects (name),
    agent_id          text NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 256),
    supervisor_type   text NOT NULL DEFAULT '' CHECK (length(supervisor_type) <= 128),
    kind              text NOT NULL DEFAULT 'work'
                      CHECK (kind IN ('work', 'planning', 'qa', 'supervisor', 'interactive')),
    metadata          jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    status            text NOT NULL DEFAULT 'active'
                      CHECK (status IN ('active', 'ended', 'disconnected')),
    started_at        timestamptz NOT NULL,
    last_activity_at  timestamptz NOT NULL,
    ended_at          timestamptz,
    end_reason        text CHECK (end_reason IN
                          ('normal', 'network_disconnect', 'timeout', 'error', 'cancelled')),
    summary           text NOT NULL DEFAULT '',
    action_count      bigint NOT NULL DEFAULT 0 CHECK (action_count >= 0),
    -- Head of the session's hash chain: the chain_hash of its last action.
    -- Appending locks this row, which serializes the chain per session.
    chain_head        bytea,
    CHECK ((status = 'active') = (ended_at IS NULL)),
    CHECK ((status = 'active') = (end_reason IS NULL))
);

-- GetLastSession / Resume: newest session of a project, an agent, a supervisor.
CREATE INDEX sessions_project_started_idx ON sessions (project, started_at DESC);
CREATE INDEX sessions_project_agent_started_idx ON sessions (project, agent_id, started_at DESC);
CREATE INDEX sessions_project_supervisor_started_idx
    ON sessions (project, supervisor_type, started_at DESC);
-- The disconnect sweep scans only live sessions.
CREATE INDEX sessions_active_last_activity_idx ON sessions (last_activity_at)
    WHERE status = 'active';

-- The action log, partitioned by month on the client's own timestamp. A
-- replay carries the same (action_id, occurred_at), so the primary key (which
-- must contain the partition key) deduplicates replays exactly.
--
-- No foreign keys on this table: it is the ingest hot path, and an FK check
-- takes a KEY SHARE lock on the referenced row, which serializes every writer
-- of a project on one projects row. The store creates the project row in the
-- same transaction instead. session_id is not enforced either: a sidecar may
-- ship a session's actions before its StartSession was accepted.
CREATE TABLE actions (
    action_id         uuid NOT NULL,
    occurred_at       timestamptz NOT NULL,
    project           text NOT NULL,
    session_id        uuid,
    agent_id          text NOT NULL DEFAULT '' CHECK (length(agent_id) <= 256),
    action_type       text NOT NULL CHECK (action_type ~ '^[a-z0-9_.-]{1,64}$'),
    category          text NOT NULL DEFAULT '' CHECK (length(category) <= 128),
    context           jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(context) = 'object'),
    outcome           text NOT NULL CHECK (outcome IN ('success', 'failure', 'blocked', 'in_progress')),
    error             text NOT NULL DEFAULT '',
    duration_ms       bigint NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
    parent_action_id  uuid,
    epic_id           text NOT NULL DEFAULT '' CHECK (length(epic_id) <= 256),
    issue_id          text NOT NULL DEFAULT '' CHECK (length(issue_id) <= 256),
    received_at       timestamptz NOT NULL DEFAULT now(),
    redaction_count   integer NOT NULL DEFAULT 0 CHECK (redaction_count >= 0),
    truncated         boolean NOT NULL DEFAULT false,
    -- Hash chain: position in the session, predecessor's hash, own hash over
    -- a canonical encoding of the row and prev_hash. Sessionless actions have
    -- no chain_seq and hash with an empty predecessor.
    chain_seq         bigint CHECK (chain_seq >= 1),
    prev_hash         bytea,
    chain_hash        bytea NOT NULL,
    PRIMARY KEY (action_id, occurred_at),
    CHECK ((session_id IS NULL) = (chain_seq IS NULL))
) PARTITION BY RANGE (occurred_at);

-- Rows whose timestamp falls outside every monthly partition (clock skew,
-- backfills) land here instead of failing the write.
CREATE TABLE actions_default PARTITION OF actions DEFAULT;

CREATE INDEX actions_project_occurred_idx ON actions (project, occurred_at DESC);
CREATE INDEX actions_session_chain_idx ON actions (session_id, chain_seq)
    WHERE session_id IS NOT NULL;
CREATE INDEX actions_project_type_occurred_idx ON actions (project, action_type, occurred_at DESC);
CREATE INDEX actions_project_epic_idx ON actions (project, epic_id, occurred_at DESC)
    WHERE epic_id <> '';
CREATE INDEX actions_project_issue_idx ON actions (project, issue_id, occurred_at DESC)
    WHERE issue_id <> '';
-- Recent failures for reports and resume.
CREATE INDEX actions_project_failures_idx ON actions (project, occurred_at DESC)
    WHERE outcome IN ('failure', 'blocked');
-- JSON containment filters (context @> '{"agent_id": "xyz"}').
CREATE INDEX actions_context_idx ON actions USING gin (context jsonb_path_ops);

CREATE TRIGGER actions_append_only BEFORE UPDATE ON actions
    FOR EACH ROW EXECUTE FUNCTION lore_reject_update();

-- Creates the monthly partition that contains `day` unless it exists. Rows
-- that already sit in the default partition for that month are moved into
-- the new partition in the same transaction (attaching would fail on them).
CREATE FUNCTION lore_ensure_action_partition(day date) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    month_start date := date_trunc('month', day)::date;
    month_end   date := (date_trunc('month', day) + interval '1 month')::date;
    part_name   text := format('actions_p%s', to_char(month_start, 'YYYYMM'));
BEGIN
    IF to_regclass(part_name) IS NOT NULL THEN
        RETURN part_name;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE actions INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   part_name);
    EXECUTE format('WITH moved AS (DELETE FROM actions_default
                        WHERE occurred_at >= %L AND occurred_at < %L RETURNING *)
                    INSERT INTO %I SELECT * FROM moved',
                   month_start, month_end, part_name);
    EXECUTE format('ALTER TABLE actions ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   part_name, month_start, month_end);
    RETURN part_name;
END
$$;

-- Partitions around the time of installation; the server keeps creating the
-- coming months at start-up and on its daily maintenance pass.
SELECT lore_ensure_action_partition((now() + make_interval(months => m))::date)
FROM generate_series(-1, 3) AS m;
