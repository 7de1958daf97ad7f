-- +goose Up
-- The plans of a task's two writes on PostgreSQL, fixed so that a table
-- that grows faster than autovacuum analyzes it (a new database under
-- load, or any burst of tasks) never makes them read every active task
-- (docs/notes/postgres-submits.md, "Plans that read every active task").
--
-- gengate_save_steps is the grouped step record (stepbatch.go) as a
-- function. As a bare statement, with statistics that still counted a few
-- active tasks, PostgreSQL joined the records to a bitmap scan of
-- tasks_due over every active task (1,108 rows read for 13 records in one
-- logged run, more with every second of a run): half of PostgreSQL's CPU
-- in a profile of bench submit. Hash, merge, bitmap and sequential plans
-- are off inside it, so each record finds its task by id through the
-- primary key, as SQLite's statement does.
--
-- gengate_create_tasks gets the same settings: its Idempotency-Key lookup
-- joined a batch's keys to a sequential scan of tasks under the same
-- stale statistics.
--
-- Both keep one generic plan per statement for the session
-- (plan_cache_mode): PL/pgSQL otherwise planned most of their statements
-- again at every call, choosing a custom plan for the arrays given
-- (perf of bench submit: the planner 3.8 % of all the machine's samples,
-- a tenth of PostgreSQL's; 0.1 % with the setting).
-- +goose StatementBegin
CREATE FUNCTION gengate_save_steps(TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[], INT[], TEXT[], BIGINT[], BIGINT[],
    TEXT[], INT[], TEXT[], TEXT[], TEXT[])
RETURNS SETOF TEXT LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
RETURN QUERY
WITH saved AS (
    UPDATE tasks SET status = v.status, upstream_id = v.upstream_id, run_at = v.run_at,
        error_code = v.error_code, error_message = v.error_message, input_fault = v.input_fault,
        review_reason = v.review_reason, updated_at = v.updated_at, completed_at = v.completed_at,
        attempts = v.attempts, engine = v.engine, route = v.route, lease_token = '', lease_until = 0
    FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        AS v(status, upstream_id, run_at, error_code, error_message, input_fault, review_reason, updated_at,
            completed_at, id, attempts, engine, route, token)
    WHERE tasks.id = v.id AND tasks.lease_token = v.token
        AND (tasks.status = 'queued' OR tasks.status = 'submitting' OR tasks.status = 'running')
    RETURNING tasks.id
) SELECT saved.id FROM saved;
END;
$$;
-- +goose StatementEnd

ALTER FUNCTION gengate_create_tasks(TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[],
    TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], BIGINT[], INT[])
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off SET enable_seqscan = off
    SET plan_cache_mode = force_generic_plan;

-- +goose Down
ALTER FUNCTION gengate_create_tasks(TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[],
    TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], BIGINT[], INT[]) RESET ALL;
DROP FUNCTION gengate_save_steps(TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[], INT[], TEXT[], BIGINT[], BIGINT[],
    TEXT[], INT[], TEXT[], TEXT[], TEXT[]);
