-- +goose Up
-- Account webhook endpoints, sealed secrets, rotation and replay (see
-- gengate's webhook_endpoints.go and secretbox.go).
-- Secrets are sealed from now on (AES-256-GCM under the server's
-- --webhook-key); 00007 kept them in clear and was never released, so
-- those are dropped: an account gets a new one on its next use.
DELETE FROM webhook_secrets;
ALTER TABLE webhook_secrets ADD COLUMN previous TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_secrets ADD COLUMN previous_until BIGINT NOT NULL DEFAULT 0;
-- webhook_endpoints: an account's endpoints; event_types is a
-- comma-separated list; secret and previous are sealed.
CREATE TABLE webhook_endpoints (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    event_types    TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    secret         TEXT NOT NULL,
    previous       TEXT NOT NULL DEFAULT '',
    previous_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);
-- endpoint_id: '' for a task's own webhookUrl. schedule_from: the attempt
-- count when the retry schedule last started (a replay restarts it).
ALTER TABLE webhook_events ADD COLUMN endpoint_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN schedule_from INTEGER NOT NULL DEFAULT 0;
CREATE INDEX webhook_events_endpoint ON webhook_events (endpoint_id) WHERE endpoint_id <> '';
CREATE INDEX webhook_attempts_at ON webhook_attempts (at, id);

-- +goose Down
DROP INDEX webhook_attempts_at;
DROP INDEX webhook_events_endpoint;
ALTER TABLE webhook_events DROP COLUMN schedule_from;
ALTER TABLE webhook_events DROP COLUMN endpoint_id;
DROP TABLE webhook_endpoints;
ALTER TABLE webhook_secrets DROP COLUMN previous_until;
ALTER TABLE webhook_secrets DROP COLUMN previous;
