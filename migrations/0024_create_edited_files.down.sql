DROP FUNCTION edited_files(jsonb);
