ALTER TABLE qa_remining_runs
    DROP COLUMN literal_agreeing,
    DROP COLUMN literal_against,
    DROP COLUMN read_literally;
ALTER TABLE projects DROP COLUMN read_literally_since;
