-- +goose Up
-- PostgreSQL's 00041 moves its workers' claim to PL/pgSQL and makes its
-- Idempotency-Key index partial. SQLite's claim is statements of the
-- writer, and its UNIQUE constraint cannot be dropped without rebuilding
-- the table. This migration only keeps both databases at one schema
-- version.
SELECT 1;

-- +goose Down
SELECT 1;
