"""One label source of a dataset as a file: its current label of every unit it labels, with the unit's
text context, and for an LLM source the stored answer behind each label (prompt and version, model,
parameters, tokens, cost, who asked and when). API keys are never stored, so no export holds one.

DuckDB writes the file itself (`COPY (query) TO ...`), in the three formats the coding export offers:
no row passes through Python, and Parquet needs neither pandas nor pyarrow. In CSV the list columns
(evidence, reasons) are JSON arrays; JSON Lines and Parquet keep them as lists."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from faithlens.errors import FaithLensError, NotFoundError

FORMATS = ("csv", "jsonl", "parquet")
MIME = {"csv": "text/csv", "jsonl": "application/jsonl", "parquet": "application/vnd.apache.parquet"}
_COPY_OPTIONS = {"csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json", "parquet": "FORMAT parquet"}

UNIT_COLUMNS = (
    "dataset",
    "source",
    "source_kind",
    "level",
    "unit_id",
    "summary_id",
    "document_id",
    "document_title",
    "generator",
    "split",
    "document_text",
    "summary_text",
    "unit_text",
    "label",
    "raw_label",
    "score",
    "explanation",
    "evidence",
    "reasons",
    "labelled_by",
    "labelled_at",
    "event_id",
)
"""Every source's columns: the unit (for a summary-level label, unit_id is the summary id and unit_text
is empty), its context, the label as the shared vocabulary and as the source spelled it."""
LLM_COLUMNS = (
    "rewrite",
    "raw_output",
    "prompt",
    "prompt_version",
    "provider",
    "base_url",
    "model",
    "parameters",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "asked_by",
    "asked_at",
    "from_pack",
    "call_id",
    "sample",
)
"""An LLM source's columns beyond UNIT_COLUMNS: the stored answer behind the label (`call_id`, `sample`
of `llm_call`); a label whose answer is not found (a self-consistency majority) takes the source's
prompt, model and parameters. `from_pack` names the demo pack an imported answer came in."""

_LABELS = """
WITH current AS (
    SELECT * FROM label WHERE dataset = $dataset AND source = $source
    QUALIFY row_number() OVER (PARTITION BY dataset, source, level, target_id ORDER BY event_id DESC) = 1
)
SELECT l.dataset, l.source, $kind AS source_kind, l.level, l.target_id AS unit_id, s.summary_id,
       s.document_id, d.title AS document_title, s.model AS generator, s.split, d.text AS document_text,
       s.text AS summary_text, u.text AS unit_text, l.value::VARCHAR AS label, l.raw_value AS raw_label, l.score,
       l.explanation, l.evidence, l.reasons, l.created_by AS labelled_by, l.created_at AS labelled_at, l.event_id
       {llm_columns}
FROM current l
LEFT JOIN unit u ON l.level <> 'summary' AND u.dataset = l.dataset AND u.unit_id = l.target_id
JOIN summary s ON s.dataset = l.dataset AND s.summary_id = CASE WHEN l.level = 'summary' THEN l.target_id ELSE u.summary_id END
LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
{llm_joins}
ORDER BY s.summary_id, CASE l.level WHEN 'summary' THEN 0 WHEN 'sentence' THEN 1 ELSE 2 END, u.kind, u.position
"""

_LLM_SELECT = """,
       l.rewrite, l.raw_output, coalesce(c.prompt_name, split_part(ls.prompt_version, '@', 1)) AS prompt,
       coalesce(c.prompt_version, nullif(split_part(ls.prompt_version, '@', 2), '')) AS prompt_version,
       coalesce(c.provider, ls.provider) AS provider, c.base_url, coalesce(c.model, ls.model) AS model,
       coalesce(c.parameters, ls.parameters) AS parameters,
       coalesce(c.input_tokens, l.input_tokens) AS input_tokens, coalesce(c.output_tokens, l.output_tokens) AS output_tokens,
       coalesce(c.cost_usd, l.cost_usd) AS cost_usd, coalesce(c.person, p.asked_by) AS asked_by,
       c.created_at AS asked_at, p.file_name AS from_pack, c.call_id, c.sample"""

_LLM_JOINS = """
LEFT JOIN label_source ls ON ls.dataset = l.dataset AND ls.source = l.source
LEFT JOIN (
    -- The stored answer behind each label: the same text from the same source, this target's own call
    -- first (a cached answer given to another unit of the same text was bought for the first one).
    SELECT l2.event_id, c2.*
    FROM current l2 JOIN llm_call c2 ON c2.dataset = l2.dataset AND c2.source = l2.source
        AND array_to_string(c2.replies, chr(10) || chr(10)) = l2.raw_output
    QUALIFY row_number() OVER (
        PARTITION BY l2.event_id ORDER BY (c2.target_id = l2.target_id) DESC, c2.call_id DESC) = 1
) c ON c.event_id = l.event_id
LEFT JOIN {pack_calls} p ON p.call_id = c.call_id
"""
_NO_PACKS = "(SELECT NULL::BIGINT AS call_id, NULL AS asked_by, NULL AS file_name)"
"""Stands for llm_pack_call in a database made before demo packs (a read-only open adds no tables)."""


@dataclass(frozen=True)
class Source:
    """A label source of a dataset as the export names it."""

    dataset: str
    name: str
    kind: str

    @property
    def columns(self) -> tuple[str, ...]:
        return UNIT_COLUMNS + (LLM_COLUMNS if self.kind == "llm" else ())


def sources(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Source]:
    """Every source with labels in `dataset` (gold first, then by name); NotFoundError for no such dataset."""
    names = [row[0] for row in cur.execute("SELECT name FROM dataset ORDER BY name").fetchall()]
    if dataset not in names:
        raise NotFoundError(f"no dataset {dataset!r}", f"use one of {', '.join(names) or '(none loaded)'}")
    rows = cur.execute(
        """
        SELECT l.source, coalesce(any_value(s.kind), 'evaluator') FROM label l
        LEFT JOIN label_source s ON s.dataset = l.dataset AND s.source = l.source
        WHERE l.dataset = ? GROUP BY l.source ORDER BY l.source <> 'gold', l.source
        """,
        [dataset],
    ).fetchall()
    return [Source(dataset, name, kind) for name, kind in rows]


def source(cur: duckdb.DuckDBPyConnection, dataset: str, name: str) -> Source:
    """The source `name` of `dataset`, or one line naming the sources it has."""
    found = sources(cur, dataset)
    for candidate in found:
        if candidate.name == name:
            return candidate
    listed = ", ".join(s.name for s in found) or "none yet"
    raise NotFoundError(f"dataset {dataset!r} has no label source {name!r}", f"its sources: {listed}")


def has_labels(cur: duckdb.DuckDBPyConnection, dataset: str, name: str) -> bool:
    """Whether source `name` of `dataset` has any label yet (a run's source may have none)."""
    found = cur.execute(
        "SELECT count(*) FROM (SELECT 1 FROM label WHERE dataset = ? AND source = ? LIMIT 1)", [dataset, name]
    )
    return found.fetchone()[0] > 0


def export(conn: duckdb.DuckDBPyConnection, dataset: str, name: str, fmt: str, out: Path) -> int:
    """Write the current labels of source `name` of `dataset` to `out` as `fmt`; returns the rows written.
    The file is replaced if it exists; nothing is written when an argument is wrong."""
    if fmt not in FORMATS:
        raise FaithLensError(f"unknown export format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    if not out.parent.is_dir():
        raise FaithLensError(f"{out}: the folder {out.parent} does not exist", "create it first, or write elsewhere")
    with conn.cursor() as cur:
        found = source(cur, dataset, name)
        query = _query(cur, found, fmt)
        params = {"dataset": dataset, "source": name, "kind": found.kind}
        rows = cur.execute(f"SELECT count(*) FROM ({query})", params).fetchone()[0]
        target = str(out).replace("'", "''")
        cur.execute(f"COPY ({query}) TO '{target}' ({_COPY_OPTIONS[fmt]})", params)
    return rows


def export_bytes(conn: duckdb.DuckDBPyConnection, dataset: str, name: str, fmt: str) -> bytes:
    """The file `export` writes, as bytes (a page's download), through a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"labels.{fmt}"
        export(conn, dataset, name, fmt, out)
        return out.read_bytes()


def file_name(dataset: str, name: str, fmt: str) -> str:
    """A download's file name: `<dataset>_<source>.<fmt>`, the source's slashes and colons as dashes."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)
    return f"{dataset}_{safe}.{fmt}"


def _query(cur: duckdb.DuckDBPyConnection, found: Source, fmt: str) -> str:
    llm = found.kind == "llm"
    packs = cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'llm_pack_call'")
    pack_calls = "llm_pack_call" if packs.fetchone()[0] else _NO_PACKS
    query = _LABELS.format(
        llm_columns=_LLM_SELECT if llm else "", llm_joins=_LLM_JOINS.format(pack_calls=pack_calls) if llm else ""
    )
    if fmt == "csv":
        return f"SELECT * REPLACE (to_json(evidence) AS evidence, to_json(reasons) AS reasons) FROM ({query})"
    return query
