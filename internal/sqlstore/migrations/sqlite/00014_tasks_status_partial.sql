-- +goose Up
-- tasks_status holds only the tasks out of the active states (queued,
-- submitting, running): a task is written into it once, when it leaves
-- them (a finish, a cancel, a hold for review), instead of at its creation
-- and again at each of its moves from state to state, each write on the
-- one writer's path. The active tasks are found by tasks_due (the claims,
-- CountTasks). PostgreSQL keeps the whole index (00014 there is empty):
-- its planner has statistics, and its creations are not one writer's.
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (status, created_at) WHERE status NOT IN ('queued','submitting','running');

-- +goose Down
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (status, created_at);
