-- name: insert_event
INSERT INTO agenda_events
    (household_id, title, title_key, starts_at, ends_at, all_day, location, timezone, created_by)
VALUES
    (%(household_id)s, %(title)s, %(title_key)s, %(starts_at)s, %(ends_at)s, %(all_day)s,
     %(location)s, %(timezone)s, %(user_id)s)
RETURNING id;

-- name: events_between
SELECT id, title, starts_at, ends_at, all_day, location, timezone
FROM agenda_events
WHERE household_id = %(household_id)s
  AND starts_at < %(until)s
  AND (CASE WHEN ends_at IS NULL THEN starts_at >= %(since)s ELSE ends_at > %(since)s END)
ORDER BY starts_at, id
LIMIT %(limit)s;

-- name: next_event
SELECT id, title, starts_at, ends_at, all_day, location, timezone
FROM agenda_events
WHERE household_id = %(household_id)s AND starts_at >= %(now)s
ORDER BY starts_at, id
LIMIT 1;

-- name: find_events
-- Events whose title matches the words said: the same key, or containing them as
-- whole words ("dentist" finds "Dentist appointment").
SELECT id, title, starts_at, ends_at, all_day, location, timezone
FROM agenda_events
WHERE household_id = %(household_id)s
  AND starts_at >= %(since)s AND starts_at < %(until)s
  AND (title_key = %(key)s OR (' ' || title_key || ' ') LIKE ('%% ' || %(like)s || ' %%'))
ORDER BY (title_key = %(key)s) DESC, starts_at, id
LIMIT 10
FOR UPDATE;

-- name: delete_event
DELETE FROM agenda_events WHERE id = %(id)s;

-- name: move_event
UPDATE agenda_events
SET starts_at = %(starts_at)s, ends_at = %(ends_at)s, all_day = %(all_day)s,
    timezone = %(timezone)s, updated_at = now()
WHERE id = %(id)s;
