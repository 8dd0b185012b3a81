-- The last re-mining of each project with the criterion's verdict on it
-- (issue 43): what Brain proposed that was made and what was turned down,
-- and the description length of the project's recent groups before and
-- after, which the console's QA page shows.
CREATE TABLE qa_remining_runs (
    project     text PRIMARY KEY REFERENCES projects (name) ON DELETE CASCADE,
    remined_at  timestamptz NOT NULL DEFAULT now(),
    occurrences integer NOT NULL CHECK (occurrences >= 0),
    merges      integer NOT NULL CHECK (merges >= 0),
    splits      integer NOT NULL CHECK (splits >= 0),
    rejected    integer NOT NULL CHECK (rejected >= 0),
    moves       integer NOT NULL CHECK (moves >= 0),
    bits_before double precision NOT NULL CHECK (bits_before >= 0),
    bits_after  double precision NOT NULL CHECK (bits_after >= 0)
);
