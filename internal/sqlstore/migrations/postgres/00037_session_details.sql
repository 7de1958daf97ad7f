-- +goose Up
-- A member's list of sessions shows, for each, the browser it began in
-- (its User-Agent at sign-in, at most 256 bytes: the service cuts it) and
-- when it was last used (written with the expiry's renewal, at most about
-- once an hour). Sessions begun before this migration show no browser and
-- their sign-in time as their last use.
ALTER TABLE sessions ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN last_seen_at BIGINT NOT NULL DEFAULT 0;
UPDATE sessions SET last_seen_at = created_at;

-- +goose Down
ALTER TABLE sessions DROP COLUMN last_seen_at;
ALTER TABLE sessions DROP COLUMN user_agent;
