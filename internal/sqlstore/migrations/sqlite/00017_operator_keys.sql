-- +goose Up
-- Operator powers belong to operator sessions and the CLI: an API key has
-- them only when the CLI made it for that purpose (gengate keys create
-- --operator), never because its account has an operator member. Every
-- key made before this migration, the first-start key among them, is a
-- plain key (0).
ALTER TABLE api_keys ADD COLUMN operator INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN operator;
