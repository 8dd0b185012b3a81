DROP TABLE qa_grouping_masks;
