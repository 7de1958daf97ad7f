-- +goose Up
-- Card top-ups (Stripe Checkout sessions), one row per paid session: the
-- row and the purchase's ledger grant commit together, so a session's
-- credits are granted once whatever the number of event deliveries.
-- refunded_credits is what the refunds so far call for, taken_back what
-- the balance allowed to take back; the difference is shown to operators.
CREATE TABLE purchases (
    session_id       TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    credits          BIGINT NOT NULL CHECK (credits > 0),
    payment_intent   TEXT NOT NULL DEFAULT '',
    amount_total     BIGINT NOT NULL DEFAULT 0,
    currency         TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    refunded_credits BIGINT NOT NULL DEFAULT 0,
    taken_back       BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX purchases_payment ON purchases (payment_intent) WHERE payment_intent <> '';

-- +goose Down
DROP TABLE purchases;
