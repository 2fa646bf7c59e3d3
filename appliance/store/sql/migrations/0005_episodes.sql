-- Episodes: the diary of recent conversation turns, per user and per site (the room
-- a satellite is in), so a new conversation can pick up where the last one left off
-- (appliance/memory/episodes.py). Each turn is two rows: what the user asked and
-- what the assistant answered, sharing a turn_id.
--
-- Kept apart per user exactly as memories are (0003_memory.sql): read and written as
-- the NOLOGIN role appliance_memory with the user's id in appliance.user, under
-- row-level security that is enabled and FORCEd. A query that forgets its user
-- filter sees one user's entries; with no user set it sees none. See docs/memory.md.

CREATE TABLE episodes (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Where it was said (a satellite's site); NULL: no site (the CLI, a test).
    site     text CHECK (length(site) BETWEEN 1 AND 200),
    turn_id  text NOT NULL CHECK (length(turn_id) BETWEEN 1 AND 200),
    role     text NOT NULL CHECK (role IN ('user', 'assistant')),
    text     text NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    lang     text NOT NULL CHECK (length(lang) <= 35),
    at       timestamptz NOT NULL
);
-- Restoring reads a user's newest entries; purging deletes a user's oldest.
CREATE INDEX episodes_user_at ON episodes (user_id, at);

ALTER TABLE episodes ENABLE ROW LEVEL SECURITY;
ALTER TABLE episodes FORCE ROW LEVEL SECURITY;
CREATE POLICY episodes_of_user ON episodes
    USING (user_id = memory_user()) WITH CHECK (user_id = memory_user());

GRANT SELECT, INSERT, UPDATE, DELETE ON episodes TO appliance_memory;
