-- A person's review of an entry an agent wrote (issue 56): approved, its
-- words reach other agents unchanged (its trust becomes reviewed);
-- rejected, it leaves the queue and is never said. A rewrite clears the
-- decision: new words wait for a person again.
ALTER TABLE knowledge_entries
    ADD COLUMN review text CHECK (review IN ('approved', 'rejected')),
    ADD COLUMN reviewed_by text,
    ADD COLUMN reviewed_at timestamptz,
    ADD COLUMN review_note text NOT NULL DEFAULT '',
    ADD CONSTRAINT knowledge_entries_review_complete
        CHECK ((review IS NULL) = (reviewed_by IS NULL) AND (review IS NULL) = (reviewed_at IS NULL));

-- The queue: a project's active entries with an agent's words that no
-- person has decided on.
CREATE INDEX knowledge_entries_to_review_idx ON knowledge_entries (project, updated_at DESC)
    WHERE review IS NULL AND trust <> 'reviewed' AND status = 'active';
