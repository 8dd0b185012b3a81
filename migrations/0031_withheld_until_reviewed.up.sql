-- A briefing leaves out an agent's written text (a lesson, a fix's
-- approach) until a person has reviewed it, and the ledger says so
-- (issue 56).
ALTER TABLE injection_items DROP CONSTRAINT injection_items_withheld_check,
    ADD CONSTRAINT injection_items_withheld_check CHECK (withheld IN
        ('quarantined', 'stale', 'over_budget', 'already_given', 'session_budget', 'held_out', 'at_call',
         'unreviewed'));
