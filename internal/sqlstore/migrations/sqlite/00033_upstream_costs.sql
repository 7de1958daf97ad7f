-- +goose Up
-- What each succeeded task on a provider cost upstream, beside the credits
-- it was charged: one row per task, written in the transaction that
-- finishes it. micro_usd is millionths of a US dollar, NULL when the
-- provider's cost could not be found (basis says why). Rows are kept
-- apart from tasks so that the 30-day sums outlive task retention.
CREATE TABLE upstream_costs (
    task_id      TEXT PRIMARY KEY,
    model_id     TEXT NOT NULL,
    engine       TEXT NOT NULL,
    upstream     TEXT NOT NULL,
    credits      BIGINT NOT NULL,
    micro_usd    BIGINT,
    basis        TEXT NOT NULL DEFAULT '',
    completed_at BIGINT NOT NULL
);
CREATE INDEX upstream_costs_completed ON upstream_costs (completed_at);

-- +goose Down
DROP TABLE upstream_costs;
