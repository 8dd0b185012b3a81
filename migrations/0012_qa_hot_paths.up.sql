-- The two hot paths of QA learning, CaptureFailure and GetWarnings, read
-- less of qa_patterns.
--
-- Grouping compares a message with every pattern of its route, and a
-- route can hold hundreds of patterns (834 in the benchmark's 10,000):
-- reading their wide rows cost 4-5 ms per capture. Each server now keeps a
-- route's templates in memory and checks them against the route's
-- generation, which these triggers bump whenever a change could alter a
-- grouping decision (a pattern is added or removed, its template widens,
-- it is merged), whatever code path makes the change.

CREATE TABLE qa_routes (
    project text NOT NULL,
    category text NOT NULL,
    route text NOT NULL,
    generation bigint NOT NULL,
    PRIMARY KEY (project, category, route)
);

INSERT INTO qa_routes (project, category, route, generation)
SELECT DISTINCT project, category, route, 1 FROM qa_patterns;

CREATE FUNCTION qa_route_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO qa_routes AS r (project, category, route, generation)
        VALUES (OLD.project, OLD.category, OLD.route, 1)
        ON CONFLICT (project, category, route) DO UPDATE SET generation = r.generation + 1;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE'
            AND (NEW.project, NEW.category, NEW.route) IS DISTINCT FROM (OLD.project, OLD.category, OLD.route)) THEN
        INSERT INTO qa_routes AS r (project, category, route, generation)
        VALUES (NEW.project, NEW.category, NEW.route, 1)
        ON CONFLICT (project, category, route) DO UPDATE SET generation = r.generation + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER qa_patterns_route_added_or_removed AFTER INSERT OR DELETE ON qa_patterns
    FOR EACH ROW EXECUTE FUNCTION qa_route_changed();
-- Counters change on every capture and leave the route alone.
CREATE TRIGGER qa_patterns_route_changed AFTER UPDATE ON qa_patterns
    FOR EACH ROW
    WHEN ((OLD.template_tokens, OLD.merged_into, OLD.project, OLD.category, OLD.route)
          IS DISTINCT FROM (NEW.template_tokens, NEW.merged_into, NEW.project, NEW.category, NEW.route))
    EXECUTE FUNCTION qa_route_changed();

-- GetWarnings: a pattern that shares only the task's category with it ranks
-- by confidence x ln(1 + occurrences) alone, so only the first few of the
-- category (by this index) can make the top N, instead of every one of
-- them (2,000 of the benchmark's patterns) being read and ranked.
ALTER TABLE qa_patterns
    ADD COLUMN warn_weight double precision
        GENERATED ALWAYS AS (confidence * ln(1 + occurrence_count::float8)) STORED;
CREATE INDEX qa_patterns_warn_weight_idx ON qa_patterns (project, warn_weight DESC, pattern_id);

-- Counters change on every capture and delivery; room on the page lets
-- those updates stay HOT instead of touching every GIN index of the row.
ALTER TABLE qa_patterns SET (fillfactor = 80);
