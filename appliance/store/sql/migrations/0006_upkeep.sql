-- Work that runs once per period for the whole installation (the nightly memory
-- upkeep), whichever node gets there first: a node claims a run by moving
-- started_at forward, which only one transaction can do.
CREATE TABLE upkeep_runs (
    name        text PRIMARY KEY,
    started_at  timestamptz NOT NULL
);
