UPDATE injection_items SET withheld = 'already_given' WHERE withheld = 'at_call';
ALTER TABLE injection_items DROP CONSTRAINT injection_items_withheld_check,
    ADD CONSTRAINT injection_items_withheld_check CHECK (withheld IN
        ('quarantined', 'stale', 'over_budget', 'already_given', 'session_budget', 'held_out'));
DELETE FROM injections WHERE surface = 'call';
ALTER TABLE injection_items DROP CONSTRAINT injection_items_kind_check,
    ADD CONSTRAINT injection_items_kind_check CHECK (kind IN ('lesson', 'warning', 'last_session', 'similar_session'));
ALTER TABLE injections DROP CONSTRAINT injections_surface_check,
    ADD CONSTRAINT injections_surface_check CHECK (surface IN
        ('session_start', 'prompt', 'briefing', 'resume', 'search', 'get_entry', 'warnings'));
DROP TABLE qa_guard_switches;
DROP TABLE qa_guards;
