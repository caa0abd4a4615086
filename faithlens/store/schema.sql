-- FaithLens canonical model. One file, one comment per table.
-- Every row carries its dataset name, so user imports live beside the bundled benchmarks.
-- Natural ids from the raw files are kept as VARCHAR so deep links stay readable.

-- Shared label vocabulary. `raw_value` beside it keeps each dataset's own spelling.
CREATE TYPE IF NOT EXISTS verdict AS ENUM ('faithful', 'unfaithful', 'partial', 'unverifiable', 'ambiguous', 'n/a');

-- Key/value facts about the database itself: schema version, content hash of the raw files.
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

-- One row per loaded dataset (bundled benchmark or user import).
CREATE TABLE IF NOT EXISTS dataset (
    name VARCHAR PRIMARY KEY,
    format VARCHAR NOT NULL,          -- loader that produced it: storysumm, fables, tofueval, canonical
    origin VARCHAR NOT NULL,          -- 'bundled' (rebuilt by ingest) or 'import' (kept across ingests)
    source_files VARCHAR[] NOT NULL,  -- paths the rows came from
    description VARCHAR,
    license VARCHAR,
    citation VARCHAR,
    loaded_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Source texts: a story, a book, a dialogue transcript. `text` is NULL when not public;
-- `text_note` then says why and how to add it.
CREATE TABLE IF NOT EXISTS document (
    dataset VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    title VARCHAR,
    text VARCHAR,
    text_note VARCHAR,
    text_origin VARCHAR,              -- file the text came from when attached later (kept across re-ingest)
    source VARCHAR,                   -- sub-corpus, e.g. TofuEval's mediasum / meetingbank
    split VARCHAR,
    attributes JSON,                  -- every other raw field (book author, genre, ...)
    PRIMARY KEY (dataset, document_id)
);

-- One summary of one document by one generator. Difficulty and error types are tags.
CREATE TABLE IF NOT EXISTS summary (
    dataset VARCHAR NOT NULL,
    summary_id VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    model VARCHAR,                    -- generator
    split VARCHAR,
    topic VARCHAR,                    -- TofuEval topic
    topic_type VARCHAR,               -- TofuEval main / marginal
    text VARCHAR NOT NULL,            -- the whole summary as published (or its sentences joined)
    general_comment VARCHAR,          -- FABLES annotator's free-form critique
    attributes JSON,
    PRIMARY KEY (dataset, summary_id)
);

-- The sentences and the claims of a summary, each kind in order (position from 0).
CREATE TABLE IF NOT EXISTS unit (
    dataset VARCHAR NOT NULL,
    unit_id VARCHAR NOT NULL,         -- '<summary_id>#s<position>' or '<summary_id>#c<position>'
    summary_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('sentence', 'claim')),
    position INTEGER NOT NULL,
    text VARCHAR NOT NULL,
    attributes JSON,                  -- e.g. TofuEval's sent_idx as published
    PRIMARY KEY (dataset, unit_id)
);

-- Who or what produced labels: a dataset's own humans ('gold'), an evaluator's released
-- predictions, a human coder, or an LLM run. Later label sources are rows here, not columns.
CREATE TABLE IF NOT EXISTS label_source (
    dataset VARCHAR NOT NULL,
    source VARCHAR NOT NULL,          -- 'gold', 'gpt-4-0125-preview/cot', 'coder:alice', 'llm:...'
    kind VARCHAR NOT NULL CHECK (kind IN ('gold', 'evaluator', 'coder', 'llm')),
    description VARCHAR,
    origin_file VARCHAR,
    origin VARCHAR NOT NULL DEFAULT 'bundled', -- 'bundled' (rebuilt by ingest) or 'import' (kept)
    coder VARCHAR,                    -- coders: who
    codebook VARCHAR,                 -- coders: which codebook version
    provider VARCHAR,                 -- LLM runs: openai, anthropic, an OpenAI-compatible URL
    model VARCHAR,                    -- LLM runs: model name
    prompt_version VARCHAR,           -- LLM runs: prompt id and version
    parameters JSON,                  -- LLM runs: temperature etc. (never API keys)
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (dataset, source)
);

CREATE SEQUENCE IF NOT EXISTS label_event_seq;

-- Append-only label events: one row per (target, source) at ingest; coders and LLM runs may
-- append newer rows for the same target, and `current_label` keeps the latest.
-- `value` is NULL for score-only sources (AlignScore, UniEval): thresholds are applied at read time.
CREATE TABLE IF NOT EXISTS label (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('label_event_seq'),
    dataset VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('summary', 'sentence', 'claim')),
    target_id VARCHAR NOT NULL,       -- summary_id for level 'summary', unit_id otherwise
    value verdict,
    raw_value VARCHAR,                -- the dataset's own spelling: '0', 'Yes', 'no', ...
    score DOUBLE,
    explanation VARCHAR,              -- annotator explanation or an evaluator's written reasoning
    evidence VARCHAR[],               -- FABLES evidence quotes
    reasons VARCHAR[],                -- FABLES annotator reasons
    raw_output VARCHAR,               -- LLM runs: the reply as received
    rewrite VARCHAR,                  -- LLM runs (ARM): the rewritten claim
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd DOUBLE,
    created_by VARCHAR,               -- coders: who appended this event
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Multi-valued categorical codes on a summary or unit: TofuEval error types, StorySumm
-- difficulty, later ambiguity types and coders' codes.
CREATE TABLE IF NOT EXISTS tag (
    dataset VARCHAR NOT NULL,
    level VARCHAR NOT NULL CHECK (level IN ('summary', 'sentence', 'claim')),
    target_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,            -- 'error_type', 'difficulty', ...
    value VARCHAR NOT NULL,
    source VARCHAR NOT NULL DEFAULT 'gold',
    PRIMARY KEY (dataset, level, target_id, kind, value, source)
);

-- TofuEval completeness key points, per (document, topic), in order.
CREATE TABLE IF NOT EXISTS key_point (
    dataset VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    topic VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    text VARCHAR NOT NULL,
    PRIMARY KEY (dataset, document_id, topic, position)
);

-- Unit-to-source alignment, computed at ingest (and on demand by other rankers) so pages only read
-- it: per summary sentence or claim and ranker (faithlens.build.rankers), the best-matching passages
-- (character spans of document.text), best first.
CREATE TABLE IF NOT EXISTS alignment (
    dataset VARCHAR NOT NULL,
    unit_id VARCHAR NOT NULL,
    ranker VARCHAR NOT NULL,
    rank INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    score DOUBLE NOT NULL,            -- the ranker's own score (token_set_ratio 0..100, BM25, cosine, RRF)
    PRIMARY KEY (dataset, unit_id, ranker, rank)
);

-- Which ranker, at exactly which version, aligned a document's summary units, and when.
CREATE TABLE IF NOT EXISTS alignment_ranker (
    dataset VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    ranker VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    aligned_at TIMESTAMP NOT NULL,
    PRIMARY KEY (dataset, document_id, ranker)
);

-- Passage embeddings of a long document, stored chunk by chunk by a background alignment job
-- (faithlens.build.background) so that a job that stops goes on where it was; per embedding model version.
CREATE TABLE IF NOT EXISTS passage_embedding (
    dataset VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    vector FLOAT[] NOT NULL,
    PRIMARY KEY (dataset, document_id, model, start_char)
);

-- Background alignment jobs: a ranker asked to align a long document; finished_at is set once it has,
-- error when it failed (the page shows it and offers to try again).
CREATE TABLE IF NOT EXISTS alignment_job (
    dataset VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    ranker VARCHAR NOT NULL,
    passages INTEGER NOT NULL,
    requested_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    error VARCHAR,
    PRIMARY KEY (dataset, document_id, ranker)
);

-- What ingest repaired, noted or skipped, so nothing is dropped silently.
CREATE TABLE IF NOT EXISTS ingest_log (
    dataset VARCHAR NOT NULL,
    file VARCHAR NOT NULL,
    position VARCHAR,                 -- line, record id or row
    kind VARCHAR NOT NULL CHECK (kind IN ('repair', 'note', 'skip')),
    message VARCHAR NOT NULL,
    logged_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE IF NOT EXISTS write_seq;

-- One row per committed write (ingest, import, alignment; later codes and LLM results), appended in
-- the write's own transaction by `faithlens.store.write`: the newest write_id is the data version
-- that the app's caches are keyed on, so every session sees every writer's changes.
CREATE TABLE IF NOT EXISTS write_log (
    write_id BIGINT PRIMARY KEY DEFAULT nextval('write_seq'),
    what VARCHAR NOT NULL,
    written_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- View `current_label`: the latest label event per (dataset, source, level, target), what every
-- page reads. It is created by `faithlens/store/connection.py` from `faithlens.store.sql.LATEST_LABEL`,
-- the one definition of that rule, which readers narrowing `label` first also apply.

CREATE SEQUENCE IF NOT EXISTS llm_call_seq;

-- Append-only: one row per answer a language model gave, with everything needed to trust it and to
-- answer the same request again without paying: the exact request, the prompt file's version, the
-- parameters, the raw replies, tokens, cost and latency. `request_key` hashes provider, base URL,
-- model, prompt version, parameters and the exact messages; `sample` 0 is the first answer, and a
-- fresh sample of the same request counts up (kept for stability analysis). Only `status = 'ok'`
-- answers become label events; a parse failure, refusal or empty answer is kept here, shown with
-- its raw output, and never counted as a label. API keys are never stored.
CREATE TABLE IF NOT EXISTS llm_call (
    call_id BIGINT PRIMARY KEY DEFAULT nextval('llm_call_seq'),
    request_key VARCHAR NOT NULL,
    sample INTEGER NOT NULL,
    dataset VARCHAR,                  -- what was asked about; NULL for pasted text
    level VARCHAR,
    target_id VARCHAR,
    source VARCHAR,                   -- the label source the answer feeds, e.g. 'llm/arm-rewrite-both/gpt-4o'
    provider VARCHAR NOT NULL,
    base_url VARCHAR,
    model VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    prompt_name VARCHAR NOT NULL,     -- the template file, e.g. 'tofueval-dir.sentence'
    prompt_version VARCHAR NOT NULL,  -- sha256 prefix of that file
    parameters JSON NOT NULL,         -- temperature, max_tokens, evidence setting, k, ...
    request JSON NOT NULL,            -- system prompt and user turns as sent
    replies VARCHAR[] NOT NULL,       -- the model's replies as received, one per turn
    status VARCHAR NOT NULL CHECK (status IN ('ok', 'parse_failure', 'refused', 'empty')),
    failure VARCHAR,                  -- why it did not parse, in one line
    parsed JSON,                      -- label, explanation, rewrite, items, ARM signals
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd DOUBLE,                  -- NULL when the model has no price: cost unknown, never 0
    latency_ms DOUBLE,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (request_key, sample)
);

-- Whom an answer was charged to (faithlens.access: Person.id), counted by `access.spent`; NULL for answers
-- stored before people existed. Added to files made before it, so it comes last.
ALTER TABLE llm_call ADD COLUMN IF NOT EXISTS person VARCHAR;

CREATE SEQUENCE IF NOT EXISTS llm_run_seq;

-- A run of one method over many units: what was asked (`spec`: method, variant, evidence, provider,
-- model, base URL, repeats, concurrency, budget, calls or batch mode), over which units (fixed when
-- the run is made, so a resume asks about the same ones), and the label source it feeds.
CREATE TABLE IF NOT EXISTS llm_run (
    run_id BIGINT PRIMARY KEY DEFAULT nextval('llm_run_seq'),
    dataset VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    selection VARCHAR NOT NULL,       -- the unit set in words: "all 96 summaries", "324 sentences where split is test"
    units VARCHAR[] NOT NULL,
    spec JSON NOT NULL,
    source VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Who made the run (faithlens.access: Person.id); each of its answers is charged to whoever started,
-- resumed or retried it then (llm_call.person). NULL for runs made before people existed.
ALTER TABLE llm_run ADD COLUMN IF NOT EXISTS started_by VARCHAR;

CREATE SEQUENCE IF NOT EXISTS llm_run_event_seq;

-- Append-only progress of runs. 'item': one finished attempt at (unit, repeat), ok or failed with
-- its reason, the llm_call rows behind it and what it paid (0 when answered from stored answers);
-- the latest item event of a (unit, repeat) is its state. 'state': running, cancelled, budget,
-- finished, stopped (with the reason). 'batch': a provider batch submitted or collected (its id in
-- `reason`), so polling survives a restart. A run whose newest state is 'running' but has no live
-- worker was interrupted (a server restart, kill -9): resuming asks only for what is missing.
CREATE TABLE IF NOT EXISTS llm_run_event (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('llm_run_event_seq'),
    run_id BIGINT NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('item', 'state', 'batch')),
    target_id VARCHAR,
    repeat INTEGER,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    cached BOOLEAN,
    call_ids BIGINT[],
    label VARCHAR,                    -- the item's verdict in the shared vocabulary (self-agreement reads it)
    calls INTEGER,                    -- API calls this attempt made
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd DOUBLE,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Attempts of a run's calls that gave no answer (faithlens.llm.retrying), one row each as it happened:
-- which item and request, the attempt's number (1, 2, ... per call), its cause (rate limit, server
-- error, timeout, malformed, cut, connection, empty) and message, how long it took, how many other
-- calls were in flight beside it, and the wait before the next attempt (NULL: none followed). The
-- attempt that answered is the item's llm_call. Ids come from llm_run_event_seq.
CREATE TABLE IF NOT EXISTS llm_run_attempt (
    attempt_id BIGINT PRIMARY KEY,
    run_id BIGINT NOT NULL,
    target_id VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    request_key VARCHAR NOT NULL,
    attempt INTEGER NOT NULL,
    cause VARCHAR NOT NULL,
    message VARCHAR,
    seconds DOUBLE,
    in_flight INTEGER,
    wait_s DOUBLE,
    created_at TIMESTAMP NOT NULL
);

-- Every codebook version a session used or a lab saved: built-in ones (faithlens/coding/codebooks/)
-- are copied here when a session first uses them, custom ones when saved; an edit is a new version.
-- `version` hashes `body` (the codebook as JSON), so a code names exactly the definitions it was made with.
CREATE TABLE IF NOT EXISTS codebook (
    name VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    origin VARCHAR NOT NULL CHECK (origin IN ('builtin', 'custom')),
    body JSON NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (name, version)
);

CREATE SEQUENCE IF NOT EXISTS coding_session_seq;

-- A coding session: who codes which units with which codebook, following which protocol (`mode`:
-- codes, line-by-line, hybrid, arm-faithfulness, arm-preference). The units are fixed when the session
-- is made, in reading order; each coder sees them in that order or in their own seeded one.
-- `suggestions` names the label source a mode shows: the LLM's suggested inconsistencies (hybrid) or
-- the rewrites (ARM modes). `blind` hides gold labels, other coders' codes and LLM labels.
CREATE TABLE IF NOT EXISTS coding_session (
    session_id BIGINT PRIMARY KEY DEFAULT nextval('coding_session_seq'),
    name VARCHAR NOT NULL UNIQUE,
    dataset VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    mode VARCHAR NOT NULL,
    codebook VARCHAR NOT NULL,
    codebook_version VARCHAR NOT NULL,
    selection VARCHAR NOT NULL,       -- the unit set in words
    units VARCHAR[] NOT NULL,
    ordering VARCHAR NOT NULL CHECK (ordering IN ('fixed', 'seeded')),
    seed INTEGER NOT NULL,
    blind BOOLEAN NOT NULL,
    suggestions VARCHAR,
    coders VARCHAR[] NOT NULL,        -- invited when the session was made; others join by name
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Who has joined a session (by name, from its link), in joining order.
CREATE TABLE IF NOT EXISTS coding_coder (
    session_id BIGINT NOT NULL,
    coder VARCHAR NOT NULL,
    joined_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (session_id, coder)
);

-- Who made a session (an admin, or whoever ran `coding import`) and who saved a lab's codebook version
-- (NULL: made before sign-in existed, or a built-in codebook copied when a session first used it).
ALTER TABLE coding_session ADD COLUMN IF NOT EXISTS made_by VARCHAR;
ALTER TABLE codebook ADD COLUMN IF NOT EXISTS made_by VARCHAR;

-- A session an admin closed (faithlens.coding.sessions.close), once and for all: its codes are final (no
-- code, undo, adjudication or comment after it), and the coders of a blind session may then see the
-- other coders' codes, the agreement and the adjudication.
CREATE TABLE IF NOT EXISTS coding_close (
    session_id BIGINT PRIMARY KEY,
    closed_by VARCHAR NOT NULL,
    closed_at TIMESTAMP NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS coding_event_seq;

-- Append-only codes: the latest event of a (session, coder, unit) is that coder's current code; an
-- undo appends the code it returns to (no codes: uncoded again). `coder` is whose code it is (a
-- coder, or 'adjudicated' for the session's settled label), `made_by` who made the event (the
-- adjudicator; 'import <file>' for imported codes). `detail` holds what a mode asks beyond the codes:
-- line-by-line's sentence codes, hybrid's agree/disagree per suggestion, the ARM variant shown, the
-- preferred claim and the explanation points' marks. The event and the coder's label events or tags
-- are committed in one transaction before the page says "Saved".
CREATE TABLE IF NOT EXISTS coding_event (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('coding_event_seq'),
    session_id BIGINT NOT NULL,
    coder VARCHAR NOT NULL,
    unit_id VARCHAR NOT NULL,         -- a summary id at level summary, else a unit id
    action VARCHAR NOT NULL CHECK (action IN ('code', 'undo', 'import', 'adjudicate')),
    codes VARCHAR[] NOT NULL,
    note VARCHAR,
    detail JSON,
    codebook_version VARCHAR NOT NULL,
    made_by VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE IF NOT EXISTS coding_comment_seq;

-- Append-only discussion of a session's units: coders and the adjudicator explain their codes, most of
-- all on disputed units. `author` is who wrote it (a coder's name, or the adjudicator's), `role` whether
-- they wrote as a coder or as the adjudicator. In a blind session a coder reads only their own comments
-- (faithlens.coding.comments), as they see only their own codes.
CREATE TABLE IF NOT EXISTS coding_comment (
    comment_id BIGINT PRIMARY KEY DEFAULT nextval('coding_comment_seq'),
    session_id BIGINT NOT NULL,
    unit_id VARCHAR NOT NULL,
    author VARCHAR NOT NULL,
    role VARCHAR NOT NULL CHECK (role IN ('coder', 'adjudicator')),
    text VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- People (faithlens.access), one row each, never changed: `person_id` is what events record (a coder's
-- name in codes), `subject` the OpenID Connect `sub` of someone who signs in through a provider. How
-- they sign in: 'oidc', 'link' (links an admin hands out), 'local' or 'cli'. Name-only coders of older
-- sessions are not rows here: they are read from the codes as people without a sign-in.
CREATE TABLE IF NOT EXISTS person (
    person_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    email VARCHAR,
    sign_in VARCHAR NOT NULL CHECK (sign_in IN ('oidc', 'link', 'local', 'cli')),
    subject VARCHAR UNIQUE,
    made_by VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- Sign-in links: only the sha256 of the link's random token is kept, never the token. A link works
-- until `expires_at` unless an access_event 'revoke' names it (or revokes all of its person's).
CREATE TABLE IF NOT EXISTS sign_in_link (
    link_id VARCHAR PRIMARY KEY,
    person_id VARCHAR NOT NULL,
    token_sha256 VARCHAR NOT NULL UNIQUE,
    expires_at TIMESTAMP NOT NULL,
    made_by VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS access_event_seq;

-- Append-only, like codes; every access write adds one, so their count and newest id tell a server
-- whether people changed. 'person': an admin added someone (their row in `person` is written with it).
-- A person's role is their latest 'role' event, their budget the latest 'budget' event (dollars a day
-- and a calendar month; NULL: no limit). 'link' is a sign-in link made (its row in sign_in_link is
-- written with it). 'sign_in' and 'sign_out' record a browser's session
-- (the sha256 of its key) and how it signed in; 'revoke' withdraws one link (`link_id`) or, without
-- one, every link and signed-in browser of the person made before it. Someone with no 'role' event is
-- an admin when they were the first person to sign in, a coder when known only from older codes, else
-- a viewer.
CREATE TABLE IF NOT EXISTS access_event (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('access_event_seq'),
    person_id VARCHAR NOT NULL,       -- whom it is about
    kind VARCHAR NOT NULL CHECK (kind IN ('person', 'role', 'budget', 'link', 'revoke', 'sign_in', 'sign_out')),
    role VARCHAR CHECK (role IN ('viewer', 'coder', 'runner', 'adjudicator', 'admin')),
    day_usd DOUBLE,
    month_usd DOUBLE,
    link_id VARCHAR,                  -- link, revoke: the link; sign_in: the link it was made with
    session_sha256 VARCHAR,           -- sign_in, sign_out: the browser session
    sign_in VARCHAR,                  -- sign_in: oidc, link
    made_by VARCHAR NOT NULL,         -- who made the event (the person themself for a sign-in)
    created_at TIMESTAMP NOT NULL
);

-- Demo packs (faithlens.llm.packs): stored answers carried from one database to another in one file,
-- so a demo prepared with keys replays offline from the cache. One row per import of a pack file
-- (`pack_sha256` is the file's digest): what it held, what it added, and what it left alone.
CREATE TABLE IF NOT EXISTS llm_pack_import (
    pack_sha256 VARCHAR NOT NULL,
    file_name VARCHAR NOT NULL,
    exported_at VARCHAR,              -- as the pack says
    dataset VARCHAR NOT NULL,
    answers INTEGER NOT NULL,         -- answers in the pack
    added INTEGER NOT NULL,           -- stored by this import
    already INTEGER NOT NULL,         -- the same answer was stored here already
    differing INTEGER NOT NULL,       -- another answer was stored here under the same request and sample: kept, not overwritten
    imported_by VARCHAR,
    imported_at TIMESTAMP NOT NULL,
    PRIMARY KEY (pack_sha256, imported_at)
);

-- Which stored answers came from a pack, and who asked them where they were bought: llm_call.person
-- stays NULL on an imported answer (paid for elsewhere, it counts toward no budget here), its
-- created_at is when it was bought.
CREATE TABLE IF NOT EXISTS llm_pack_call (
    call_id BIGINT PRIMARY KEY,
    pack_sha256 VARCHAR NOT NULL,
    file_name VARCHAR NOT NULL,
    asked_by VARCHAR
);
