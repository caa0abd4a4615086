"""Read models of the Rewrite page: the summaries to pick from, the sentences of one in order, the
earlier rewrites of a sentence with ARM's signals against it, and the stored rewrites a demo server
replays."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens.analysis.generator_names import generator_sql
from faithlens.build.text import split_sentences
from faithlens.llm import costs, methods, signals
from faithlens.llm.usage import PastAnswer
from faithlens.store import fetch_all, natural_key


@dataclass(frozen=True)
class SummaryChoice:
    summary_id: str
    document: str
    model: str | None

    def __str__(self) -> str:
        return f"{self.document} · {self.model or 'unknown generator'} · {self.summary_id[:12]}"


@dataclass(frozen=True)
class SentenceChoice:
    unit_id: str
    position: int
    text: str


def summary_choices(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[SummaryChoice]:
    """Every summary of the dataset that has sentences, by document (natural order) then generator."""
    return fetch_all(
        cur,
        SummaryChoice,
        f"""
        SELECT s.summary_id, coalesce(d.title, d.document_id) AS document, {generator_sql("s")} AS model
        FROM summary s JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE s.dataset = ? AND EXISTS (
            SELECT 1 FROM unit u WHERE u.dataset = s.dataset AND u.summary_id = s.summary_id AND u.kind = 'sentence')
        ORDER BY {natural_key("coalesce(d.title, d.document_id)")}, model, s.summary_id
        """,
        [dataset],
    )


def sentences(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str) -> list[SentenceChoice]:
    return fetch_all(
        cur,
        SentenceChoice,
        "SELECT unit_id, position, text FROM unit WHERE dataset = ? AND summary_id = ? AND kind = 'sentence' "
        "ORDER BY position",
        [dataset, summary_id],
    )


@dataclass(frozen=True)
class StoredDemo:
    """A sentence with a stored ARM rewrite, and how it was asked: asking the same replays it from the cache."""

    summary_id: str
    unit_id: str
    position: int
    text: str
    provider: str
    base_url: str | None
    model: str
    variant: str
    answers: int

    def __str__(self) -> str:
        text = self.text if len(self.text) <= 70 else self.text[:69] + "…"
        return f"{self.summary_id[:12]} · S{self.position + 1}: {text} · {self.model} ({self.variant})"


def stored_demos(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[StoredDemo]:
    """Every sentence of the dataset with a stored ARM rewrite that parsed, once per model and variant it
    was asked with: what a demo server offers to replay (it asks no model)."""
    arm = methods.METHODS["arm-rewrite"]
    variants = {name: variant for variant in arm.variants for name in arm.template_names(variant, "sentence")}
    rows = cur.execute(
        """
        SELECT u.summary_id, u.unit_id, u.position, u.text, c.provider, c.base_url, c.model, c.prompt_name, count(*)
        FROM llm_call c JOIN unit u ON u.dataset = c.dataset AND u.unit_id = c.target_id AND u.kind = 'sentence'
        WHERE c.dataset = ? AND c.method = ? AND c.status = 'ok'
        GROUP BY ALL ORDER BY u.summary_id, u.position, c.model, c.prompt_name
        """,
        [dataset, arm.name],
    ).fetchall()
    return [StoredDemo(*row[:7], variants[row[7]], row[8]) for row in rows if row[7] in variants]


def split_pasted(summary: str) -> list[str]:
    """A pasted summary's sentences, split as ingest splits published summaries."""
    return [summary[start:end] for start, end in split_sentences(summary)]


def earlier_rows(past: list[PastAnswer], original: str) -> list[dict[str, object]]:
    """Earlier answers about a sentence as table rows: each rewrite with r != s, its edit distance on ARM
    Table 3's 0-1 scale and its word edits against `original` (empty for an answer without a rewrite)."""
    rows = []
    for answer in past:
        rewrite = answer.rewrite
        rows.append(
            {
                "when": answer.created_at,
                "model": answer.model,
                "prompt": answer.prompt,
                "status": answer.status,
                "rewrite": rewrite,
                "r ≠ s": None if rewrite is None else signals.rewritten(original, rewrite),
                "edit distance (0–1)": None if rewrite is None else signals.normalized_edit_distance(original, rewrite),
                "word edits": None if rewrite is None else signals.edit_distance(original, rewrite),
                "cost": costs.describe_cost(answer.cost_usd),
            }
        )
    return rows
