-- +goose Up
-- A file's URL token is no longer kept in clear (filetokens.go): token
-- holds gengate.FileTokenDigest(token), which the file is looked up by,
-- and token_sealed the token sealed under the server's key, to show the
-- URL again. Rows made before hold their token in clear and no
-- token_sealed: Open rewrites them (sealFileTokens).
ALTER TABLE creations ADD COLUMN token_sealed TEXT;
ALTER TABLE uploads ADD COLUMN token_sealed TEXT;

-- +goose Down
ALTER TABLE creations DROP COLUMN token_sealed;
ALTER TABLE uploads DROP COLUMN token_sealed;
