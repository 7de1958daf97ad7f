-- +goose Up
-- Webhooks (Standard Webhooks; see gengate's webhook.go).
-- task_webhooks: the webhookUrl a task was created with, written with it.
CREATE TABLE task_webhooks (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    url     TEXT NOT NULL
);
-- webhook_secrets: each account's signing secret (whsec_...). Kept as is:
-- an HMAC key cannot be kept as a hash (docs/security.md).
CREATE TABLE webhook_secrets (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- webhook_events: the outbox. A row is written in the transaction that
-- moves its task to a final (or review) state; delivery loops claim due
-- pending rows with a lease (lease_until) and record each attempt.
CREATE TABLE webhook_events (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    task_id      TEXT NOT NULL,
    url          TEXT NOT NULL,
    type         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    lease_until  BIGINT NOT NULL DEFAULT 0,
    last_status  INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    delivered_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX webhook_events_due ON webhook_events (next_at) WHERE status = 'pending';
CREATE INDEX webhook_events_task ON webhook_events (task_id);
CREATE TABLE webhook_attempts (
    id       TEXT PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    n        INTEGER NOT NULL,
    at       BIGINT NOT NULL,
    status   INTEGER NOT NULL,
    error    TEXT NOT NULL
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, n);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_events;
DROP TABLE webhook_secrets;
DROP TABLE task_webhooks;
