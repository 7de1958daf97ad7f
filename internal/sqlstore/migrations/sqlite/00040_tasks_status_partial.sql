-- +goose Up
-- PostgreSQL's 00040 narrows its tasks_status to the tasks out of the
-- active states, as SQLite's 00014 did. This migration only keeps both
-- databases at one schema version.
SELECT 1;

-- +goose Down
SELECT 1;
