-- +goose Up
-- Webhooks of the fal-compatible queue sent as fal sends them (gengate's
-- webhook.go, "fal queue webhooks"; docs/fal.md).
-- task_webhooks.format: 'fal' for a fal queue request's webhook, whose
-- task writes one 'fal.completed' event when it succeeds, fails or is
-- canceled; '' for any other (its events, or a prediction's, by
-- task_webhooks.events). A column of its own, not a value of events, so
-- that a process of the previous release finishing such a task during a
-- rolling upgrade still sends it what that release sent (its final-state
-- event, events being '') rather than nothing.
ALTER TABLE task_webhooks ADD COLUMN format TEXT NOT NULL DEFAULT '';
-- The install's signing keys (gengate's signingkey.go): ED25519 key
-- pairs that sign those webhooks. public_key is the key's 32 bytes in
-- base64url without padding (its JWK "x", published); private_key its
-- seed, sealed under the server key.
CREATE TABLE signing_keys (
    id          TEXT PRIMARY KEY,
    public_key  TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- +goose Down
-- The previous release's form: a fal request's webhook gets gengate's
-- final-state event.
UPDATE webhook_events SET type = CASE (SELECT status FROM tasks WHERE tasks.id = webhook_events.task_id)
    WHEN 'failed' THEN 'generation.failed' WHEN 'canceled' THEN 'generation.canceled' ELSE 'generation.succeeded' END
    WHERE type = 'fal.completed';
ALTER TABLE task_webhooks DROP COLUMN format;
DROP TABLE signing_keys;
