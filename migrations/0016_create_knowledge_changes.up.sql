-- The knowledge change feed: every write to an entry (and to the synonyms,
-- which change what a query matches) leaves a row here in its own
-- transaction, and notifies channel lore_knowledge on commit. Each server
-- replica keeps an in-memory keyword index and a cache of SearchMany
-- answers; it rebuilds the index from knowledge_entries at start and then
-- follows this table, so PostgreSQL stays the only source of truth and every
-- replica answers the same.
--
-- A reader reads rows in (txid, position) order. Transaction ids do not
-- commit in order, so a reader only moves its cursor past transactions that
-- are over (txid below the snapshot's xmin); rows of younger transactions
-- that it could already see are applied again on the next read, which is
-- harmless because applying a change means reading the entry as it is now.
CREATE TABLE knowledge_changes (
    txid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
    position    bigint GENERATED ALWAYS AS IDENTITY,
    -- NULL with entry_id NULL: a change to every project (a global synonym).
    project     text,
    -- NULL: a change to the project as a whole (its synonyms).
    entry_id    uuid,
    changed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (txid, position)
);
CREATE INDEX knowledge_changes_changed_at_idx ON knowledge_changes (changed_at);

-- How far the feed was pruned: a reader whose cursor is behind this missed
-- rows and rebuilds. One row.
CREATE TABLE knowledge_changes_pruned (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    txid        xid8 NOT NULL,
    position    bigint NOT NULL
);

CREATE FUNCTION lore_knowledge_entries_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO knowledge_changes (project, entry_id) SELECT project, entry_id FROM old_rows;
    ELSE
        INSERT INTO knowledge_changes (project, entry_id) SELECT project, entry_id FROM new_rows;
    END IF;
    PERFORM pg_notify('lore_knowledge', '');
    RETURN NULL;
END
$$;

-- Statement triggers with transition tables: a COPY of many entries is one
-- call, not one per row.
CREATE TRIGGER knowledge_entries_inserted AFTER INSERT ON knowledge_entries
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_entries_changed();
CREATE TRIGGER knowledge_entries_updated AFTER UPDATE ON knowledge_entries
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_entries_changed();
CREATE TRIGGER knowledge_entries_deleted AFTER DELETE ON knowledge_entries
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_entries_changed();

CREATE FUNCTION lore_knowledge_project_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO knowledge_changes (project) SELECT DISTINCT project FROM old_rows;
    ELSE
        INSERT INTO knowledge_changes (project) SELECT DISTINCT project FROM new_rows;
    END IF;
    PERFORM pg_notify('lore_knowledge', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER knowledge_synonyms_inserted AFTER INSERT ON knowledge_synonyms
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_project_changed();
CREATE TRIGGER knowledge_synonyms_updated AFTER UPDATE ON knowledge_synonyms
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_project_changed();
CREATE TRIGGER knowledge_synonyms_deleted AFTER DELETE ON knowledge_synonyms
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_project_changed();
