-- A project's counts over a window (the console's activity figures per day,
-- action type and outcome; the hot spots' failure rate per action type)
-- read the action type and outcome of every action in the window. A
-- project's actions interleave with every other project's in the heap, so
-- reading them there reads nearly every page of the table: 28,000 pages for
-- 100,000 actions of one project among 1,000,000 (docs/BENCHMARKS.md).
-- Carried in the (project, occurred_at) index, they are read from the index
-- alone once vacuum has marked the pages all-visible. Same keys, same
-- order: every query that used the index still can.
DROP INDEX actions_project_occurred_idx;
CREATE INDEX actions_project_occurred_idx ON actions (project, occurred_at DESC) INCLUDE (action_type, outcome);
