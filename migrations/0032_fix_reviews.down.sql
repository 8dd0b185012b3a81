DROP INDEX qa_fix_attempts_to_review_idx;
UPDATE qa_fix_attempts SET trust = CASE WHEN verified_by IS NULL THEN 'observed' ELSE 'verified' END
    WHERE review = 'approved';
ALTER TABLE qa_fix_attempts
    DROP CONSTRAINT qa_fix_attempts_review_complete,
    DROP COLUMN review_note,
    DROP COLUMN reviewed_at,
    DROP COLUMN reviewed_by,
    DROP COLUMN review;
