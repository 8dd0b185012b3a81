-- Task results: the QA verdict of each attempt at a task. They score the
-- warnings delivered for the task (no delivery ids needed), record the
-- missed opportunities, and give the dashboard a denominator: tasks with a
-- result, whether they were warned or not.

CREATE TABLE qa_task_results (
    -- The client's idempotency id.
    result_id      uuid PRIMARY KEY,
    project        text NOT NULL REFERENCES projects (name),
    task_id        text NOT NULL CHECK (length(task_id) BETWEEN 1 AND 256),
    session_id     uuid,
    -- 1 for the task's first result, and so on: "first-time pass" and
    -- "attempts to pass" read it.
    attempt        integer NOT NULL CHECK (attempt >= 1),
    passed         boolean NOT NULL,
    -- [{"name", "passed", "exit_code"}]
    checks         jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(checks) = 'array'),
    -- The captured failures a failed verdict is about, and their patterns.
    failure_ids    uuid[] NOT NULL DEFAULT '{}',
    pattern_ids    uuid[] NOT NULL DEFAULT '{}',
    occurred_at    timestamptz NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project, task_id, attempt),
    CHECK (passed = (cardinality(failure_ids) = 0))
);
CREATE INDEX qa_task_results_project_occurred_idx ON qa_task_results (project, occurred_at DESC);
CREATE INDEX qa_task_results_failures_idx ON qa_task_results USING gin (failure_ids);

CREATE TRIGGER qa_task_results_append_only BEFORE UPDATE ON qa_task_results
    FOR EACH ROW EXECUTE FUNCTION lore_reject_update();

-- 'unrelated': the task failed, on other patterns than the warned one.
ALTER TABLE qa_warning_deliveries DROP CONSTRAINT qa_warning_deliveries_outcome_check,
    ADD CONSTRAINT qa_warning_deliveries_outcome_check
        CHECK (outcome IN ('prevented', 'failed_anyway', 'not_applicable', 'task_incomplete', 'unrelated')),
    ADD COLUMN result_id uuid REFERENCES qa_task_results;
-- A result scores the open deliveries of its task.
CREATE INDEX qa_warning_deliveries_open_idx ON qa_warning_deliveries (project, task_id, delivered_at)
    WHERE outcome IS NULL;
CREATE INDEX qa_warning_deliveries_result_idx ON qa_warning_deliveries (result_id) WHERE result_id IS NOT NULL;

-- A task failed on a pattern that was warnable and was not delivered to it.
CREATE TABLE qa_missed_opportunities (
    result_id    uuid NOT NULL REFERENCES qa_task_results,
    pattern_id   uuid NOT NULL REFERENCES qa_patterns,
    project      text NOT NULL REFERENCES projects (name),
    task_id      text NOT NULL,
    -- Whether the task asked for warnings at all.
    warned       boolean NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (result_id, pattern_id)
);
CREATE INDEX qa_missed_opportunities_project_idx ON qa_missed_opportunities (project, recorded_at DESC);
CREATE INDEX qa_missed_opportunities_pattern_idx ON qa_missed_opportunities (pattern_id);

-- Where a promotion stands in its project's instructions file (AGENTS.md):
-- written, removed, or a conflict with a person's edit.
ALTER TABLE qa_promotions ADD COLUMN instructions text NOT NULL DEFAULT '';

-- The causes automatic drafts were made for (an epic completed, an epic's
-- validations failing, a session's failures fixed), so each is drafted once,
-- whichever replica leads.
CREATE TABLE knowledge_auto_drafts (
    cause       text PRIMARY KEY,
    project     text NOT NULL REFERENCES projects (name),
    draft_id    uuid REFERENCES knowledge_drafts ON DELETE SET NULL,
    note        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);
