-- +goose Up
-- Webhook delivery fairness and bounds (gengate's webhook.go).
-- webhook_backoff: a delivery target (target: an endpoint's id, or a
-- task's own webhookUrl) that failed: its failures in a row, and until
-- when its events wait. A success deletes the row.
CREATE TABLE webhook_backoff (
    account_id TEXT NOT NULL,
    target     TEXT NOT NULL,
    failures   INTEGER NOT NULL,
    until_at   BIGINT NOT NULL,
    PRIMARY KEY (account_id, target)
);
-- The events being sent, by account: a claim counts an account's
-- deliveries in flight. An attempt's record sets lease_until back to 0,
-- so the index holds only the events in flight (and those of a killed
-- process until they are claimed again).
CREATE INDEX webhook_events_leased ON webhook_events (account_id, endpoint_id, url) WHERE status = 'pending' AND lease_until > 0;
-- An endpoint's events by age: the per-endpoint bound deletes the oldest.
DROP INDEX webhook_events_endpoint;
CREATE INDEX webhook_events_endpoint ON webhook_events (endpoint_id, created_at, id);
-- The events (and attempts) of tasks purged before events went with
-- their tasks.
DELETE FROM webhook_attempts WHERE event_id IN (SELECT e.id FROM webhook_events e
    WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = e.task_id));
DELETE FROM webhook_events WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = webhook_events.task_id);

-- +goose Down
DROP INDEX webhook_events_endpoint;
CREATE INDEX webhook_events_endpoint ON webhook_events (endpoint_id) WHERE endpoint_id <> '';
DROP INDEX webhook_events_leased;
DROP TABLE webhook_backoff;
