-- name: claim_session
INSERT INTO voice_sessions (session_id, site, node_id)
VALUES (%(session_id)s, %(site)s, %(node_id)s)
ON CONFLICT (session_id) DO NOTHING
RETURNING session_id;

-- name: forget_old_sessions
DELETE FROM voice_sessions WHERE claimed_at < now() - interval '1 day';
