UPDATE injection_items SET withheld = 'over_budget' WHERE withheld = 'unreviewed';
ALTER TABLE injection_items DROP CONSTRAINT injection_items_withheld_check,
    ADD CONSTRAINT injection_items_withheld_check CHECK (withheld IN
        ('quarantined', 'stale', 'over_budget', 'already_given', 'session_budget', 'held_out', 'at_call'));
