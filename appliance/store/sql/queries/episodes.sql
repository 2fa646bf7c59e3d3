-- Episodes (the conversation diary): appliance/memory/episodes.py owns these.
-- Every query runs after enter_scope (queries/memory.sql) as appliance_memory under
-- row-level security; the user filters below are for the planner, the policy is
-- the guarantee.

-- name: insert_turn
-- One turn's entries (the question, and the answer when there is one), in order.
INSERT INTO episodes (user_id, site, turn_id, role, text, lang, at)
SELECT %(user_id)s, %(site)s::text, %(turn_id)s, entry.role, entry.text, %(lang)s, entry.at
FROM unnest(%(roles)s::text[], %(texts)s::text[], %(ats)s::timestamptz[])
     WITH ORDINALITY AS entry (role, text, at, n)
ORDER BY entry.n;

-- name: recent
-- The newest entries of one site (NULL: the entries without a site) in the window,
-- newest first.
SELECT role, text, at, lang, turn_id, site
FROM episodes
WHERE user_id = %(user_id)s
  AND site IS NOT DISTINCT FROM %(site)s::text
  AND at >= %(since)s AND at <= %(now)s
ORDER BY at DESC, id DESC
LIMIT %(limit)s;

-- name: purge
DELETE FROM episodes WHERE user_id = %(user_id)s AND at < %(before)s;
