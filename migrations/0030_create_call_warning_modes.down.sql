DROP TABLE qa_call_warning_modes;
