-- +goose Up
-- The account area (issue 16): members who sign in, their sessions and
-- one-time links; key spend limits and last use; tasks know their key.
-- Emails are stored lower-cased: unique case-insensitively.
CREATE TABLE members (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    email         TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('owner','operator')),
    password_hash TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL
);
CREATE INDEX members_account ON members (account_id);

-- Only the SHA-256 of a session token is stored.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    member_id  TEXT NOT NULL REFERENCES members (id),
    csrf_token TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_member ON sessions (member_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- One-time links: single use is the conditional UPDATE of used_at.
CREATE TABLE login_links (
    token_hash TEXT PRIMARY KEY,
    member_id  TEXT NOT NULL REFERENCES members (id),
    purpose    TEXT NOT NULL CHECK (purpose IN ('setup','signin')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT NOT NULL DEFAULT 0
);

-- spend_limit is credits per UTC day, 0 for none; spent counts the
-- charges (net of refunds) of day spent_day (days since the Unix epoch).
ALTER TABLE api_keys ADD COLUMN spend_limit BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN spent_day BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN spent BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

ALTER TABLE tasks ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN input_urls TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_account ON tasks (account_id, created_at, id);

-- +goose Down
DROP INDEX tasks_account;
ALTER TABLE tasks DROP COLUMN input_urls;
ALTER TABLE tasks DROP COLUMN key_id;
DROP INDEX api_keys_account;
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE api_keys DROP COLUMN spent;
ALTER TABLE api_keys DROP COLUMN spent_day;
ALTER TABLE api_keys DROP COLUMN spend_limit;
DROP TABLE login_links;
DROP TABLE sessions;
DROP TABLE members;
