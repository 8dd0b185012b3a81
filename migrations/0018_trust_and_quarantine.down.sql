DROP TABLE quarantine;
ALTER TABLE qa_patterns DROP COLUMN held, DROP COLUMN fix_attempt_id, DROP COLUMN fix_trust;
ALTER TABLE qa_fix_attempts DROP COLUMN verified_by, DROP COLUMN origin, DROP COLUMN trust;
ALTER TABLE qa_failures DROP COLUMN origin;
UPDATE knowledge_drafts SET status = 'pending' WHERE status = 'quarantined';
ALTER TABLE knowledge_drafts DROP CONSTRAINT knowledge_drafts_reviewed_check,
    ADD CONSTRAINT knowledge_drafts_check1 CHECK ((status = 'pending') = (reviewed_at IS NULL));
ALTER TABLE knowledge_drafts DROP CONSTRAINT knowledge_drafts_status_check,
    ADD CONSTRAINT knowledge_drafts_status_check CHECK (status IN ('pending', 'approved', 'rejected'));
ALTER TABLE knowledge_drafts DROP COLUMN origin;
UPDATE knowledge_entries SET status = 'obsolete' WHERE status = 'quarantined';
ALTER TABLE knowledge_entries DROP CONSTRAINT knowledge_entries_status_check,
    ADD CONSTRAINT knowledge_entries_status_check CHECK (status IN ('active', 'obsolete'));
ALTER TABLE knowledge_entries DROP COLUMN origin, DROP COLUMN trust;
