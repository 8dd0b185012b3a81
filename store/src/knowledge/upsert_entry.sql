-- An entry stored, or replaced where the conflict target says it is the same
-- one: its id, or (project, key) for an entry written by its key.
INSERT INTO knowledge_entries AS e (entry_id, key, project, kind, title, category, summary, body, tags,
    status, severity, prevention_checklist, details, source_path, front_matter, content_hash,
    document_hash, source_root, symptoms, root_causes, usage_count, last_used_at, trust, origin,
    cited_files)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
        $22, $23, $24, $25)
ON CONFLICT {conflict_target} DO UPDATE SET
    key = EXCLUDED.key, kind = EXCLUDED.kind, title = EXCLUDED.title, category = EXCLUDED.category,
    summary = EXCLUDED.summary, body = EXCLUDED.body, tags = EXCLUDED.tags,
    -- A superseded entry stays superseded when it is written again
    -- (its document edited): only its successor's erasure revives it.
    status = CASE WHEN e.superseded_by IS NOT NULL AND EXCLUDED.status = 'active' THEN 'superseded'
                  ELSE EXCLUDED.status END,
    severity = EXCLUDED.severity, prevention_checklist = EXCLUDED.prevention_checklist,
    details = EXCLUDED.details, source_path = EXCLUDED.source_path, front_matter = EXCLUDED.front_matter,
    content_hash = EXCLUDED.content_hash, document_hash = EXCLUDED.document_hash,
    source_root = EXCLUDED.source_root, symptoms = EXCLUDED.symptoms, root_causes = EXCLUDED.root_causes,
    usage_count = EXCLUDED.usage_count, last_used_at = EXCLUDED.last_used_at,
    trust = EXCLUDED.trust, origin = EXCLUDED.origin, cited_files = EXCLUDED.cited_files,
    -- New words wait for a person again.
    review = NULL, reviewed_by = NULL, reviewed_at = NULL, review_note = '',
    updated_at = now()
WHERE e.project = EXCLUDED.project
RETURNING e.entry_id, (xmax = 0) AS created
