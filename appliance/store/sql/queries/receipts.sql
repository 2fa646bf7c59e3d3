-- name: claim_request
INSERT INTO processed_requests (request_id) VALUES (%(request_id)s)
ON CONFLICT (request_id) DO NOTHING
RETURNING request_id;

-- name: receipt_by_request
SELECT body FROM receipts WHERE request_id = %(request_id)s;

-- name: record_receipt
-- The receipt, its claim and its outbox message, in one statement of the action's
-- transaction.
WITH receipt AS (
    INSERT INTO receipts
        (receipt_id, request_id, action, status, source_kind, user_name, body)
    VALUES
        (%(receipt_id)s, %(request_id)s, %(action)s, %(status)s, %(source_kind)s,
         %(user_name)s, %(body)s::jsonb)
), claim AS (
    UPDATE processed_requests SET receipt_id = %(receipt_id)s
    WHERE request_id = %(request_id)s
)
INSERT INTO outbox (topics, payload, qos, retain, request_id)
VALUES (%(topics)s, %(payload)s, 1, false, %(request_id)s);

-- name: outbox_batch
-- Locked until the batch is deleted: a second node skips it (several nodes, one outbox).
SELECT id, topics, payload, qos, retain, request_id FROM outbox ORDER BY id
LIMIT %(limit)s FOR UPDATE SKIP LOCKED;

-- name: outbox_delete
DELETE FROM outbox WHERE id = ANY(%(ids)s);

-- name: outbox_count
SELECT count(*) FROM outbox;
