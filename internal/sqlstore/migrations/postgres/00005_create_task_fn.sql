-- +goose Up
-- gengate_create_task creates a task in one round trip: the conditional
-- debit, the key's daily spend (the same rule as spendKey in keys.go), the
-- task row, its charge in the ledger and the work notification, in the
-- statement that calls it, so all or nothing. It returns the new balance.
-- When the request is not a plain success (the Idempotency-Key is used,
-- the balance or the key's limit does not cover the cost, the key is
-- revoked) it raises GG001 and changes nothing: the store then runs the
-- step-by-step transaction, which tells these cases apart.
-- +goose StatementBegin
CREATE FUNCTION gengate_create_task(
    p_id TEXT, p_account TEXT, p_model TEXT, p_type TEXT, p_status TEXT, p_prompt TEXT,
    p_options TEXT, p_inputs TEXT, p_cost BIGINT, p_key TEXT, p_fingerprint TEXT, p_engine TEXT,
    p_review TEXT, p_run_at BIGINT, p_created BIGINT, p_updated BIGINT, p_route TEXT,
    p_key_id TEXT, p_input_urls TEXT, p_day BIGINT)
RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    v_balance BIGINT;
BEGIN
    IF p_key IS NOT NULL AND EXISTS (SELECT 1 FROM tasks WHERE account_id = p_account AND idempotency_key = p_key) THEN
        RAISE EXCEPTION 'idempotency key in use' USING ERRCODE = 'GG001';
    END IF;
    UPDATE accounts SET balance = balance - p_cost WHERE id = p_account AND balance >= p_cost
        RETURNING balance INTO v_balance;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'balance does not cover the cost' USING ERRCODE = 'GG001';
    END IF;
    IF p_key_id <> '' THEN
        UPDATE api_keys
            SET spent = CASE WHEN spent_day = p_day THEN spent + p_cost ELSE p_cost END, spent_day = p_day
            WHERE id = p_key_id AND revoked_at = 0
            AND (spend_limit = 0 OR (CASE WHEN spent_day = p_day THEN spent ELSE 0 END) + p_cost <= spend_limit);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'key refused' USING ERRCODE = 'GG001';
        END IF;
    END IF;
    INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost,
        idempotency_key, fingerprint, engine, review_reason, run_at, created_at, updated_at, route, key_id, input_urls)
        VALUES (p_id, p_account, p_model, p_type, p_status, p_prompt, p_options, p_inputs, p_cost,
        p_key, p_fingerprint, p_engine, p_review, p_run_at, p_created, p_updated, p_route, p_key_id, p_input_urls);
    INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at)
        VALUES (p_account, p_id, 'charge', -p_cost, p_model, p_created);
    PERFORM pg_notify('gengate_work', p_id);
    RETURN v_balance;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION gengate_create_task;
