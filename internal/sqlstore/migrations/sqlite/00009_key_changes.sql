-- +goose Up
-- key_changes counts changes to API keys that authentication depends on
-- (revoked, renamed, limited, moved, deleted), whoever makes them: the
-- triggers below bump it in the transaction of the change. Every process
-- keeps the keys it authenticated in memory (gengate.KeyCache) and reads
-- this one row a few times a second: a new generation drops its copies, so
-- a key revoked by any process (or the CLI) is refused by all of them
-- within --key-refresh. Not data: migrate-data does not copy it.
CREATE TABLE key_changes (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO key_changes (id, generation) VALUES (1, 0);
-- +goose StatementBegin
CREATE TRIGGER api_keys_changed AFTER UPDATE OF revoked_at, name, spend_limit, account_id, hash ON api_keys
BEGIN
    UPDATE key_changes SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN
    UPDATE key_changes SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER api_keys_deleted;
DROP TRIGGER api_keys_changed;
DROP TABLE key_changes;
