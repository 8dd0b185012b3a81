DROP INDEX qa_warning_deliveries_session_idx;
DROP TABLE briefings;
