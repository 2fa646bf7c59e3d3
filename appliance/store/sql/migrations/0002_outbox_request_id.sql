-- The request an outbox message answers, so a caller (a voice turn) can learn when
-- its receipt reached the broker. NULL for messages that answer no request.
ALTER TABLE outbox ADD COLUMN request_id text;
