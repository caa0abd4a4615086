"""The LLM cache and its label events: every answer is an `llm_call` row, and an answer that parsed is
also a label event of an LLM label source, written in the same transaction, so a finished answer is
never lost and the read side (Explore's colouring, Compare) picks it up at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from faithlens import store

LLM_ORIGIN = "app"
"""label_source.origin of LLM sources: not 'bundled', so a re-ingest of the benchmarks keeps them."""
PAID_PATIENCE_S = 600
"""How long a paid answer (and a run's record of it) waits for a team store that does not answer
before it is given up: a store restart must not cost an answer."""


def request_key(identity: dict[str, object]) -> str:
    """sha256 of the request's identity (provider, base URL, model, prompt version, parameters, messages)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class Call:
    """One answer as stored in `llm_call` (and read back from it on a cache hit)."""

    request_key: str
    sample: int
    dataset: str | None
    level: str | None
    target_id: str | None
    source: str
    provider: str
    base_url: str | None
    model: str
    method: str
    prompt_name: str
    prompt_version: str
    parameters: dict
    request: dict
    replies: list[str]
    status: str
    failure: str | None
    parsed: dict
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    latency_ms: float | None
    call_id: int | None = None
    person: str | None = None
    """Whom the answer was charged to (faithlens.access): the asker sets it; a cache hit costs nothing."""

    @property
    def raw_output(self) -> str:
        """The replies as one text, as label events keep it."""
        return "\n\n".join(self.replies)


@dataclass(frozen=True)
class LabelEvent:
    """The label event an answer becomes: a verdict with its explanation, or a rewrite, plus tags."""

    value: str | None
    raw_value: str | None
    explanation: str | None = None
    rewrite: str | None = None
    tags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Tag families set by this answer, e.g. {'ambiguity_type': ('2',)}; replaces the source's earlier ones."""
    claims: tuple[str, ...] = ()
    """Claims extracted from a summary: stored as a new claim set (units) of that summary."""


_JSON_FIELDS = ("parameters", "request", "parsed")
_STORED = tuple(f.name for f in dataclasses.fields(Call) if f.name != "call_id")
"""The `llm_call` columns an answer fills; `call_id` comes from the sequence."""


def latest(cur: duckdb.DuckDBPyConnection, key: str, sample: int | None = None) -> Call | None:
    """The newest stored answer to this exact request (or its answer number `sample`), or None.

    Found by its key and sample number: a top-N over whole rows (`ORDER BY sample DESC LIMIT 1`)
    costs DuckDB several times more, and every item of a run looks its answer up first."""
    if sample is None:
        sample = cur.execute("SELECT max(sample) FROM llm_call WHERE request_key = ?", [key]).fetchone()[0]
        if sample is None:
            return None
    found = store.fetch_one(
        cur, Call, "SELECT * EXCLUDE (created_at) FROM llm_call WHERE request_key = ? AND sample = ?", [key, sample]
    )
    if found is None:
        return None
    decoded = {name: json.loads(getattr(found, name)) for name in _JSON_FIELDS}
    return dataclasses.replace(found, replies=list(found.replies), **decoded)


def next_sample(cur: duckdb.DuckDBPyConnection, key: str) -> int:
    return cur.execute("SELECT coalesce(max(sample) + 1, 0) FROM llm_call WHERE request_key = ?", [key]).fetchone()[0]


AlsoWrite = Callable[[duckdb.DuckDBPyConnection, Call], None]
"""Rows to write in the same transaction as a new answer, given the stored call (with its call_id)."""


def save(
    conn: duckdb.DuckDBPyConnection,
    call: Call,
    label: LabelEvent | None,
    description: str,
    also: AlsoWrite | None = None,
) -> int:
    """Store the answer and, when it parsed, its label event and tags, in one transaction; returns call_id.

    When its sample number was taken meanwhile (another server of a team bought an answer to the same
    request at the same time), the answer is kept as the next sample: paid for, it is never dropped."""

    def body(cur: duckdb.DuckDBPyConnection) -> int:
        taken = cur.execute(
            "SELECT count(*) FROM llm_call WHERE request_key = ? AND sample = ?", [call.request_key, call.sample]
        ).fetchone()[0]
        stored = dataclasses.replace(call, sample=next_sample(cur, call.request_key)) if taken else call
        values = [json.dumps(getattr(stored, n)) if n in _JSON_FIELDS else getattr(stored, n) for n in _STORED]
        new_id, id_params = store.new_id(cur, "llm_call_seq")
        call_id = cur.execute(
            f"INSERT INTO llm_call (call_id, {', '.join(_STORED)}, created_at) "
            f"VALUES ({new_id}{', ?' * len(_STORED)}, ?) RETURNING call_id",
            [*id_params, *values, store.stamp()],
        ).fetchone()[0]
        if label is not None and stored.dataset is not None:
            _label(cur, stored, label, description)
        if also is not None:
            also(cur, dataclasses.replace(stored, call_id=call_id))
        return call_id

    return store.write_grouped(conn, f"llm {call.method} {call.source}", body, patience_s=PAID_PATIENCE_S)


def attach(conn: duckdb.DuckDBPyConnection, call: Call, label: LabelEvent, description: str) -> None:
    """A cached answer asked about another target with the same text: give that target its label event."""
    store.write_retrying(
        conn, f"llm {call.method} {call.source} (cached)", lambda cur: _label(cur, call, label, description)
    )


def has_label(cur: duckdb.DuckDBPyConnection, call: Call, label: LabelEvent) -> bool:
    """Whether this stored answer already is the target's label event (or tags) for its source."""
    if label.claims:
        prefix = claim_set_id(call.target_id, call.request_key, call.sample)
        found = cur.execute(
            "SELECT count(*) FROM unit WHERE dataset = ? AND unit_id = ?", [call.dataset, prefix + "c0"]
        )
        return found.fetchone()[0] > 0
    if label.value is None:
        found = cur.execute(
            "SELECT list(value ORDER BY value) FROM tag WHERE dataset = ? AND level = ? AND target_id = ? AND source = ?",
            [call.dataset, call.level, call.target_id, call.source],
        ).fetchone()[0]
        return sorted(v for values in label.tags.values() for v in values) == (found or [])
    row = cur.execute(
        f"""
        SELECT raw_output FROM label WHERE dataset = ? AND source = ? AND level = ? AND target_id = ? {store.LATEST_LABEL}
        """,
        [call.dataset, call.source, call.level, call.target_id],
    ).fetchone()
    return row is not None and row[0] == call.raw_output


def _label(cur: duckdb.DuckDBPyConnection, call: Call, label: LabelEvent, description: str) -> None:
    """The label event (and source row), or for a tag-only answer (no verdict) just its tags, or for
    an extraction the new claim set."""
    _tags(cur, call, label.tags)
    _claims(cur, call, label.claims)
    if label.value is None:
        return
    row = [
        call.dataset,
        call.source,
        description,
        LLM_ORIGIN,
        call.provider if not call.base_url else f"{call.provider} at {call.base_url}",
        call.model,
        f"{call.prompt_name}@{call.prompt_version}",
        json.dumps(call.parameters),
    ]
    same = cur.execute(
        "SELECT count(*) FROM label_source WHERE dataset = ? AND source = ? AND description = ? AND origin = ? "
        "AND provider = ? AND model = ? AND prompt_version = ? AND parameters::VARCHAR = ?",
        row,
    ).fetchone()[0]
    if not same:  # an upsert costs a few ms; a run's thousands of answers mostly find their source as it is
        cur.execute(
            """
            INSERT INTO label_source (dataset, source, kind, description, origin, provider, model, prompt_version,
                                      parameters, created_at)
            VALUES (?, ?, 'llm', ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (dataset, source) DO UPDATE SET prompt_version = excluded.prompt_version,
                parameters = excluded.parameters, description = excluded.description
            """,
            [*row, store.stamp()],
        )
    cur.execute(
        """
        INSERT INTO label (dataset, source, level, target_id, value, raw_value, explanation, raw_output, rewrite,
                           input_tokens, output_tokens, cost_usd, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            call.dataset,
            call.source,
            call.level,
            call.target_id,
            label.value,
            label.raw_value,
            label.explanation,
            call.raw_output,
            label.rewrite,
            call.input_tokens,
            call.output_tokens,
            call.cost_usd,
            store.stamp(),
        ],
    )


def _tags(cur: duckdb.DuckDBPyConnection, call: Call, tags: dict[str, tuple[str, ...]]) -> None:
    for family, values in tags.items():
        cur.execute(
            "DELETE FROM tag WHERE dataset = ? AND level = ? AND target_id = ? AND kind = ? AND source = ?",
            [call.dataset, call.level, call.target_id, family, call.source],
        )
        for value in values:
            cur.execute(
                "INSERT INTO tag (dataset, level, target_id, kind, value, source) VALUES (?, ?, ?, ?, ?, ?)",
                [call.dataset, call.level, call.target_id, family, value, call.source],
            )


def claim_set_id(summary_id: str, request_key: str, sample: int) -> str:
    """Prefix of the unit ids of one extracted claim set: apart from the dataset's own claims (`#c`)."""
    return f"{summary_id}#x{request_key[:8]}.{sample}"


def _claims(cur: duckdb.DuckDBPyConnection, call: Call, claims: tuple[str, ...]) -> None:
    """Append the claims after the summary's existing ones; `attributes.claim_set` names the source.

    A re-ingest of the bundled datasets keeps them (see `build.ingest`)."""
    if not claims:
        return
    start = cur.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM unit WHERE dataset = ? AND summary_id = ? AND kind = 'claim'",
        [call.dataset, call.target_id],
    ).fetchone()[0]
    prefix = claim_set_id(call.target_id, call.request_key, call.sample)
    attributes = json.dumps({"claim_set": call.source, "prompt": f"{call.prompt_name}@{call.prompt_version}"})
    for offset, text in enumerate(claims):
        cur.execute(
            "INSERT INTO unit (dataset, unit_id, summary_id, kind, position, text, attributes) "
            "VALUES (?, ?, ?, 'claim', ?, ?, ?) ON CONFLICT DO NOTHING",
            [call.dataset, f"{prefix}c{offset}", call.target_id, start + offset, text, attributes],
        )
