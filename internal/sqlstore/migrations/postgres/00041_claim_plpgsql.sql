-- +goose Up
-- Cuts in PostgreSQL's work per task (docs/notes/postgres-submits.md).
--
-- gengate_claim_steps_plan is gengate_claim_steps_start (00036) in
-- PL/pgSQL. A LANGUAGE sql function that is not inlined parses and plans
-- its body at every call: 0.75 ms of the workers' claim (0.89 ms against
-- 0.13 ms for one that claims nothing, pgbench on a loopback database),
-- where PL/pgSQL keeps the statement's plan for the session. It returns
-- the claimed rows' earlier status in a column of its own instead of
-- rewriting each row through jsonb. gengate_claim_steps_start stays for
-- the processes of the previous release during a rolling upgrade.
--
-- The Idempotency-Key's uniqueness becomes a partial unique index: the
-- table's UNIQUE (account_id, idempotency_key) held an entry for every
-- row version of every task, NULL keys included (one insertion in four
-- for a task without a key, at each of its three versions on its way
-- upstream). The rule is the same: two tasks of an account never share a
-- key. The index build locks writes to tasks while it runs: on a large
-- table, run this migration in a quiet moment (docs/upgrading.md).
-- +goose StatementBegin
CREATE FUNCTION gengate_claim_steps_plan(p_token TEXT, p_until BIGINT, p_now BIGINT, p_limit INT)
RETURNS TABLE (t tasks, prev_lease TEXT, prev_status TEXT) LANGUAGE plpgsql
SET enable_sort = off SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
BEGIN
RETURN QUERY
WITH picked AS (
    SELECT tasks.id, tasks.status, tasks.lease_token FROM tasks
    WHERE tasks.status IN ('queued','submitting','running') AND tasks.run_at <= p_now
        AND tasks.lease_until < p_now ORDER BY tasks.run_at LIMIT p_limit FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE tasks SET lease_token = p_token, lease_until = p_until, attempts = tasks.attempts + 1, updated_at = p_now,
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
SELECT c.t, p.lease_token, p.status FROM claimed c JOIN picked p ON p.id = (c.t).id;
END;
$$;
-- +goose StatementEnd

-- gengate_create_tasks with three more arrays: the lease a task is created
-- with when it is handed straight to a step slot of the process that
-- creates it (gengate's handoff.go), '' / 0 / 0 for a task created
-- queued. The twenty-argument form (00012) stays for the processes of the
-- previous release during a rolling upgrade.
-- +goose StatementBegin
CREATE FUNCTION gengate_create_tasks(
    p_id TEXT[], p_account TEXT[], p_model TEXT[], p_type TEXT[], p_status TEXT[], p_prompt TEXT[],
    p_options TEXT[], p_inputs TEXT[], p_cost BIGINT[], p_key TEXT[], p_fingerprint TEXT[], p_engine TEXT[],
    p_review TEXT[], p_run_at BIGINT[], p_created BIGINT[], p_updated BIGINT[], p_route TEXT[],
    p_key_id TEXT[], p_input_urls TEXT[], p_day BIGINT[],
    p_lease_token TEXT[], p_lease_until BIGINT[], p_attempts INT[])
RETURNS TABLE (item INT, balance BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    n INT := coalesce(array_length(p_id, 1), 0);
    a_id TEXT[];        -- the batch's accounts, locked
    a_bal BIGINT[];     -- their balances as the items are decided
    a_old BIGINT[];
    k_id TEXT[];        -- the batch's API keys, locked
    k_ok BOOLEAN[];     -- not revoked
    k_limit BIGINT[];
    k_spent BIGINT[];   -- spent on k_day, as the items are decided
    k_day BIGINT[];
    k_changed BOOLEAN[];
    used TEXT[];        -- "account key" of the Idempotency-Keys taken
    ok BOOLEAN[] := array_fill(false, ARRAY[n]);
    bal BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
    a INT;
    k INT;
    v_spent BIGINT;
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}'), coalesce(array_agg(x.balance ORDER BY x.id), '{}')
        INTO a_id, a_bal
        FROM (SELECT acc.id, acc.balance FROM accounts acc WHERE acc.id = ANY(p_account) ORDER BY acc.id FOR UPDATE) x;
    a_old := a_bal;
    SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}'), coalesce(array_agg(x.revoked_at = 0 ORDER BY x.id), '{}'),
            coalesce(array_agg(x.spend_limit ORDER BY x.id), '{}'), coalesce(array_agg(x.spent ORDER BY x.id), '{}'),
            coalesce(array_agg(x.spent_day ORDER BY x.id), '{}')
        INTO k_id, k_ok, k_limit, k_spent, k_day
        FROM (SELECT ak.id, ak.revoked_at, ak.spend_limit, ak.spent, ak.spent_day FROM api_keys ak
            WHERE ak.id = ANY(p_key_id) ORDER BY ak.id FOR UPDATE) x;
    k_changed := array_fill(false, ARRAY[coalesce(array_length(k_id, 1), 0) + 1]);
    -- Read after the locks: a batch of the same account that committed
    -- before them is seen.
    SELECT coalesce(array_agg(t.account_id || ' ' || t.idempotency_key), '{}') INTO used
        FROM tasks t, unnest(p_account, p_key) u(acc, ikey)
        WHERE u.ikey IS NOT NULL AND t.account_id = u.acc AND t.idempotency_key = u.ikey;
    FOR i IN 1 .. n LOOP
        IF p_key[i] IS NOT NULL AND (p_account[i] || ' ' || p_key[i]) = ANY(used) THEN
            CONTINUE;
        END IF;
        a := array_position(a_id, p_account[i]);
        IF a IS NULL OR a_bal[a] < p_cost[i] THEN
            CONTINUE;
        END IF;
        IF p_key_id[i] <> '' THEN
            k := array_position(k_id, p_key_id[i]);
            IF k IS NULL OR NOT k_ok[k] THEN
                CONTINUE;
            END IF;
            v_spent := CASE WHEN k_day[k] = p_day[i] THEN k_spent[k] ELSE 0 END;
            IF k_limit[k] <> 0 AND v_spent + p_cost[i] > k_limit[k] THEN
                CONTINUE;
            END IF;
            k_spent[k] := v_spent + p_cost[i];
            k_day[k] := p_day[i];
            k_changed[k] := true;
        END IF;
        a_bal[a] := a_bal[a] - p_cost[i];
        ok[i] := true;
        bal[i] := a_bal[a];
        IF p_key[i] IS NOT NULL THEN
            used := used || (p_account[i] || ' ' || p_key[i]);
        END IF;
    END LOOP;
    UPDATE accounts acc SET balance = u.bal
        FROM unnest(a_id, a_bal, a_old) u(id, bal, old)
        WHERE acc.id = u.id AND u.bal <> u.old;
    UPDATE api_keys ak SET spent = u.spent, spent_day = u.day
        FROM unnest(k_id, k_spent, k_day, k_changed[1:coalesce(array_length(k_id, 1), 0)]) u(id, spent, day, changed)
        WHERE ak.id = u.id AND u.changed;
    INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost,
        idempotency_key, fingerprint, engine, review_reason, run_at, created_at, updated_at, route, key_id, input_urls,
        lease_token, lease_until, attempts)
        SELECT p_id[i], p_account[i], p_model[i], p_type[i], p_status[i], p_prompt[i], p_options[i], p_inputs[i], p_cost[i],
            p_key[i], p_fingerprint[i], p_engine[i], p_review[i], p_run_at[i], p_created[i], p_updated[i], p_route[i],
            p_key_id[i], p_input_urls[i], p_lease_token[i], p_lease_until[i], p_attempts[i]
        FROM generate_subscripts(p_id, 1) i WHERE ok[i] ORDER BY i;
    INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at)
        SELECT p_account[i], p_id[i], 'charge', -p_cost[i], p_model[i], p_created[i]
        FROM generate_subscripts(p_id, 1) i WHERE ok[i] ORDER BY i;
    RETURN QUERY SELECT i, bal[i] FROM generate_subscripts(p_id, 1) i ORDER BY i;
END;
$$;
-- +goose StatementEnd

ALTER TABLE tasks DROP CONSTRAINT tasks_account_id_idempotency_key_key;
CREATE UNIQUE INDEX tasks_idempotency ON tasks (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- +goose Down
DROP INDEX tasks_idempotency;
ALTER TABLE tasks ADD CONSTRAINT tasks_account_id_idempotency_key_key UNIQUE (account_id, idempotency_key);
DROP FUNCTION gengate_claim_steps_plan;
DROP FUNCTION gengate_create_tasks(TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[],
    TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], BIGINT[], INT[]);
