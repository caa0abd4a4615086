"""Every label source's verdict on each unit of one summary: what hovering (or focusing) a sentence on
Explore lists, beside the one source that colours it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from faithlens.store import LATEST_LABEL
from faithlens.vocab import GOLD


@dataclass(frozen=True)
class UnitVerdict:
    source: str
    label: str | None
    score: float | None


def load(cur: duckdb.DuckDBPyConnection, dataset: str, unit_ids: Sequence[str]) -> dict[str, tuple[UnitVerdict, ...]]:
    """unit id -> the latest label of every source that labels it at its own level (a sentence's
    sentence labels, a claim's claim labels), gold first, then by source name."""
    rows = cur.execute(
        f"""
        WITH units AS (SELECT unit_id, kind FROM unit WHERE dataset = ? AND unit_id IN (SELECT unnest(?::VARCHAR[])))
        SELECT l.target_id, l.source, l.value::VARCHAR, l.score
        FROM label l JOIN units u ON u.unit_id = l.target_id AND u.kind = l.level
        WHERE l.dataset = ? {LATEST_LABEL}
        ORDER BY l.target_id, l.source <> ?, l.source
        """,
        [dataset, list(unit_ids), dataset, GOLD],
    ).fetchall()
    found: dict[str, list[UnitVerdict]] = {}
    for unit_id, source, label, score in rows:
        found.setdefault(unit_id, []).append(UnitVerdict(source, label, score))
    return {unit_id: tuple(verdicts) for unit_id, verdicts in found.items()}
