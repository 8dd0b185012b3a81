-- Re-mining changes a project's groups by itself only where the project's
-- people support it (issue 58): elsewhere each move Brain's plan asks for
-- (a merge with the parts it takes, or a split) waits here for a person.
-- Open proposals are replaced at every re-mining; a rejected one keeps its
-- key, so the same move is not proposed to the project again.
CREATE TABLE qa_regrouping_proposals (
    proposal_id   uuid PRIMARY KEY,
    project       text NOT NULL REFERENCES projects (name),
    -- The move's kind and the patterns it touches, sorted: what makes two
    -- proposals the same move.
    move_key      text NOT NULL,
    -- [{"split": {...}} | {"merge": {...}}], in the order to make them.
    steps         jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array'),
    -- The group the move makes, as Brain mines it.
    template      text NOT NULL,
    pattern_ids   uuid[] NOT NULL,
    occurrences   integer NOT NULL CHECK (occurrences >= 0),
    proposed_at   timestamptz NOT NULL DEFAULT now(),
    state         text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'rejected')),
    decided_by    text NOT NULL DEFAULT '',
    decided_at    timestamptz,
    UNIQUE (project, move_key)
);
CREATE INDEX qa_regrouping_proposals_open_idx ON qa_regrouping_proposals (project, proposed_at DESC)
    WHERE state = 'open';

-- The last re-mining's evidence: pairs of occurrences people's corrections
-- speak about, how many the groups kept before those corrections, how
-- many re-mining replayed from there keeps, for how many corrections it
-- keeps fewer than capture did, whether its changes were made, and how
-- many were proposed instead.
ALTER TABLE qa_remining_runs
    ADD COLUMN corrected_pairs double precision NOT NULL DEFAULT 0,
    ADD COLUMN kept_before double precision NOT NULL DEFAULT 0,
    ADD COLUMN kept_replay double precision NOT NULL DEFAULT 0,
    ADD COLUMN regressions integer NOT NULL DEFAULT 0,
    ADD COLUMN automatic boolean NOT NULL DEFAULT false,
    ADD COLUMN proposed integer NOT NULL DEFAULT 0;

-- The occurrences each correction moved (the newest, as many as re-mining
-- reads), so that re-mining can replay the groups as they were before the
-- people's corrections and see whether it would have made them.
ALTER TABLE qa_grouping_corrections ADD COLUMN occurrence_ids uuid[] NOT NULL DEFAULT '{}';
