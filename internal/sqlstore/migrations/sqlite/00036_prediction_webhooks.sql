-- +goose Up
-- Webhooks of the Replicate-compatible API's predictions (gengate's
-- webhook.go, "Prediction events"; docs/replicate.md).
-- task_webhooks.events: a prediction's webhook_events_filter
-- ("start,output,logs,completed", in that order), its webhookUrl getting
-- those events; '' for any other task (its final-state events).
-- webhook_events.logs: a prediction's log lines when its start or logs
-- event was written, which its body shows.
ALTER TABLE task_webhooks ADD COLUMN events TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN logs TEXT NOT NULL DEFAULT '';
-- The previous release marked a prediction's webhookUrl with the fragment
-- #gengate-replicate-prediction instead (never sent over HTTP), with its
-- final-state events only: such rows stay as they are, and are still sent
-- as the prediction (httpapi.WebhookBody), so that a process of either
-- release serves them during a rolling upgrade.

-- +goose Down
-- The previous release's form: the mark, and final-state events only.
UPDATE webhook_events SET url = url || '#gengate-replicate-prediction',
    type = CASE (SELECT status FROM tasks WHERE tasks.id = webhook_events.task_id)
        WHEN 'failed' THEN 'generation.failed' WHEN 'canceled' THEN 'generation.canceled' ELSE 'generation.succeeded' END
    WHERE type = 'prediction.completed';
DELETE FROM webhook_attempts WHERE event_id IN (SELECT id FROM webhook_events WHERE type LIKE 'prediction.%');
DELETE FROM webhook_events WHERE type LIKE 'prediction.%';
DELETE FROM task_webhooks WHERE events <> '' AND ',' || events || ',' NOT LIKE '%,completed,%';
UPDATE task_webhooks SET url = url || '#gengate-replicate-prediction' WHERE events <> '';
ALTER TABLE webhook_events DROP COLUMN logs;
ALTER TABLE task_webhooks DROP COLUMN events;
