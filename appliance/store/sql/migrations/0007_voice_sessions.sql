-- Which node took a voice session. Every node hears every wake claim; the one that
-- inserts the session's row runs it, the others let it go. Rows older than a day
-- are deleted as new ones come.
CREATE TABLE voice_sessions (
    session_id  text PRIMARY KEY,
    site        text NOT NULL,
    node_id     text NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voice_sessions_claimed_at ON voice_sessions (claimed_at);
