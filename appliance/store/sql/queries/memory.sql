-- Memories: the repository appliance/memory/repository.py owns these.
-- Every query after enter_scope runs as appliance_memory under row-level security;
-- the user filters below are the first line, the policies the guarantee.
-- "now" parameters are NULL except in tests: then the database's clock is used.

-- name: find_user
SELECT id FROM users WHERE name = %(name)s;

-- name: all_users
SELECT id, name FROM users ORDER BY id;

-- name: enter_scope
-- For the rest of this transaction: the memory role, and the user it may see.
SELECT set_config('role', 'appliance_memory', true),
       set_config('appliance.user', coalesce(%(user_id)s::bigint::text, ''), true);

-- name: leave_scope
SELECT set_config('role', 'none', true), set_config('appliance.user', '', true);

-- name: search_options
-- A filtered HNSW scan (the policy, superseded_at) keeps going until it has found
-- LIMIT rows, in exact distance order (pgvector >= 0.8).
SELECT set_config('hnsw.iterative_scan', 'strict_order', true);

-- name: index_state
SELECT model, dimension, next_model, next_dimension FROM memory_index;

-- name: share_index
-- Writes and searches hold this until commit: a reindex cannot swap the column
-- under them (it waits), nor they start on the old model once it has swapped.
SELECT model, dimension, next_model, next_dimension FROM memory_index FOR SHARE;

-- name: lock_user
-- One write at a time per user: the gate's decision holds until commit.
SELECT pg_advisory_xact_lock(1835363695, %(user_id)s::int);

-- name: neighbours
SELECT id, text,
       1 - (embedding <=> %(embedding)s::vector) AS similarity,
       1 - (embedding <=> %(neutral)s::vector) AS neutral_similarity
FROM memories
WHERE user_id = %(user_id)s AND kind = %(kind)s AND superseded_at IS NULL
ORDER BY embedding <=> %(embedding)s::vector
LIMIT %(limit)s;

-- name: count_recent
SELECT count(*) FROM memories
WHERE user_id = %(user_id)s
  AND created_at > coalesce(%(now)s::timestamptz, now()) - interval '24 hours';

-- name: insert_memory
INSERT INTO memories
    (user_id, kind, text, source, source_ref, importance, created_at, decayed_at,
     embedding_model, embedding_dim, embedding)
VALUES
    (%(user_id)s, %(kind)s, %(text)s, %(source)s, %(source_ref)s, %(importance)s,
     coalesce(%(now)s::timestamptz, now()), coalesce(%(now)s::timestamptz, now()),
     %(model)s, %(dimension)s, %(embedding)s::vector)
RETURNING id;

-- name: set_importance
UPDATE memories SET importance = %(importance)s
WHERE user_id = %(user_id)s AND id = %(id)s AND superseded_at IS NULL
RETURNING id;

-- name: supersede
UPDATE memories
SET superseded_at = coalesce(%(now)s::timestamptz, now()), superseded_by = %(by)s
WHERE user_id = %(user_id)s AND id = ANY(%(ids)s) AND superseded_at IS NULL;

-- name: reinforce
-- Decay up to now first, then add the boost (capped): the same arithmetic whether or
-- not a maintenance run came in between.
WITH rate AS (
    SELECT * FROM unnest(%(kinds)s::text[], %(rates)s::float8[]) AS r (kind, per_day)
), t AS (
    SELECT coalesce(%(now)s::timestamptz, now()) AS now
)
UPDATE memories AS m
SET strength = least(%(max_strength)s::float8,
                     memory_decayed(m.strength, rate.per_day,
                                    extract(epoch FROM t.now - m.decayed_at))
                     + %(boost)s::float8),
    decayed_at = greatest(m.decayed_at, t.now),
    reinforcements = m.reinforcements + 1,
    last_reinforced_at = t.now,
    last_accessed_at = CASE WHEN %(accessed)s THEN t.now ELSE m.last_accessed_at END,
    importance = greatest(m.importance, coalesce(%(importance)s::smallint, m.importance))
FROM rate, t
WHERE m.user_id = %(user_id)s AND m.id = ANY(%(ids)s) AND m.superseded_at IS NULL
  AND m.kind = rate.kind
RETURNING m.id;

-- name: decay
WITH rate AS (
    SELECT * FROM unnest(%(kinds)s::text[], %(rates)s::float8[]) AS r (kind, per_day)
), t AS (
    SELECT coalesce(%(now)s::timestamptz, now()) AS now
)
UPDATE memories AS m
SET strength = memory_decayed(m.strength, rate.per_day,
                              extract(epoch FROM t.now - m.decayed_at)),
    decayed_at = t.now
FROM rate, t
WHERE m.user_id = %(user_id)s AND m.kind = rate.kind AND m.decayed_at < t.now;

-- name: list_memories
SELECT id, kind, text, source, source_ref, importance, strength, reinforcements,
       created_at, last_accessed_at, last_reinforced_at, superseded_at, superseded_by,
       embedding_model, embedding_dim
FROM memories
WHERE user_id = %(user_id)s
  AND (%(include_superseded)s OR superseded_at IS NULL)
  AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s;

-- name: get_memory
SELECT id, kind, text, source, source_ref, importance, strength, reinforcements,
       created_at, last_accessed_at, last_reinforced_at, superseded_at, superseded_by,
       embedding_model, embedding_dim
FROM memories
WHERE user_id = %(user_id)s AND id = %(id)s;

-- name: delete_memory
DELETE FROM memories WHERE user_id = %(user_id)s AND id = %(id)s RETURNING id;

-- name: search_vector
-- An exact scan of this user's own rows (found through the (user_id, created_at)
-- index): one member of a household has thousands of memories at most, and exact
-- distances over them cost a few milliseconds, where a filtered HNSW scan over the
-- whole household's graph cost ten times more at 100,000 memories and had to be told
-- to go on past other users' rows (bench/results/memory.json). MATERIALIZED keeps the
-- planner from ordering by the HNSW index instead.
WITH mine AS MATERIALIZED (
    SELECT id, kind, text, source, source_ref, importance, strength, reinforcements,
           created_at, last_accessed_at, last_reinforced_at, superseded_at, superseded_by,
           embedding_model, embedding_dim, embedding <=> %(embedding)s::vector AS distance
    FROM memories
    WHERE user_id = %(user_id)s AND superseded_at IS NULL
)
SELECT * FROM mine WHERE distance <= %(max_distance)s ORDER BY distance, id
LIMIT %(limit)s;

-- name: search_terms
-- %(query)s is a tsquery of prefix terms ("cafe:* | leite:*") built from words only.
SELECT id, kind, text, source, source_ref, importance, strength, reinforcements,
       created_at, last_accessed_at, last_reinforced_at, superseded_at, superseded_by,
       embedding_model, embedding_dim, ts_rank(search_tsv, q) AS rank
FROM memories, to_tsquery('simple', memory_fold(%(query)s)) AS q
WHERE user_id = %(user_id)s AND superseded_at IS NULL AND search_tsv @@ q
ORDER BY rank DESC, importance * strength DESC, id DESC
LIMIT %(limit)s;

-- name: profile_candidates
SELECT id, kind, text, importance, strength
FROM memories
WHERE user_id = %(user_id)s AND superseded_at IS NULL
ORDER BY importance * strength DESC, created_at DESC, id DESC
LIMIT %(limit)s;

-- name: save_profile
INSERT INTO memory_profiles (user_id, text, memory_ids, built_at)
VALUES (%(user_id)s, %(text)s, %(memory_ids)s, coalesce(%(now)s::timestamptz, now()))
ON CONFLICT (user_id) DO UPDATE
SET text = excluded.text, memory_ids = excluded.memory_ids, built_at = excluded.built_at
RETURNING built_at;

-- name: get_profile
SELECT text, memory_ids, built_at FROM memory_profiles WHERE user_id = %(user_id)s;

-- Reindexing (appliance/memory/reindex.py) ---------------------------------------

-- name: lock_index
SELECT model, dimension, next_model, next_dimension FROM memory_index FOR UPDATE;

-- name: no_statement_timeout
SELECT set_config('statement_timeout', '0', true);

-- name: drop_next_column
ALTER TABLE memories DROP COLUMN IF EXISTS embedding_next;

-- name: cancel_reindex
UPDATE memory_index SET next_model = NULL, next_dimension = NULL, updated_at = now();

-- name: add_next_column
-- {dimension} is the new model's dimension (an integer the code checked), composed
-- with psycopg.sql: a type modifier cannot be a bound parameter.
ALTER TABLE memories ADD COLUMN embedding_next vector({dimension});

-- name: begin_reindex
UPDATE memory_index
SET next_model = %(model)s, next_dimension = %(dimension)s, updated_at = now();

-- name: pending_embeddings
SELECT id, text FROM memories
WHERE user_id = %(user_id)s AND embedding_next IS NULL
ORDER BY id
LIMIT %(limit)s;

-- name: set_next_embeddings
UPDATE memories AS m
SET embedding_next = v.embedding::vector
FROM unnest(%(ids)s::bigint[], %(embeddings)s::text[]) AS v (id, embedding)
WHERE m.user_id = %(user_id)s AND m.id = v.id AND m.embedding_next IS NULL;

-- name: set_row_model
UPDATE memories SET embedding_model = %(model)s, embedding_dim = %(dimension)s
WHERE user_id = %(user_id)s;

-- name: lock_memories
-- Taken after memory_index's row lock, the order writers take them in.
LOCK TABLE memories IN ACCESS EXCLUSIVE MODE;

-- name: swap_embedding_column
-- Every row has embedding_next (SET NOT NULL checks it, whatever RLS would show).
DROP INDEX memories_embedding;
ALTER TABLE memories DROP COLUMN embedding;
ALTER TABLE memories RENAME COLUMN embedding_next TO embedding;
ALTER TABLE memories ALTER COLUMN embedding SET NOT NULL;
CREATE INDEX memories_embedding ON memories
    USING hnsw (embedding vector_cosine_ops) WHERE superseded_at IS NULL;

-- name: finish_reindex
UPDATE memory_index
SET model = %(model)s, dimension = %(dimension)s, next_model = NULL,
    next_dimension = NULL, updated_at = now();
