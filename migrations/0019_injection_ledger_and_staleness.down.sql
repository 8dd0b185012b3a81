DROP INDEX knowledge_entries_superseded_by_idx;
UPDATE knowledge_entries SET status = 'active' WHERE status = 'superseded';
ALTER TABLE knowledge_entries DROP CONSTRAINT knowledge_entries_status_check,
    ADD CONSTRAINT knowledge_entries_status_check CHECK (status IN ('active', 'obsolete', 'quarantined'));
ALTER TABLE knowledge_entries DROP COLUMN superseded_by, DROP COLUMN cited_files;

DROP INDEX injections_agent_idx;
ALTER TABLE injections
    ADD COLUMN entry_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN pattern_ids uuid[] NOT NULL DEFAULT '{}';
UPDATE injections j SET
    entry_ids = ARRAY(SELECT item_id FROM injection_items i WHERE i.injection_id = j.injection_id
                      AND i.kind = 'lesson' AND i.withheld IS NULL ORDER BY position),
    pattern_ids = ARRAY(SELECT item_id FROM injection_items i WHERE i.injection_id = j.injection_id
                        AND i.kind = 'warning' AND i.withheld IS NULL ORDER BY position);
DROP TABLE injection_items;
ALTER TABLE injections DROP COLUMN tokens, DROP COLUMN surface;
ALTER INDEX injections_project_created_idx RENAME TO briefings_project_created_idx;
ALTER INDEX injections_session_idx RENAME TO briefings_session_idx;
ALTER INDEX injections_pkey RENAME TO briefings_pkey;
ALTER TABLE injections RENAME COLUMN chars TO markdown_chars;
ALTER TABLE injections RENAME COLUMN injection_id TO briefing_id;
ALTER TABLE injections RENAME TO briefings;
