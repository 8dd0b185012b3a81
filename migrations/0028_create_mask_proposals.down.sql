DROP TABLE qa_mask_proposals;
