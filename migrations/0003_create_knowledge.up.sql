-- KnowledgeService: entries, solutions, occurrences, applications,
-- embeddings (several models side by side), synonyms and drafts.

-- The full-text document of an entry. Declared IMMUTABLE so it can back a
-- generated column: array_to_string is only STABLE in the catalog, but over
-- text[] its result never changes.
CREATE FUNCTION lore_entry_document(title text, summary text, body text, category text, tags text[])
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', coalesce(array_to_string(tags, ' '), '')), 'A')
        || setweight(to_tsvector('english', coalesce(summary, '') || ' ' || coalesce(category, '')), 'B')
        || setweight(to_tsvector('english', coalesce(body, '')), 'C')
$$;

CREATE TABLE knowledge_entries (
    entry_id              uuid PRIMARY KEY,
    project               text NOT NULL REFERENCES projects (name),
    -- Human key such as PAT-004 or a document id from front matter.
    key                   text CHECK (length(key) BETWEEN 1 AND 128),
    kind                  text NOT NULL
                          CHECK (kind IN ('issue_pattern', 'learning', 'retrospective', 'gotcha')),
    title                 text NOT NULL CHECK (length(title) BETWEEN 1 AND 512),
    category              text NOT NULL DEFAULT '' CHECK (length(category) <= 128),
    summary               text NOT NULL DEFAULT '',
    body                  text NOT NULL DEFAULT '',
    tags                  text[] NOT NULL DEFAULT '{}',
    status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'obsolete')),
    -- Issue-pattern fields.
    severity              text CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    trend                 text CHECK (trend IN ('increasing', 'stable', 'decreasing')),
    occurrence_count      bigint NOT NULL DEFAULT 0 CHECK (occurrence_count >= 0),
    last_seen_at          timestamptz,
    prevention_checklist  text[] NOT NULL DEFAULT '{}',
    -- Kind-specific fields that are never filtered on (retrospective lists,
    -- gotcha problem/solution/confidence), as a JSON object.
    details               jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    -- Learnings indexed from markdown: the file and its parsed front matter.
    source_path           text CHECK (length(source_path) BETWEEN 1 AND 4096),
    front_matter          jsonb CHECK (jsonb_typeof(front_matter) = 'object'),
    -- BLAKE3 of what was indexed: re-indexing unchanged content is a no-op.
    content_hash          bytea,
    search_document       tsvector GENERATED ALWAYS AS
                          (lore_entry_document(title, summary, body, category, tags)) STORED,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX knowledge_entries_project_key_idx ON knowledge_entries (project, key)
    WHERE key IS NOT NULL;
CREATE UNIQUE INDEX knowledge_entries_project_source_idx ON knowledge_entries (project, source_path)
    WHERE source_path IS NOT NULL;
CREATE INDEX knowledge_entries_list_idx
    ON knowledge_entries (project, status, kind, updated_at DESC, entry_id);
CREATE INDEX knowledge_entries_search_idx ON knowledge_entries USING gin (search_document);
CREATE INDEX knowledge_entries_trigram_idx
    ON knowledge_entries USING gin ((title || ' ' || summary) gin_trgm_ops);
CREATE INDEX knowledge_entries_tags_idx ON knowledge_entries USING gin (tags);

-- Query-time synonym expansion: a query term `term` also searches for
-- `expansion` (a phrase). Global rows have no project; a project may add its
-- own.
CREATE TABLE knowledge_synonyms (
    project    text REFERENCES projects (name) ON DELETE CASCADE,
    term       text NOT NULL CHECK (term = lower(term) AND length(term) BETWEEN 1 AND 64),
    expansion  text NOT NULL CHECK (length(expansion) BETWEEN 1 AND 256)
);
CREATE UNIQUE INDEX knowledge_synonyms_unique_idx
    ON knowledge_synonyms (coalesce(project, ''), term, expansion);

INSERT INTO knowledge_synonyms (term, expansion) VALUES
    ('auth', 'authentication'), ('auth', 'authorization'), ('authn', 'authentication'),
    ('authz', 'authorization'), ('db', 'database'), ('rls', 'row level security'),
    ('pg', 'postgresql'), ('postgres', 'postgresql'), ('k8s', 'kubernetes'),
    ('config', 'configuration'), ('env', 'environment'), ('repo', 'repository'),
    ('deps', 'dependencies'), ('dep', 'dependency'), ('perf', 'performance'),
    ('ci', 'continuous integration'), ('tz', 'timezone'), ('ts', 'typescript'),
    ('js', 'javascript'), ('py', 'python'), ('fk', 'foreign key'), ('pk', 'primary key'),
    ('oom', 'out of memory'), ('msg', 'message'), ('err', 'error'), ('async', 'asynchronous');

CREATE TABLE knowledge_solutions (
    solution_id               uuid PRIMARY KEY,
    entry_id                  uuid NOT NULL REFERENCES knowledge_entries ON DELETE CASCADE,
    project                   text NOT NULL REFERENCES projects (name),
    description               text NOT NULL CHECK (length(description) >= 1),
    position                  integer NOT NULL DEFAULT 0,
    times_applied             bigint NOT NULL DEFAULT 0 CHECK (times_applied >= 0),
    times_successful          bigint NOT NULL DEFAULT 0
                              CHECK (times_successful BETWEEN 0 AND times_applied),
    -- Sum over successful applications; the average is derived on read.
    total_resolution_minutes  double precision NOT NULL DEFAULT 0
                              CHECK (total_resolution_minutes >= 0)
);
CREATE INDEX knowledge_solutions_entry_idx ON knowledge_solutions (entry_id, position);

-- A known issue pattern seen again. The id is the client's idempotency id.
CREATE TABLE knowledge_occurrences (
    occurrence_id       uuid PRIMARY KEY,
    project             text NOT NULL REFERENCES projects (name),
    entry_id            uuid NOT NULL REFERENCES knowledge_entries ON DELETE CASCADE,
    session_id          uuid,
    solution_id         uuid REFERENCES knowledge_solutions ON DELETE SET NULL,
    success             boolean NOT NULL,
    resolution_minutes  double precision NOT NULL DEFAULT 0 CHECK (resolution_minutes >= 0),
    note                text NOT NULL DEFAULT '',
    occurred_at         timestamptz NOT NULL
);
-- Trend computation reads an entry's recent occurrences.
CREATE INDEX knowledge_occurrences_entry_idx ON knowledge_occurrences (entry_id, occurred_at DESC);

-- An entry applied in a session. The id is the client's idempotency id.
CREATE TABLE knowledge_applications (
    application_id      uuid PRIMARY KEY,
    project             text NOT NULL REFERENCES projects (name),
    entry_id            uuid NOT NULL REFERENCES knowledge_entries ON DELETE CASCADE,
    session_id          uuid NOT NULL,
    solution_id         uuid REFERENCES knowledge_solutions ON DELETE SET NULL,
    success             boolean NOT NULL,
    resolution_minutes  double precision NOT NULL DEFAULT 0 CHECK (resolution_minutes >= 0),
    found_via_search    boolean NOT NULL DEFAULT false,
    note                text NOT NULL DEFAULT '',
    applied_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX knowledge_applications_entry_idx ON knowledge_applications (entry_id, applied_at DESC);

-- Embedding models known to the server. Several can hold vectors at once, so
-- a model change re-embeds in the background while the old model still
-- answers queries.
CREATE TABLE embedding_models (
    model       text PRIMARY KEY CHECK (length(model) BETWEEN 1 AND 200),
    provider    text NOT NULL CHECK (provider IN ('local', 'openai', 'hash')),
    dimensions  integer NOT NULL CHECK (dimensions BETWEEN 1 AND 16000),
    created_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO embedding_models (model, provider, dimensions)
VALUES ('local/all-MiniLM-L6-v2', 'local', 384);

-- The vector column is untyped so one table holds every model's dimension.
-- HNSW needs a fixed dimension, so each model gets a partial expression index
-- that casts to its own: queries use `embedding::vector(N)` together with
-- `model = '...'` to hit it. The server creates the index of a model it
-- registers later (lore_ensure_embedding_index).
CREATE TABLE knowledge_embeddings (
    entry_id      uuid NOT NULL REFERENCES knowledge_entries ON DELETE CASCADE,
    model         text NOT NULL REFERENCES embedding_models ON DELETE CASCADE,
    -- Long texts are embedded in chunks; chunk 0 is the pooled whole.
    chunk         integer NOT NULL DEFAULT 0 CHECK (chunk >= 0),
    project       text NOT NULL REFERENCES projects (name),
    -- BLAKE3 of the embedded text: unchanged text is not re-embedded.
    content_hash  bytea NOT NULL,
    embedding     vector NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entry_id, model, chunk)
);

CREATE FUNCTION lore_ensure_embedding_index(model_name text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    dims        integer;
    index_name  text := 'knowledge_embeddings_hnsw_'
                        || substr(md5(model_name), 1, 12);
BEGIN
    SELECT dimensions INTO STRICT dims FROM embedding_models WHERE model = model_name;
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON knowledge_embeddings
             USING hnsw ((embedding::vector(%s)) vector_cosine_ops) WHERE model = %L',
        index_name, dims, model_name);
    RETURN index_name;
END
$$;

SELECT lore_ensure_embedding_index('local/all-MiniLM-L6-v2');

-- Entries waiting for (re-)embedding: new or changed text, a failed provider
-- call to retry, or a model change.
CREATE TABLE knowledge_embedding_jobs (
    entry_id      uuid NOT NULL REFERENCES knowledge_entries ON DELETE CASCADE,
    model         text NOT NULL REFERENCES embedding_models ON DELETE CASCADE,
    project       text NOT NULL REFERENCES projects (name),
    attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error    text NOT NULL DEFAULT '',
    not_before    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entry_id, model)
);
CREATE INDEX knowledge_embedding_jobs_due_idx ON knowledge_embedding_jobs (not_before);

CREATE TABLE knowledge_drafts (
    draft_id     uuid PRIMARY KEY,
    project      text NOT NULL REFERENCES projects (name),
    epic_id      text CHECK (length(epic_id) BETWEEN 1 AND 256),
    session_id   uuid,
    title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 512),
    category     text NOT NULL DEFAULT '',
    body         text NOT NULL DEFAULT '',
    tags         text[] NOT NULL DEFAULT '{}',
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    reviewer     text,
    review_note  text NOT NULL DEFAULT '',
    entry_id     uuid REFERENCES knowledge_entries ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    reviewed_at  timestamptz,
    -- Built from exactly one source.
    CHECK ((epic_id IS NULL) <> (session_id IS NULL)),
    CHECK ((status = 'pending') = (reviewed_at IS NULL))
);
CREATE INDEX knowledge_drafts_project_status_idx
    ON knowledge_drafts (project, status, created_at DESC);
