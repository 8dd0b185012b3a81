-- What Lore injects into agents can be trusted (issue 28): where each item
-- that can reach an agent's context came from, how far it is trusted, and
-- the quarantine of what the injection screen held.
--
-- origin: {"author": "person" | "agent" | "tool" | "lore",
--          "channel": "console" | "cli" | "mcp" | "hook" | "rpc" | "sidecar" | "folder" | "lore",
--          "token": the token's name, "role", "agent_id", "session_id"}
-- trust:  'reviewed' (a person wrote or approved it), 'verified' (a passing
--         check or task result was recorded for the task after it),
--         'observed' (everything else).

ALTER TABLE knowledge_entries
    ADD COLUMN trust text NOT NULL DEFAULT 'observed' CHECK (trust IN ('reviewed', 'verified', 'observed')),
    ADD COLUMN origin jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(origin) = 'object');
-- A quarantined entry is stored but found by no search until released.
ALTER TABLE knowledge_entries DROP CONSTRAINT knowledge_entries_status_check,
    ADD CONSTRAINT knowledge_entries_status_check CHECK (status IN ('active', 'obsolete', 'quarantined'));

-- What was there before: who wrote an entry was not recorded. Documents
-- (IndexDocument and the folder watcher take an operator's hand), approved
-- drafts and published promotions were approved by a person; the rest
-- (UpsertEntry by any token, gotchas drafted from fixes) stay observed.
UPDATE knowledge_entries SET trust = 'reviewed', origin = '{"author": "person", "channel": "folder"}'
    WHERE source_path IS NOT NULL;
UPDATE knowledge_entries e SET trust = 'reviewed', origin = '{"author": "person", "channel": "console"}'
    FROM knowledge_drafts d WHERE d.entry_id = e.entry_id AND d.status = 'approved';
UPDATE knowledge_entries e SET trust = 'reviewed', origin = '{"author": "person", "channel": "console"}'
    FROM qa_promotions p WHERE p.entry_id = e.entry_id AND p.status IN ('approved', 'published');
UPDATE knowledge_entries SET origin = '{"author": "lore", "channel": "lore"}'
    WHERE kind = 'gotcha' AND origin = '{}';

ALTER TABLE knowledge_drafts
    ADD COLUMN origin jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(origin) = 'object');
ALTER TABLE knowledge_drafts DROP CONSTRAINT knowledge_drafts_status_check,
    ADD CONSTRAINT knowledge_drafts_status_check
        CHECK (status IN ('pending', 'approved', 'rejected', 'quarantined'));
ALTER TABLE knowledge_drafts DROP CONSTRAINT knowledge_drafts_check1,
    ADD CONSTRAINT knowledge_drafts_reviewed_check
        CHECK ((status IN ('pending', 'quarantined')) = (reviewed_at IS NULL));

-- The failure itself is a record (append-only); its origin is who captured
-- it, and what it says is a tool's output.
ALTER TABLE qa_failures
    ADD COLUMN origin jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(origin) = 'object');

ALTER TABLE qa_fix_attempts
    ADD COLUMN trust text NOT NULL DEFAULT 'observed' CHECK (trust IN ('reviewed', 'verified', 'observed')),
    ADD COLUMN origin jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(origin) = 'object'),
    -- The passing task result that verified it.
    ADD COLUMN verified_by uuid;
-- A successful attempt is verified by the first passing result of its
-- failure's task recorded after it.
WITH verified AS (
    SELECT DISTINCT ON (a.attempt_id) a.attempt_id, r.result_id
    FROM qa_fix_attempts a
    JOIN qa_failures f ON f.failure_id = a.failure_id
    JOIN qa_task_results r ON r.project = f.project AND r.task_id = f.task_id AND r.passed
                          AND r.recorded_at >= a.recorded_at
    WHERE a.outcome = 'success'
    ORDER BY a.attempt_id, r.recorded_at
)
UPDATE qa_fix_attempts a SET trust = 'verified', verified_by = verified.result_id
FROM verified WHERE verified.attempt_id = a.attempt_id;

ALTER TABLE qa_patterns
    -- How far the pattern's recommended fix is trusted; NULL without one.
    ADD COLUMN fix_trust text CHECK (fix_trust IN ('reviewed', 'verified', 'observed')),
    -- The attempt the fix was taken from; NULL for a person's edit.
    ADD COLUMN fix_attempt_id uuid,
    -- A person's edit the screen held: not warned about until released.
    ADD COLUMN held boolean NOT NULL DEFAULT false;
UPDATE qa_patterns SET fix_trust = 'observed' WHERE recommended_fix <> '';

-- What the screen held, for people to review. The item stays stored where
-- it belongs (an entry, a draft, a fix attempt, a failure's message, an
-- action); here is why it was held and what became of it.
CREATE TABLE quarantine (
    quarantine_id  uuid PRIMARY KEY,
    project        text NOT NULL REFERENCES projects (name),
    item_kind      text NOT NULL CHECK (item_kind IN
                       ('failure_message', 'fix_attempt', 'entry', 'draft', 'pattern', 'action', 'session')),
    item_id        uuid NOT NULL,
    -- Which part of the item: a field name, or a message's index.
    part           text NOT NULL DEFAULT '',
    -- The text that was held, as it was (cut to 4,000 characters).
    excerpt        text NOT NULL,
    reasons        text[] NOT NULL,
    score          double precision NOT NULL CHECK (score BETWEEN 0 AND 1),
    origin         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(origin) = 'object'),
    status         text NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'released', 'erased')),
    caught_at      timestamptz NOT NULL DEFAULT now(),
    decided_at     timestamptz,
    decided_by     text,
    note           text NOT NULL DEFAULT '',
    CHECK ((status = 'held') = (decided_at IS NULL)),
    UNIQUE (item_kind, item_id, part)
);
CREATE INDEX quarantine_project_idx ON quarantine (project, status, caught_at DESC);
