DROP INDEX actions_project_occurred_idx;
CREATE INDEX actions_project_occurred_idx ON actions (project, occurred_at DESC);
