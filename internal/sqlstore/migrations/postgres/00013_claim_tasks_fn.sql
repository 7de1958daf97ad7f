-- +goose Up
-- gengate_claim_tasks is the claim of up to p_limit due tasks (tasks.go,
-- claimDue): the selection walks the partial index tasks_due by due time
-- and stops after the rows it needs, locking them (SKIP LOCKED), and the
-- update leases them, found by id. It is a function for its settings
-- alone: without them the plan depended on the statistics. A table that
-- grew faster than autovacuum analyzes it (any new database under load)
-- made PostgreSQL estimate a handful of due rows, read every due task
-- with a bitmap scan and sort them all at every claim, and intersect the
-- claimed ids with the whole index of active tasks: a claim's cost grew
-- with the backlog (TestClaimPlan). Sorting and bitmap and sequential
-- scans are turned off inside the function only, so the ordered walk of
-- tasks_due and the primary key are the only plans left.
-- +goose StatementBegin
CREATE FUNCTION gengate_claim_tasks(p_token TEXT, p_until BIGINT, p_now BIGINT, p_limit INT)
RETURNS SETOF tasks LANGUAGE sql
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
UPDATE tasks SET lease_token = p_token, lease_until = p_until, attempts = attempts + 1, updated_at = p_now
    WHERE id = ANY(ARRAY(SELECT id FROM tasks WHERE status IN ('queued','submitting','running') AND run_at <= p_now
        AND lease_until < p_now ORDER BY run_at LIMIT p_limit FOR UPDATE SKIP LOCKED))
    AND lease_until < p_now
    RETURNING *
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gengate_claim_tasks;
