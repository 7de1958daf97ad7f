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

-- gengate_claim_steps_start is gengate_claim_steps_from (00035) that, in
-- the same statement, writes the start event of each claimed queued task
-- that is a prediction whose filter has start, unless it has one already
-- (a task queued again after a refused submit): the claim moves it out of
-- queued for its submit. gengate_claim_steps_from stays for the processes
-- of the previous release during a rolling upgrade.
-- +goose StatementBegin
CREATE FUNCTION gengate_claim_steps_start(p_token TEXT, p_until BIGINT, p_now BIGINT, p_limit INT)
RETURNS TABLE (t tasks, prev_lease TEXT) LANGUAGE sql
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
WITH picked AS (
    SELECT id, status, lease_token FROM tasks WHERE status IN ('queued','submitting','running') AND run_at <= p_now
        AND lease_until < p_now ORDER BY run_at LIMIT p_limit FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE tasks SET lease_token = p_token, lease_until = p_until, attempts = attempts + 1, updated_at = p_now,
        status = CASE WHEN tasks.status = 'queued' THEN 'submitting' ELSE tasks.status END
    FROM picked WHERE tasks.id = picked.id AND tasks.lease_until < p_now
    RETURNING tasks AS t
), started AS (
    INSERT INTO webhook_events (id, account_id, task_id, url, type, created_at, next_at)
    SELECT 'msg_' || gen_random_uuid()::text, (c.t).account_id, w.task_id, w.url, 'prediction.start', p_now, p_now
    FROM claimed c JOIN picked p ON p.id = (c.t).id JOIN task_webhooks w ON w.task_id = p.id
    WHERE p.status = 'queued' AND ',' || w.events || ',' LIKE '%,start,%'
        AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.task_id = w.task_id AND e.type = 'prediction.start')
)
SELECT jsonb_populate_record(c.t, jsonb_build_object('status', p.status)), p.lease_token FROM claimed c JOIN picked p ON p.id = (c.t).id
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gengate_claim_steps_start;
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
