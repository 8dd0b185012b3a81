-- Who made each pattern's last change (issue 43), which the console and
-- GetPattern show: a capture (it started the pattern or widened its
-- template), a re-mining (it merged, split or moved the pattern) or a
-- person (a merge, a split or an edit). Patterns stored before this were
-- last changed by whatever; they say capture, the most common.
ALTER TABLE qa_patterns
    ADD COLUMN last_change text NOT NULL DEFAULT 'capture'
        CHECK (last_change IN ('capture', 're_mining', 'person'));
