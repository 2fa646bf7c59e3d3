-- Households, users, the shopping list, the agenda, receipts (the audit log),
-- processed request ids and the outbox.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE households (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households (id),
    name          text NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shopping_lists (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households (id),
    name          text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (household_id, name)
);

-- One row per item of a list: checking an item off keeps the row (completed), adding
-- it again reopens it. "key" is the matching form (appliance.actions.items.item_key).
CREATE TABLE shopping_items (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    list_id       bigint NOT NULL REFERENCES shopping_lists (id) ON DELETE CASCADE,
    name          text NOT NULL,
    key           text NOT NULL,
    quantity      numeric(12, 3) CHECK (quantity IS NULL OR quantity > 0),
    unit          text,
    completed     boolean NOT NULL DEFAULT false,
    added_by      bigint REFERENCES users (id),
    added_at      timestamptz NOT NULL DEFAULT now(),
    completed_by  bigint REFERENCES users (id),
    completed_at  timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (list_id, key)
);

CREATE TABLE agenda_events (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    household_id  bigint NOT NULL REFERENCES households (id),
    title         text NOT NULL,
    title_key     text NOT NULL,
    starts_at     timestamptz NOT NULL,
    ends_at       timestamptz,
    all_day       boolean NOT NULL DEFAULT false,
    location      text,
    timezone      text NOT NULL,
    created_by    bigint REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (ends_at IS NULL OR ends_at >= starts_at)
);
CREATE INDEX agenda_events_household_start ON agenda_events (household_id, starts_at);
CREATE INDEX agenda_events_title_key ON agenda_events (household_id, title_key);

-- The audit log: every receipt the node ever gave, exactly as it was published.
CREATE TABLE receipts (
    receipt_id    uuid PRIMARY KEY,
    request_id    text NOT NULL UNIQUE,
    action        text,
    status        text NOT NULL,
    source_kind   text NOT NULL,
    user_name     text NOT NULL,
    body          jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX receipts_created_at ON receipts (created_at);

-- A request id is claimed first thing in the action's transaction; a second
-- delivery of the same id finds the claim and answers with the original receipt.
CREATE TABLE processed_requests (
    request_id    text PRIMARY KEY,
    receipt_id    uuid,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Messages written in the same transaction as the change they report; a publisher
-- drains them to MQTT (at least once) and deletes them once the broker has them.
CREATE TABLE outbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topics        text[] NOT NULL,
    payload       bytea NOT NULL,
    qos           smallint NOT NULL DEFAULT 1,
    retain        boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);
