-- +goose Up
-- Uploads are files an account sent to POST /api/v1/files to use as inputs.
-- They are served at /files/<token>.<ext> like outputs and expire.
CREATE TABLE uploads (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    blob_key     TEXT NOT NULL,
    token        TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    ext          TEXT NOT NULL,
    size         BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX uploads_expires_at ON uploads (expires_at);

-- +goose Down
DROP TABLE uploads;
