-- +goose Up
-- gengate_claim_steps is gengate_claim_tasks for the workers' steps
-- (tasks.go, ClaimSteps): the same selection, and in the same statement
-- the claimed queued tasks move to submitting, the checkpoint before a
-- submit. Before, the claim was a transaction of four round trips (BEGIN,
-- the claim, an UPDATE of the queued ones, COMMIT), and each claimed
-- queued row was updated twice. The rows come back with the status they
-- had before the claim, which the caller needs (a task found in
-- submitting was stopped by a crash mid-submit). The selection is a
-- CTE with its LIMIT and locks, run once (it is read twice); the update
-- finds the rows by primary key.
-- +goose StatementBegin
CREATE FUNCTION gengate_claim_steps(p_token TEXT, p_until BIGINT, p_now BIGINT, p_limit INT)
RETURNS SETOF tasks LANGUAGE sql
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
WITH picked AS (
    SELECT id, status FROM tasks WHERE status IN ('queued','submitting','running') AND run_at <= p_now
        AND lease_until < p_now ORDER BY run_at LIMIT p_limit FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE tasks SET lease_token = p_token, lease_until = p_until, attempts = attempts + 1, updated_at = p_now,
        status = CASE WHEN tasks.status = 'queued' THEN 'submitting' ELSE tasks.status END
    FROM picked WHERE tasks.id = picked.id AND tasks.lease_until < p_now
    RETURNING tasks AS t
)
SELECT (jsonb_populate_record(c.t, jsonb_build_object('status', p.status))).* FROM claimed c JOIN picked p ON p.id = (c.t).id
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gengate_claim_steps;
