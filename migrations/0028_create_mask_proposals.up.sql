-- Masks proposed from a person's merges (issue 43): when someone merges
-- patterns whose templates differ only in words of one shape, the
-- expression that would have masked them waits here for a person. Accepting
-- adds it to qa_grouping_masks; rejecting keeps it, so the same expression
-- is never proposed to the project again (the unique key).
CREATE TABLE qa_mask_proposals (
    proposal_id  uuid PRIMARY KEY,
    project      text NOT NULL REFERENCES projects (name),
    name         text NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
    pattern      text NOT NULL CHECK (length(pattern) BETWEEN 1 AND 512),
    examples     text[] NOT NULL,
    pattern_ids  uuid[] NOT NULL,
    proposed_by  text NOT NULL DEFAULT '',
    proposed_at  timestamptz NOT NULL DEFAULT now(),
    state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'rejected')),
    decided_by   text NOT NULL DEFAULT '',
    decided_at   timestamptz,
    mask_name    text NOT NULL DEFAULT '',
    UNIQUE (project, pattern)
);
