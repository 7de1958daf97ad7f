-- +goose Up
-- gengate_claim_steps_from is gengate_claim_steps (00031) that also
-- returns, beside each claimed row, the lease token the row held before
-- the claim: not empty when the claim took over a lease that had run out
-- under another worker (a worker killed or cut off mid-step), which the
-- claiming worker logs and counts. gengate_claim_steps stays for the
-- processes of the previous release during a rolling upgrade.
-- +goose StatementBegin
CREATE FUNCTION gengate_claim_steps_from(p_token TEXT, p_until BIGINT, p_now BIGINT, p_limit INT)
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
)
SELECT jsonb_populate_record(c.t, jsonb_build_object('status', p.status)), p.lease_token FROM claimed c JOIN picked p ON p.id = (c.t).id
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gengate_claim_steps_from;
