-- A project whose people tell failures apart by the names they quote is
-- read literally from this moment on (lore_grouping::convention): quoted
-- values stay in its templates, and a message joins only a pattern it fits
-- in every position. NULL: read as every project is at first.
ALTER TABLE projects ADD COLUMN read_literally_since timestamptz;

-- What the people's corrections said of reading the project literally at
-- the last re-mining: patterns corrected that way, patterns corrected
-- against it, and whether the project is read literally after it.
ALTER TABLE qa_remining_runs
    ADD COLUMN literal_agreeing integer NOT NULL DEFAULT 0,
    ADD COLUMN literal_against integer NOT NULL DEFAULT 0,
    ADD COLUMN read_literally boolean NOT NULL DEFAULT false;
