-- +goose Up
-- gengate_create_tasks creates a batch of tasks in one round trip and one
-- commit (the store's group commit on PostgreSQL, pgcreate.go). Item i of
-- the arrays is one task, with gengate_create_task's parameters. For each
-- item, in the order given (the store sorts them by account and key, so
-- that two batches take their row locks in the same order), it does what
-- gengate_create_task does: the conditional debit, the key's daily spend,
-- the task row and its charge in the ledger. An item that is not a plain
-- success (its Idempotency-Key is used, the balance or the key's limit
-- does not cover its cost, the key is revoked) writes nothing (a debit
-- already made for it is given back in the same transaction) and does not
-- stop the others: its row has a NULL balance, and the store answers it
-- with the step-by-step transaction. It sends no notification: the store
-- wakes the workers once per batch, after the commit.
-- +goose StatementBegin
CREATE FUNCTION gengate_create_tasks(
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

-- +goose Down
DROP FUNCTION gengate_create_tasks;
