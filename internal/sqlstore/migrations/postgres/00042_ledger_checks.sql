-- +goose Up
-- SQLite's 00042 writes the ledger's CHECKs without IN lists, which it
-- builds as a table at every INSERT. PostgreSQL evaluates an IN list of
-- constants as an array: this migration only keeps both databases at one
-- schema version.
SELECT 1;

-- +goose Down
SELECT 1;
