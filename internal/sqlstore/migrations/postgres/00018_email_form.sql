-- +goose Up
-- Emails are stored in one normal form (gengate.NormalizeEmail: NFKC and
-- case folding; format characters and a trailing dot refused). Rows
-- written before were only lower-cased: email_form 0 marks them until
-- Open rewrites them (sqlstore.normalizeEmails, found through the
-- partial index below, empty afterwards): 1 is the normal form, 2 an
-- address kept as it was because the rules now refuse it or its normal
-- form belongs to another member (it can no longer sign in by email; the
-- operator sees it in accounts list).
ALTER TABLE members ADD COLUMN email_form INTEGER NOT NULL DEFAULT 0;
CREATE INDEX members_email_unchecked ON members (id) WHERE email_form = 0;

-- +goose Down
DROP INDEX members_email_unchecked;
ALTER TABLE members DROP COLUMN email_form;
