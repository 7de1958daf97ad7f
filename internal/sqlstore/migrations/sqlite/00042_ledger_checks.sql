-- +goose Up
-- The ledger's two CHECKs are written as chains of = instead of IN lists,
-- as 00038 did for tasks.status: SQLite codes an IN list of constants as
-- an ephemeral table built again at every execution of a statement that
-- evaluates it, so every ledger INSERT (one a task: its charge) built two
-- (TestNoTablesBuiltPerWrite; docs/notes/performance.md). The new
-- conditions accept exactly the rows the old ones did (kind is NOT NULL),
-- so no row is rewritten; the change is made in place, as 00038's.
-- Changing the stored text bumps the schema cookie when it is RESET, so
-- every connection reloads the schema.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(replace(sql,
    'CHECK (kind IN (''grant'',''charge'',''refund'',''adjustment'',''redemption'',''purchase'',''purchase_refund''))',
    'CHECK (kind = ''grant'' OR kind = ''charge'' OR kind = ''refund'' OR kind = ''adjustment'' OR kind = ''redemption'' OR kind = ''purchase'' OR kind = ''purchase_refund'')'),
    'CHECK ((kind IN (''charge'',''refund'')) = (task_id IS NOT NULL))',
    'CHECK ((kind = ''charge'' OR kind = ''refund'') = (task_id IS NOT NULL))')
WHERE type = 'table' AND name = 'ledger';
PRAGMA writable_schema = RESET;
-- A schema change every connection sees (the cookie), as 00038's index
-- rebuild did there.
DROP INDEX ledger_account;
CREATE INDEX ledger_account ON ledger (account_id, id);

-- +goose Down
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(replace(sql,
    'CHECK (kind = ''grant'' OR kind = ''charge'' OR kind = ''refund'' OR kind = ''adjustment'' OR kind = ''redemption'' OR kind = ''purchase'' OR kind = ''purchase_refund'')',
    'CHECK (kind IN (''grant'',''charge'',''refund'',''adjustment'',''redemption'',''purchase'',''purchase_refund''))'),
    'CHECK ((kind = ''charge'' OR kind = ''refund'') = (task_id IS NOT NULL))',
    'CHECK ((kind IN (''charge'',''refund'')) = (task_id IS NOT NULL))')
WHERE type = 'table' AND name = 'ledger';
PRAGMA writable_schema = RESET;
DROP INDEX ledger_account;
CREATE INDEX ledger_account ON ledger (account_id, id);
