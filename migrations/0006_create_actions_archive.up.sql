-- Archived actions. Retention moves whole monthly partitions here from the
-- live log (DETACH + ATTACH: no row is copied), and drops archived
-- partitions past the drop age. Rows of the live default partition are the
-- only ones moved row by row.
CREATE TABLE actions_archive (LIKE actions INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (occurred_at);
ALTER TABLE actions_archive ADD PRIMARY KEY (action_id, occurred_at);
CREATE TABLE actions_archive_default PARTITION OF actions_archive DEFAULT;

-- VerifyChain reads a session's chain across the live log and the archive.
CREATE INDEX actions_archive_session_chain_idx ON actions_archive (session_id, chain_seq)
    WHERE session_id IS NOT NULL;
CREATE INDEX actions_archive_project_occurred_idx ON actions_archive (project, occurred_at DESC);

CREATE TRIGGER actions_archive_append_only BEFORE UPDATE ON actions_archive
    FOR EACH ROW EXECUTE FUNCTION lore_reject_update();
