DROP TABLE qa_remining_runs;
