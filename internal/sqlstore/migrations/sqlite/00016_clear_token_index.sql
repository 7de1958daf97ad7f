-- +goose Up
-- The rows whose file token is still in clear (no token_sealed), which
-- Open looks for at every start (sealFileTokens): without an index that
-- was a walk of the whole table each time. Rows written sealed never
-- enter these indexes, so they stay empty once the old rows are
-- rewritten and cost nothing at a finish or an upload.
CREATE INDEX creations_clear_token ON creations (id) WHERE token_sealed IS NULL;
CREATE INDEX uploads_clear_token ON uploads (id) WHERE token_sealed IS NULL;

-- +goose Down
DROP INDEX creations_clear_token;
DROP INDEX uploads_clear_token;
