-- +goose Up
-- PostgreSQL's 00031 adds gengate_claim_steps, the workers' claim and its
-- checkpoint in one statement. SQLite has no functions: its claim runs on
-- the one writer (claimread.go), where a second statement costs no round
-- trip. This migration only keeps both databases at one schema version.
SELECT 1;

-- +goose Down
SELECT 1;
