-- +goose Up
-- tasks_status holds only the tasks out of the active states, as on
-- SQLite since its 00014. Every row version of an active task (its
-- creation, the worker's claim, its step records) was an entry in it,
-- read by nobody: the active tasks are found by tasks_due. An UPDATE that
-- changes status is never HOT, so each of a task's three versions on its
-- way upstream wrote an entry in every index of tasks; this one is one
-- insertion in five less per version (docs/notes/performance.md).
-- The build locks writes to tasks while it runs: on a large table, run
-- this migration in a quiet moment (docs/upgrading.md).
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (status, created_at)
    WHERE status <> 'queued' AND status <> 'submitting' AND status <> 'running';

-- +goose Down
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (status, created_at);
