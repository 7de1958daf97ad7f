-- +goose Up
-- A file's URL token is no longer kept in clear (filetokens.go): token
-- holds gengate.FileTokenDigest(token), which the file is looked up by,
-- and token_sealed the token sealed under the server's key, to show the
-- URL again. Rows made before hold their token in clear and no
-- token_sealed: Open rewrites them (sealFileTokens).
ALTER TABLE creations ADD COLUMN token_sealed TEXT;
ALTER TABLE uploads ADD COLUMN token_sealed TEXT;
-- A known value sealed under the server key by the first process that
-- opens the database with one: a process started with another key is
-- refused at Open (checkServerKey), instead of failing later on every
-- file and webhook secret sealed under the first.
CREATE TABLE server_key (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    sealed TEXT NOT NULL
);

-- +goose Down
DROP TABLE server_key;
ALTER TABLE creations DROP COLUMN token_sealed;
ALTER TABLE uploads DROP COLUMN token_sealed;
