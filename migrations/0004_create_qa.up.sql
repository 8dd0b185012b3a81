-- QaLearningService: failures (append-only), the categorization rule table,
-- patterns and their occurrences, grouping corrections, fix attempts, warning
-- deliveries and promotions.

-- Ordered categorization rules. Categories are data: any lowercase
-- identifier, no enum, so a new category needs no schema change. Rules
-- without a project are global; a project's own rules are evaluated together
-- with them by ascending priority.
CREATE TABLE qa_category_rules (
    rule_id           text NOT NULL CHECK (rule_id ~ '^[a-z0-9_.-]{1,64}$'),
    project           text REFERENCES projects (name) ON DELETE CASCADE,
    priority          integer NOT NULL,
    category          text NOT NULL CHECK (category ~ '^[a-z0-9_]{1,64}$'),
    check_name_regex  text NOT NULL DEFAULT '',
    message_regex     text NOT NULL DEFAULT '',
    enabled           boolean NOT NULL DEFAULT true,
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX qa_category_rules_unique_idx ON qa_category_rules (coalesce(project, ''), rule_id);

-- The built-in rules (regexes are case-insensitive at evaluation). The most
-- specific go first: a missing module is a dependency problem even when it
-- surfaces in a test run. Anything unmatched is 'other'.
INSERT INTO qa_category_rules (rule_id, priority, category, check_name_regex, message_regex) VALUES
    ('missing-dependency', 100, 'missing_dependency', '',
     '(cannot find module|module not found|no module named|modulenotfounderror|unresolved import|could not resolve dependency|package .* not found|no matching package|command not found)'),
    ('config-error', 200, 'config_error', '',
     '(invalid config|configuration error|missing env|environment variable .* (not set|missing)|unknown option|invalid value for .*config)'),
    ('type-error', 300, 'type_error', '(tsc|mypy|pyright|typecheck|type-check|types)',
     ''),
    ('type-error-message', 310, 'type_error', '',
     '(error ts[0-9]+|type .* is not assignable|mismatched types|expected type|incompatible type)'),
    ('lint-error', 400, 'lint_error', '(lint|eslint|clippy|ruff|flake8|pylint|rubocop|golangci|prettier|fmt)',
     ''),
    ('build-error', 500, 'build_error', '(build|compile|webpack|vite|cargo build|make|tsc -b)',
     ''),
    ('build-error-message', 510, 'build_error', '',
     '(compilation failed|could not compile|build failed|syntaxerror|syntax error|error\[e[0-9]+\])'),
    ('test-failure', 600, 'test_failure', '(test|jest|pytest|vitest|mocha|rspec|nextest|e2e|playwright)',
     ''),
    ('test-failure-message', 610, 'test_failure', '',
     '(assertion|assert|expected .* (to|but)|test .* failed|failures:)'),
    ('runtime-error', 700, 'runtime_error', '',
     '(panicked at|traceback|exception|segmentation fault|null pointer|undefined is not|cannot read propert|stack overflow|out of memory)');

-- One QA failure, as captured. Append-only: the captured facts are never
-- updated; resolution lives in qa_failure_resolutions.
CREATE TABLE qa_failures (
    failure_id        uuid PRIMARY KEY,
    project           text NOT NULL REFERENCES projects (name),
    task_id           text NOT NULL CHECK (length(task_id) BETWEEN 1 AND 256),
    task_title        text NOT NULL DEFAULT '',
    task_category     text NOT NULL DEFAULT '',
    task_files        text[] NOT NULL DEFAULT '{}',
    task_description  text NOT NULL DEFAULT '',
    session_id        uuid,
    execution_id      text NOT NULL DEFAULT '',
    -- [{"name", "output", "exit_code"}]
    failed_checks     jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(failed_checks) = 'array'),
    error_messages    text[] NOT NULL DEFAULT '{}',
    files_modified    text[] NOT NULL DEFAULT '{}',
    diff_summary      text NOT NULL DEFAULT '',
    category          text NOT NULL,
    category_rule_id  text,
    occurred_at       timestamptz NOT NULL,
    captured_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX qa_failures_project_occurred_idx ON qa_failures (project, occurred_at DESC);
CREATE INDEX qa_failures_project_task_idx ON qa_failures (project, task_id);
-- "Similar past tasks" for warnings.
CREATE INDEX qa_failures_task_title_trgm_idx ON qa_failures USING gin (task_title gin_trgm_ops);
CREATE INDEX qa_failures_files_idx ON qa_failures USING gin (files_modified);

CREATE TRIGGER qa_failures_append_only BEFORE UPDATE ON qa_failures
    FOR EACH ROW EXECUTE FUNCTION lore_reject_update();

CREATE TABLE qa_failure_resolutions (
    failure_id            uuid PRIMARY KEY REFERENCES qa_failures ON DELETE CASCADE,
    project               text NOT NULL REFERENCES projects (name),
    resolving_attempt_id  uuid NOT NULL,
    attempts              integer NOT NULL CHECK (attempts >= 1),
    resolved_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE qa_patterns (
    pattern_id           uuid PRIMARY KEY,
    project              text NOT NULL REFERENCES projects (name),
    category             text NOT NULL,
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 256),
    description          text NOT NULL DEFAULT '',
    common_cause         text NOT NULL DEFAULT '',
    recommended_fix      text NOT NULL DEFAULT '',
    -- Representative template (variables as <*>) and its tokens, which the
    -- grouping compares position by position.
    template             text NOT NULL,
    template_tokens      text[] NOT NULL,
    file_globs           text[] NOT NULL DEFAULT '{}',
    status               text NOT NULL DEFAULT 'candidate'
                         CHECK (status IN ('candidate', 'active', 'merged', 'promoted', 'retired')),
    merged_into          uuid REFERENCES qa_patterns,
    occurrence_count     bigint NOT NULL DEFAULT 0 CHECK (occurrence_count >= 0),
    task_count           bigint NOT NULL DEFAULT 0 CHECK (task_count >= 0),
    confidence           double precision NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0 AND 1),
    prevented_count      bigint NOT NULL DEFAULT 0 CHECK (prevented_count >= 0),
    failed_anyway_count  bigint NOT NULL DEFAULT 0 CHECK (failed_anyway_count >= 0),
    warnings_delivered   bigint NOT NULL DEFAULT 0 CHECK (warnings_delivered >= 0),
    first_seen_at        timestamptz NOT NULL,
    last_seen_at         timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'merged') = (merged_into IS NOT NULL)),
    CHECK (merged_into IS DISTINCT FROM pattern_id)
);
-- Grouping looks up the live patterns of one category.
CREATE INDEX qa_patterns_grouping_idx ON qa_patterns (project, category)
    WHERE status IN ('candidate', 'active', 'promoted');
CREATE INDEX qa_patterns_project_count_idx ON qa_patterns (project, occurrence_count DESC, pattern_id);
CREATE INDEX qa_patterns_globs_idx ON qa_patterns USING gin (file_globs);

-- One error message of a failure linked to a pattern, with why it joined.
CREATE TABLE qa_pattern_occurrences (
    occurrence_id  uuid PRIMARY KEY,
    project        text NOT NULL REFERENCES projects (name),
    pattern_id     uuid NOT NULL REFERENCES qa_patterns,
    failure_id     uuid NOT NULL REFERENCES qa_failures ON DELETE CASCADE,
    message_index  integer NOT NULL CHECK (message_index >= 0),
    message        text NOT NULL,
    template       text NOT NULL,
    similarity     double precision NOT NULL CHECK (similarity BETWEEN 0 AND 1),
    reason         text NOT NULL,
    occurred_at    timestamptz NOT NULL,
    UNIQUE (failure_id, message_index)
);
CREATE INDEX qa_pattern_occurrences_pattern_idx ON qa_pattern_occurrences (pattern_id, occurred_at DESC);

-- People's corrections of the grouping, remembered so later captures follow
-- them: a merge redirects its source pattern; a split sends a template to
-- the new pattern.
CREATE TABLE qa_grouping_corrections (
    correction_id    uuid PRIMARY KEY,
    project          text NOT NULL REFERENCES projects (name),
    kind             text NOT NULL CHECK (kind IN ('merge', 'split')),
    from_pattern_id  uuid NOT NULL REFERENCES qa_patterns,
    to_pattern_id    uuid NOT NULL REFERENCES qa_patterns,
    -- For splits: the templates that now belong to to_pattern_id.
    templates        text[] NOT NULL DEFAULT '{}',
    reason           text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX qa_grouping_corrections_from_idx ON qa_grouping_corrections (from_pattern_id);

CREATE TABLE qa_fix_attempts (
    attempt_id      uuid PRIMARY KEY,
    project         text NOT NULL REFERENCES projects (name),
    failure_id      uuid NOT NULL REFERENCES qa_failures ON DELETE CASCADE,
    attempt_number  integer NOT NULL CHECK (attempt_number >= 1),
    approach        text NOT NULL DEFAULT '',
    files_changed   text[] NOT NULL DEFAULT '{}',
    summary         text NOT NULL DEFAULT '',
    outcome         text NOT NULL CHECK (outcome IN ('success', 'failure', 'partial')),
    qa_result       text NOT NULL DEFAULT '',
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (failure_id, attempt_number)
);

CREATE TABLE qa_warning_deliveries (
    delivery_id   uuid PRIMARY KEY,
    project       text NOT NULL REFERENCES projects (name),
    pattern_id    uuid NOT NULL REFERENCES qa_patterns,
    task_id       text NOT NULL,
    session_id    uuid,
    rank          integer NOT NULL CHECK (rank >= 1),
    relevance     double precision NOT NULL,
    confidence    double precision NOT NULL,
    frequency     bigint NOT NULL,
    score         double precision NOT NULL,
    text          text NOT NULL,
    reason        text NOT NULL DEFAULT '',
    delivered_at  timestamptz NOT NULL DEFAULT now(),
    outcome       text CHECK (outcome IN ('prevented', 'failed_anyway', 'not_applicable')),
    outcome_note  text NOT NULL DEFAULT '',
    outcome_at    timestamptz,
    CHECK ((outcome IS NULL) = (outcome_at IS NULL))
);
CREATE INDEX qa_warning_deliveries_project_idx ON qa_warning_deliveries (project, delivered_at DESC);
CREATE INDEX qa_warning_deliveries_pattern_idx ON qa_warning_deliveries (pattern_id, delivered_at DESC);

CREATE TABLE qa_promotions (
    promotion_id  uuid PRIMARY KEY,
    project       text NOT NULL REFERENCES projects (name),
    pattern_id    uuid NOT NULL REFERENCES qa_patterns,
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'published', 'rejected', 'rolled_back')),
    markdown      text NOT NULL,
    entry_id      uuid REFERENCES knowledge_entries ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- At most one open promotion per pattern.
CREATE UNIQUE INDEX qa_promotions_open_idx ON qa_promotions (pattern_id)
    WHERE status IN ('pending', 'approved', 'published');
CREATE INDEX qa_promotions_project_idx ON qa_promotions (project, status, created_at DESC);

CREATE TABLE qa_promotion_events (
    event_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    promotion_id  uuid NOT NULL REFERENCES qa_promotions ON DELETE CASCADE,
    project       text NOT NULL REFERENCES projects (name),
    status        text NOT NULL,
    actor         text NOT NULL,
    note          text NOT NULL DEFAULT '',
    at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX qa_promotion_events_promotion_idx ON qa_promotion_events (promotion_id, event_id);
