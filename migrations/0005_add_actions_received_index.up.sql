-- Resume followers fetch "actions of project P stored since T".
CREATE INDEX actions_project_received_idx ON actions (project, received_at);
