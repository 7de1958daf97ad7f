-- +goose Up
-- worker_heartbeats holds one row per running worker process (roles all and
-- worker), upserted every few seconds and deleted at a clean stop, so that
-- /readyz of any process can say whether a worker has been seen recently.
-- owner is the process's lease owner name (host:pid:id). Not data:
-- migrate-data does not copy it.
CREATE TABLE worker_heartbeats (
    owner      TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    version    TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE worker_heartbeats;
