ALTER TABLE qa_grouping_corrections DROP COLUMN occurrence_ids;
ALTER TABLE qa_remining_runs
    DROP COLUMN corrected_pairs,
    DROP COLUMN kept_before,
    DROP COLUMN kept_replay,
    DROP COLUMN regressions,
    DROP COLUMN automatic,
    DROP COLUMN proposed;
DROP TABLE qa_regrouping_proposals;
