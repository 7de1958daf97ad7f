-- +goose Up
-- The latest progress report of a task (gengate.Report as JSON): queue
-- position, upstream status, percentage, latest log lines. Informational;
-- it goes with its task.
CREATE TABLE task_progress (
    task_id    TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    report     TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE task_progress;
