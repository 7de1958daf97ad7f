-- +goose Up
-- SQLite's 00038 rewrites its conditions on tasks.status without IN
-- lists, which it builds as a table at every execution. PostgreSQL
-- evaluates IN lists as arrays and proves its partial indexes from either
-- form. This migration only keeps both databases at one schema version.
SELECT 1;

-- +goose Down
SELECT 1;
