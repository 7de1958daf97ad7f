-- +goose Up
-- Times are Unix milliseconds in BIGINT columns, the same on both databases.
CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    balance    BIGINT NOT NULL CHECK (balance >= 0),
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    model_id        TEXT NOT NULL,
    type            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('queued','submitting','running','succeeded','failed','needs_review','canceled')),
    prompt          TEXT NOT NULL,
    options         TEXT NOT NULL,
    inputs          TEXT NOT NULL,
    cost            BIGINT NOT NULL CHECK (cost >= 0),
    idempotency_key TEXT,
    fingerprint     TEXT NOT NULL,
    engine          TEXT NOT NULL,
    upstream_id     TEXT NOT NULL DEFAULT '',
    error_code      TEXT NOT NULL DEFAULT '',
    error_message   TEXT NOT NULL DEFAULT '',
    input_fault     INTEGER NOT NULL DEFAULT 0,
    review_reason   TEXT NOT NULL DEFAULT '',
    lease_token     TEXT NOT NULL DEFAULT '',
    lease_until     BIGINT NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    run_at          BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    completed_at    BIGINT NOT NULL DEFAULT 0,
    UNIQUE (account_id, idempotency_key)
);
CREATE INDEX tasks_due ON tasks (run_at) WHERE status IN ('queued','submitting','running');
CREATE INDEX tasks_completed ON tasks (completed_at) WHERE completed_at > 0;
CREATE INDEX tasks_status ON tasks (status, created_at);

-- The ledger is append-only and outlives purged task records. A task is
-- charged at most once and refunded at most once.
CREATE TABLE ledger (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    task_id    TEXT,
    kind       TEXT NOT NULL CHECK (kind IN ('grant','charge','refund','adjustment')),
    amount     BIGINT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    CHECK ((kind IN ('charge','refund')) = (task_id IS NOT NULL))
);
CREATE UNIQUE INDEX ledger_once_per_task ON ledger (task_id, kind) WHERE task_id IS NOT NULL;
CREATE INDEX ledger_account ON ledger (account_id, id);
-- +goose StatementBegin
CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER ledger_no_change BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

-- Creations are finished files; they outlive task records.
CREATE TABLE creations (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    task_id      TEXT NOT NULL,
    idx          INTEGER NOT NULL,
    blob_key     TEXT NOT NULL,
    token        TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    ext          TEXT NOT NULL,
    size         BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    UNIQUE (task_id, idx)
);

-- +goose Down
DROP TABLE creations;
DROP TABLE ledger;
DROP FUNCTION ledger_append_only();
DROP TABLE tasks;
DROP TABLE api_keys;
DROP TABLE accounts;
