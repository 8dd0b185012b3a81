-- The daily and weekly reports the leader writes, kept with their history:
-- a supervisor reads last Tuesday's report as it was written, from any
-- replica, and no replica needs a disk of its own for them. `project` is
-- empty for the fleet's report.
CREATE TABLE periodic_reports (
    period       text NOT NULL CHECK (period IN ('daily', 'weekly')),
    project      text NOT NULL,
    period_start date NOT NULL,
    period_end   date NOT NULL CHECK (period_end > period_start),
    title        text NOT NULL,
    markdown     text NOT NULL,
    written_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (period, project, period_start)
);

-- The history of one project's reports, newest first.
CREATE INDEX periodic_reports_history ON periodic_reports (project, period, period_start DESC);
