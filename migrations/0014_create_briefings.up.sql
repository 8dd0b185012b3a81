-- What each briefing (AgentService.Brief, and the learnings and warnings a
-- Resume sends) gave an agent: the next briefing of the same session leaves
-- those out when asked, and the audit shows which lessons an agent was shown.
-- The QA warnings themselves are also deliveries (qa_warning_deliveries),
-- scored by RecordOutcome; here they are only remembered per session.
CREATE TABLE briefings (
    briefing_id     uuid PRIMARY KEY,
    project         text NOT NULL REFERENCES projects (name),
    -- No foreign key: a sidecar may still hold the session's start while its
    -- agent is already being briefed.
    session_id      uuid,
    agent_id        text NOT NULL DEFAULT '',
    task_id         text NOT NULL,
    entry_ids       uuid[] NOT NULL DEFAULT '{}',
    pattern_ids     uuid[] NOT NULL DEFAULT '{}',
    markdown_chars  integer NOT NULL CHECK (markdown_chars >= 0),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX briefings_session_idx ON briefings (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX briefings_project_created_idx ON briefings (project, created_at DESC);
-- "Already given in this session" also counts warnings a session got
-- through GetWarnings.
CREATE INDEX qa_warning_deliveries_session_idx ON qa_warning_deliveries (session_id) WHERE session_id IS NOT NULL;
