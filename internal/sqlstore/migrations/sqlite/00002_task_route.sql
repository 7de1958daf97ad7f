-- +goose Up
-- The route a task runs on (engine, upstream model id, operator params) as
-- JSON; it changes when a refused submit falls back to the next route.
ALTER TABLE tasks ADD COLUMN route TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN route;
