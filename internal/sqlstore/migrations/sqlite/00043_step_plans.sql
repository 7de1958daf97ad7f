-- +goose Up
-- PostgreSQL's 00043 fixes the plans of its grouped step records and
-- task creations inside functions. SQLite's statements already find each
-- task by id (TestSaveStepsPlan); this migration only keeps both
-- databases at one schema version.
SELECT 1;

-- +goose Down
SELECT 1;
