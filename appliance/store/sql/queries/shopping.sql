-- name: find_item
-- The item of this key, written with or without its spaces and hyphens: "corn flakes",
-- "cornflakes" and "corn-flakes" are one item, however Whisper spelled it the first time.
SELECT id, name, quantity, unit, completed
FROM shopping_items
WHERE list_id = %(list_id)s AND translate(key, ' -', '') = translate(%(key)s, ' -', '')
ORDER BY key = %(key)s DESC, id
LIMIT 1
FOR UPDATE;

-- name: peek_item
SELECT id, name, quantity, unit, completed
FROM shopping_items
WHERE list_id = %(list_id)s AND translate(key, ' -', '') = translate(%(key)s, ' -', '')
ORDER BY key = %(key)s DESC, id
LIMIT 1;

-- name: insert_item
INSERT INTO shopping_items (list_id, name, key, quantity, unit, added_by)
VALUES (%(list_id)s, %(name)s, %(key)s, %(quantity)s, %(unit)s, %(user_id)s)
RETURNING id;

-- name: reopen_item
UPDATE shopping_items
SET name = %(name)s, quantity = %(quantity)s, unit = %(unit)s, completed = false,
    completed_by = NULL, completed_at = NULL, added_by = %(user_id)s, added_at = now(),
    updated_at = now()
WHERE id = %(id)s;

-- name: set_quantity
UPDATE shopping_items
SET quantity = %(quantity)s, unit = %(unit)s, updated_at = now()
WHERE id = %(id)s;

-- name: set_completed
UPDATE shopping_items
SET completed = %(completed)s,
    completed_by = CASE WHEN %(completed)s THEN %(user_id)s::bigint END,
    completed_at = CASE WHEN %(completed)s THEN now() END,
    updated_at = now()
WHERE id = %(id)s;

-- name: delete_item
DELETE FROM shopping_items WHERE id = %(id)s;

-- name: list_items
SELECT name, quantity, unit, completed
FROM shopping_items
WHERE list_id = %(list_id)s AND (%(include_completed)s OR NOT completed)
ORDER BY completed, added_at, id
LIMIT %(limit)s;

-- name: count_open
SELECT count(*) FROM shopping_items WHERE list_id = %(list_id)s AND NOT completed;

-- name: clear_completed
DELETE FROM shopping_items
WHERE list_id = %(list_id)s AND completed
RETURNING name, quantity, unit, completed;

-- name: clear_all
DELETE FROM shopping_items
WHERE list_id = %(list_id)s
RETURNING id, name, quantity, unit, completed;

-- name: known_names
-- Items on the list now or before, newest first: the vocabulary speech recognition
-- is biased toward.
SELECT name FROM shopping_items WHERE list_id = %(list_id)s ORDER BY updated_at DESC LIMIT %(limit)s;
