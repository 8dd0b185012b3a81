-- A person's review of an agent's fix (issue 56): approved, its words are
-- its patterns' reviewed fix and gotcha; rejected, it leaves the queue and
-- is never said. Until then a successful fix waits in the review queue.
ALTER TABLE qa_fix_attempts
    ADD COLUMN review text CHECK (review IN ('approved', 'rejected')),
    ADD COLUMN reviewed_by text,
    ADD COLUMN reviewed_at timestamptz,
    ADD COLUMN review_note text NOT NULL DEFAULT '',
    ADD CONSTRAINT qa_fix_attempts_review_complete
        CHECK ((review IS NULL) = (reviewed_by IS NULL) AND (review IS NULL) = (reviewed_at IS NULL));

-- The queue: a project's successful fixes no person has decided on.
CREATE INDEX qa_fix_attempts_to_review_idx ON qa_fix_attempts (project, recorded_at DESC)
    WHERE review IS NULL AND outcome = 'success';
