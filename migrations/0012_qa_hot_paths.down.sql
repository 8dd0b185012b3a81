ALTER TABLE qa_patterns RESET (fillfactor);
DROP INDEX qa_patterns_warn_weight_idx;
ALTER TABLE qa_patterns DROP COLUMN warn_weight;
DROP TRIGGER qa_patterns_route_changed ON qa_patterns;
DROP TRIGGER qa_patterns_route_added_or_removed ON qa_patterns;
DROP FUNCTION qa_route_changed();
DROP TABLE qa_routes;
