-- FaithLens team store: the PostgreSQL tables behind FAITHLENS_EVENTS_URL.
-- Several app servers share one event log here; each keeps its own DuckDB file (schema.sql) as a
-- replica that replays these events in event_id order. Created by faithlens/store/team.py under an
-- advisory lock, so servers starting together do not race; every statement is idempotent.

-- One row: the identity of this store. A replica remembers it (DuckDB meta `events_store`) and
-- refuses to pull from a different store, which would mix two histories in one file.
CREATE TABLE IF NOT EXISTS faithlens_store (
    store_id TEXT PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The event log, append-only. One event is one committed write of the app (a code, an undo, a
-- session, a coder joining, a codebook, an LLM answer with its label events, a run's progress): the
-- DuckDB statements that write it, with their parameters, replayed as they are on every replica.
-- `event_id` is assigned under a transaction-level advisory lock held until commit, so ids become
-- visible in id order: a reader that sees event N knows no event below N will appear later, and
-- pulls "everything after the last id I applied". `event_key` is chosen by the writer; a retried
-- append (the connection dropped after COMMIT was sent) finds its event instead of adding it twice.
CREATE TABLE IF NOT EXISTS faithlens_event (
    event_id BIGSERIAL PRIMARY KEY,
    event_key TEXT NOT NULL UNIQUE,
    what TEXT NOT NULL,               -- as in DuckDB's write_log: 'code session s1 coder:ann', 'llm ...'
    origin TEXT NOT NULL,             -- the server that wrote it: host and process id
    statements TEXT NOT NULL,         -- JSON: [{"sql": ..., "params": [...] or {...}}, ...]
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Ids that events carry across replicas (a code names its session, a run item its answers) are
-- drawn here, never from a replica's own DuckDB sequences, so every replica holds the same ids.
-- (A replica holding rows written without this store refuses to join it: see team.py.)
CREATE SEQUENCE IF NOT EXISTS coding_session_seq;
CREATE SEQUENCE IF NOT EXISTS coding_event_seq;
CREATE SEQUENCE IF NOT EXISTS coding_comment_seq;
CREATE SEQUENCE IF NOT EXISTS llm_call_seq;
CREATE SEQUENCE IF NOT EXISTS llm_run_seq;
CREATE SEQUENCE IF NOT EXISTS llm_run_event_seq;
CREATE SEQUENCE IF NOT EXISTS access_event_seq;
