-- What Lore put into each agent's context (issue 28): the briefings table
-- becomes the injection ledger. Every briefing (session start, each
-- prompt, a Resume's learnings and warnings) and every MCP read of a
-- session is an injection; each item it considered is a row of
-- injection_items, shown or withheld with the reason.
ALTER TABLE briefings RENAME TO injections;
ALTER TABLE injections RENAME COLUMN briefing_id TO injection_id;
ALTER TABLE injections RENAME COLUMN markdown_chars TO chars;
ALTER INDEX briefings_pkey RENAME TO injections_pkey;
ALTER INDEX briefings_session_idx RENAME TO injections_session_idx;
ALTER INDEX briefings_project_created_idx RENAME TO injections_project_created_idx;
ALTER TABLE injections
    -- Where it happened: a briefing at session start or at a prompt, an
    -- other briefing (the MCP tool, a client), a Resume, or an MCP read.
    ADD COLUMN surface text NOT NULL DEFAULT 'briefing' CHECK (surface IN
        ('session_start', 'prompt', 'briefing', 'resume', 'search', 'get_entry', 'warnings')),
    -- Estimated tokens of what was shown (`chars` / 4, rounded up).
    ADD COLUMN tokens integer NOT NULL DEFAULT 0 CHECK (tokens >= 0);
UPDATE injections SET tokens = (chars + 3) / 4;

CREATE TABLE injection_items (
    injection_id  uuid NOT NULL REFERENCES injections ON DELETE CASCADE,
    position      smallint NOT NULL CHECK (position >= 0),
    kind          text NOT NULL CHECK (kind IN ('lesson', 'warning', 'last_session')),
    -- The entry, the pattern or the summarized session.
    item_id       uuid NOT NULL,
    -- What a person recognizes it by (a key, a pattern's name); data.
    label         text NOT NULL DEFAULT '',
    trust         text CHECK (trust IN ('reviewed', 'verified', 'observed')),
    -- What it took (or would have taken) of the agent's context.
    chars         integer NOT NULL DEFAULT 0 CHECK (chars >= 0),
    tokens        integer NOT NULL DEFAULT 0 CHECK (tokens >= 0),
    score         double precision NOT NULL DEFAULT 0,
    score_parts   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(score_parts) = 'object'),
    why           text NOT NULL DEFAULT '',
    -- NULL: shown.
    withheld      text CHECK (withheld IN
        ('quarantined', 'stale', 'over_budget', 'already_given', 'session_budget', 'held_out')),
    PRIMARY KEY (injection_id, position)
);
-- Was this item ever given, and to whom (erasure, the console's entry page).
CREATE INDEX injection_items_item_idx ON injection_items (item_id);

INSERT INTO injection_items (injection_id, position, kind, item_id)
SELECT injection_id, (ordinality - 1)::smallint, 'lesson', entry_id
FROM injections, unnest(entry_ids) WITH ORDINALITY AS given(entry_id, ordinality);
INSERT INTO injection_items (injection_id, position, kind, item_id)
SELECT injection_id, (cardinality(entry_ids) + ordinality - 1)::smallint, 'warning', pattern_id
FROM injections, unnest(pattern_ids) WITH ORDINALITY AS given(pattern_id, ordinality);
ALTER TABLE injections DROP COLUMN entry_ids, DROP COLUMN pattern_ids;
CREATE INDEX injections_agent_idx ON injections (project, agent_id, created_at DESC);

-- Staleness: the repository files an entry cites (a fix's changed files,
-- `files:` in front matter). A briefing leaves out an item whose cited
-- files are all gone from the agent's checkout.
ALTER TABLE knowledge_entries ADD COLUMN cited_files text[] NOT NULL DEFAULT '{}';
UPDATE knowledge_entries e SET cited_files = a.files_changed
    FROM qa_fix_attempts a
    WHERE e.kind = 'gotcha' AND e.details ->> 'attempt_id' = a.attempt_id::text;

-- Supersession: a newer lesson that replaces an older one (it says so, or
-- it is a newer verified fix of the same QA pattern). A superseded entry is
-- kept, shown to people with its successor, and no longer injected.
ALTER TABLE knowledge_entries
    ADD COLUMN superseded_by uuid REFERENCES knowledge_entries (entry_id) ON DELETE SET NULL;
ALTER TABLE knowledge_entries DROP CONSTRAINT knowledge_entries_status_check,
    ADD CONSTRAINT knowledge_entries_status_check
        CHECK (status IN ('active', 'obsolete', 'quarantined', 'superseded'));
CREATE INDEX knowledge_entries_superseded_by_idx ON knowledge_entries (superseded_by)
    WHERE superseded_by IS NOT NULL;
