-- +goose Up
-- A test key (gg_test_...) makes tasks that run on the sandbox and charge
-- nothing; its tasks are found by their key (the task list's test filter).
ALTER TABLE api_keys ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
CREATE INDEX api_keys_test ON api_keys (account_id) WHERE test = 1;

-- +goose Down
DROP INDEX api_keys_test;
ALTER TABLE api_keys DROP COLUMN test;
