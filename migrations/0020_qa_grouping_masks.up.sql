-- A project's own grouping masks: regular expressions whose every match is
-- one variable, applied to each captured message before the generic masks
-- (Brain's per-system settings, kept out of the default). Captures read
-- them in their transaction, so every replica follows a change at once.
CREATE TABLE qa_grouping_masks (
    project     text NOT NULL REFERENCES projects (name),
    name        text NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
    pattern     text NOT NULL CHECK (length(pattern) BETWEEN 1 AND 512),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
    updated_by  text NOT NULL DEFAULT '',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project, name)
);
