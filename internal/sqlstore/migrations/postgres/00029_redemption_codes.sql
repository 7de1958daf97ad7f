-- +goose Up
-- Credits that were sold get their own ledger kinds: a redeemed code, a
-- card top-up, and a top-up taken back when its payment was refunded.
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
    CHECK (kind IN ('grant','charge','refund','adjustment','redemption','purchase','purchase_refund'));

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
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('grant','charge','refund','adjustment'));
