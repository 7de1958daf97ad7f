-- +goose Up
-- PostgreSQL's gengate_create_task has no SQLite counterpart: SQLite runs in
-- the process, so a transaction costs no round trips. This keeps the
-- migration numbers of both databases in step.
SELECT 1;

-- +goose Down
SELECT 1;
