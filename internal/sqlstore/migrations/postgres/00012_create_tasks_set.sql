-- +goose Up
-- gengate_create_tasks, the batch of task creations (pgcreate.go), does its
-- work a set at a time instead of five statements per item: the account
-- rows of the batch, then its API keys, are locked once each (in id order,
-- so that two batches never deadlock); the items are decided in memory, in
-- the order given, by the rules of 00011 (a used Idempotency-Key, also one
-- an earlier item of the batch created; the conditional debit; the key's
-- daily spend, with its debit given back when the key refuses); then one
-- UPDATE per table writes the balances and the keys' spend, and one INSERT
-- each writes the created tasks and their charges. Same answers, one row
-- per item (balance NULL for an item not created), far fewer statements
-- and row versions while the account's row is locked: PostgreSQL holds
-- that lock until the commit is flushed, so every batch of an account
-- waits for the previous one's whole run.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION gengate_create_tasks(
    p_id TEXT[], p_account TEXT[], p_model TEXT[], p_type TEXT[], p_status TEXT[], p_prompt TEXT[],
    p_options TEXT[], p_inputs TEXT[], p_cost BIGINT[], p_key TEXT[], p_fingerprint TEXT[], p_engine TEXT[],
    p_review TEXT[], p_run_at BIGINT[], p_created BIGINT[], p_updated BIGINT[], p_route TEXT[],
    p_key_id TEXT[], p_input_urls TEXT[], p_day BIGINT[])
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
        idempotency_key, fingerprint, engine, review_reason, run_at, created_at, updated_at, route, key_id, input_urls)
        SELECT p_id[i], p_account[i], p_model[i], p_type[i], p_status[i], p_prompt[i], p_options[i], p_inputs[i], p_cost[i],
            p_key[i], p_fingerprint[i], p_engine[i], p_review[i], p_run_at[i], p_created[i], p_updated[i], p_route[i],
            p_key_id[i], p_input_urls[i]
        FROM generate_subscripts(p_id, 1) i WHERE ok[i] ORDER BY i;
    INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at)
        SELECT p_account[i], p_id[i], 'charge', -p_cost[i], p_model[i], p_created[i]
        FROM generate_subscripts(p_id, 1) i WHERE ok[i] ORDER BY i;
    RETURN QUERY SELECT i, bal[i] FROM generate_subscripts(p_id, 1) i ORDER BY i;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION gengate_create_tasks(
    p_id TEXT[], p_account TEXT[], p_model TEXT[], p_type TEXT[], p_status TEXT[], p_prompt TEXT[],
    p_options TEXT[], p_inputs TEXT[], p_cost BIGINT[], p_key TEXT[], p_fingerprint TEXT[], p_engine TEXT[],
    p_review TEXT[], p_run_at BIGINT[], p_created BIGINT[], p_updated BIGINT[], p_route TEXT[],
    p_key_id TEXT[], p_input_urls TEXT[], p_day BIGINT[])
RETURNS TABLE (item INT, balance BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    v_balance BIGINT;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_id, 1), 0) LOOP
        item := i;
        balance := NULL;
        IF p_key[i] IS NOT NULL AND EXISTS (SELECT 1 FROM tasks WHERE account_id = p_account[i] AND idempotency_key = p_key[i]) THEN
            RETURN NEXT;
            CONTINUE;
        END IF;
        UPDATE accounts SET balance = accounts.balance - p_cost[i] WHERE id = p_account[i] AND accounts.balance >= p_cost[i]
            RETURNING accounts.balance INTO v_balance;
        IF NOT FOUND THEN
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF p_key_id[i] <> '' THEN
            UPDATE api_keys
                SET spent = CASE WHEN spent_day = p_day[i] THEN spent + p_cost[i] ELSE p_cost[i] END, spent_day = p_day[i]
                WHERE id = p_key_id[i] AND revoked_at = 0
                AND (spend_limit = 0 OR (CASE WHEN spent_day = p_day[i] THEN spent ELSE 0 END) + p_cost[i] <= spend_limit);
            IF NOT FOUND THEN
                UPDATE accounts SET balance = accounts.balance + p_cost[i] WHERE id = p_account[i];
                RETURN NEXT;
                CONTINUE;
            END IF;
        END IF;
        INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost,
            idempotency_key, fingerprint, engine, review_reason, run_at, created_at, updated_at, route, key_id, input_urls)
            VALUES (p_id[i], p_account[i], p_model[i], p_type[i], p_status[i], p_prompt[i], p_options[i], p_inputs[i], p_cost[i],
            p_key[i], p_fingerprint[i], p_engine[i], p_review[i], p_run_at[i], p_created[i], p_updated[i], p_route[i],
            p_key_id[i], p_input_urls[i]);
        INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at)
            VALUES (p_account[i], p_id[i], 'charge', -p_cost[i], p_model[i], p_created[i]);
        balance := v_balance;
        RETURN NEXT;
    END LOOP;
END;
$$;
-- +goose StatementEnd
