-- name: ensure_household
WITH ins AS (
    INSERT INTO households (name) VALUES (%(name)s)
    ON CONFLICT (name) DO NOTHING
    RETURNING id
)
SELECT id FROM ins UNION ALL SELECT id FROM households WHERE name = %(name)s LIMIT 1;

-- name: ensure_user
WITH ins AS (
    INSERT INTO users (household_id, name) VALUES (%(household_id)s, %(name)s)
    ON CONFLICT (name) DO NOTHING
    RETURNING id, household_id
)
SELECT id, household_id FROM ins
UNION ALL SELECT id, household_id FROM users WHERE name = %(name)s LIMIT 1;

-- name: ensure_list
WITH ins AS (
    INSERT INTO shopping_lists (household_id, name) VALUES (%(household_id)s, %(name)s)
    ON CONFLICT (household_id, name) DO NOTHING
    RETURNING id
)
SELECT id FROM ins
UNION ALL SELECT id FROM shopping_lists WHERE household_id = %(household_id)s AND name = %(name)s
LIMIT 1;
