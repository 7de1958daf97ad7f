-- +goose Up
-- Credits that were sold get their own ledger kinds: a redeemed code, a
-- card top-up, and a top-up taken back when its payment was refunded.
-- SQLite cannot change a CHECK constraint, so the ledger is rebuilt with
-- its rows, ids, indexes and append-only triggers.
CREATE TABLE ledger_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    task_id    TEXT,
    kind       TEXT NOT NULL CHECK (kind IN ('grant','charge','refund','adjustment','redemption','purchase','purchase_refund')),
    amount     BIGINT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    CHECK ((kind IN ('charge','refund')) = (task_id IS NOT NULL))
);
INSERT INTO ledger_new (id, account_id, task_id, kind, amount, note, created_at)
    SELECT id, account_id, task_id, kind, amount, note, created_at FROM ledger ORDER BY id;
DROP TABLE ledger;
ALTER TABLE ledger_new RENAME TO ledger;
CREATE UNIQUE INDEX ledger_once_per_task ON ledger (task_id, kind) WHERE task_id IS NOT NULL;
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

-- Redemption codes, by the SHA-256 of the code: used once ever (the
-- conditional UPDATE of redeemed_at and the grant commit together).
CREATE TABLE redemption_codes (
    hash        TEXT PRIMARY KEY,
    credits     BIGINT NOT NULL CHECK (credits > 0),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL DEFAULT 0,
    redeemed_by TEXT REFERENCES accounts (id),
    redeemed_at BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE redemption_codes;
