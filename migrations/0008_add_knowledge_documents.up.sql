-- Markdown documents indexed from watched folders or IndexDocument.
--
-- `document_hash` is the BLAKE3 of the document as given (front matter
-- included): a document indexed again unchanged is a no-op. `content_hash`
-- stays the hash of the embedded text, so a front matter edit that leaves the
-- text alone is not re-embedded.
--
-- `source_root` names the watched folder a document came from (NULL for
-- documents indexed through the API): start-up reconciliation retires only
-- the entries of its own folder whose files are gone.
ALTER TABLE knowledge_entries
    ADD COLUMN document_hash bytea,
    ADD COLUMN source_root text CHECK (length(source_root) BETWEEN 1 AND 4096);

CREATE INDEX knowledge_entries_source_root_idx ON knowledge_entries (source_root, source_path)
    WHERE source_root IS NOT NULL;
