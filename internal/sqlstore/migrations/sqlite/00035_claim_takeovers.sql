-- +goose Up
-- PostgreSQL's 00035 adds gengate_claim_steps_from, the workers' claim
-- that also returns the lease it took over. SQLite reads that lease in
-- the writer's claim transaction (claimread.go). This migration only
-- keeps both databases at one schema version.
SELECT 1;

-- +goose Down
SELECT 1;
