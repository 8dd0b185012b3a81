-- What a debugger's knowledge base says of an entry, beside what Lore had:
-- the error messages it is known by (matched against a pasted error after
-- normalization), why the problem happens, and how often and when it was
-- used before Lore knew it (a document's `usage_count` and `last_used`).
ALTER TABLE knowledge_entries
    ADD COLUMN symptoms      text[] NOT NULL DEFAULT '{}'
                             CHECK (cardinality(symptoms) <= 100),
    ADD COLUMN root_causes   text[] NOT NULL DEFAULT '{}'
                             CHECK (cardinality(root_causes) <= 100),
    ADD COLUMN usage_count   bigint NOT NULL DEFAULT 0 CHECK (usage_count >= 0),
    ADD COLUMN last_used_at  timestamptz;

-- Whether the agent that met the issue again found the entry by searching.
ALTER TABLE knowledge_occurrences ADD COLUMN found_via_search boolean NOT NULL DEFAULT false;

-- Categories that are related: a query's category ranks entries of its own
-- category first (1.0 in the blend) and of a related one next (0.5). A
-- relation goes both ways and is stored once, the smaller name first.
CREATE TABLE knowledge_category_relations (
    project     text NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
    category    text NOT NULL CHECK (length(category) BETWEEN 1 AND 128),
    related     text NOT NULL CHECK (length(related) BETWEEN 1 AND 128),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project, category, related),
    CHECK (category < related)
);

-- A relation changes what a query ranks first: the project's cached
-- answers go (see 0016).
CREATE TRIGGER knowledge_category_relations_inserted AFTER INSERT ON knowledge_category_relations
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_project_changed();
CREATE TRIGGER knowledge_category_relations_deleted AFTER DELETE ON knowledge_category_relations
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lore_knowledge_project_changed();
