DROP INDEX IF EXISTS knowledge_entries_to_review_idx;
ALTER TABLE knowledge_entries
    DROP CONSTRAINT IF EXISTS knowledge_entries_review_complete,
    DROP COLUMN IF EXISTS review_note,
    DROP COLUMN IF EXISTS reviewed_at,
    DROP COLUMN IF EXISTS reviewed_by,
    DROP COLUMN IF EXISTS review;
