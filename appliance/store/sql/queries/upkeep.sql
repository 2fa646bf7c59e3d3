-- name: claim_run
-- The run is ours if none started within min_gap (the first run ever included).
INSERT INTO upkeep_runs (name, started_at)
VALUES (%(name)s, coalesce(%(now)s::timestamptz, now()))
ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at
WHERE upkeep_runs.started_at <= excluded.started_at - %(min_gap)s::interval
RETURNING name;

-- name: last_run
SELECT started_at FROM upkeep_runs WHERE name = %(name)s;
