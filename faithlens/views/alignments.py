"""A summary's stored alignments by one ranker, for the Explore page: each unit's best passages, which
ranker version computed them and when, and the reverse direction (a passage's aligned units).

Read apart from the rest of the summary's detail, so switching the ranker reads only this."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb

from faithlens.build.alignment import Match


@dataclass(frozen=True)
class StoredAlignment:
    """`ranker`'s stored alignment of one summary's units. `version` and `aligned_at` are None when that
    ranker has not aligned the document (`matches` is then empty)."""

    ranker: str
    version: str | None
    aligned_at: datetime | None
    matches: dict[str, tuple[Match, ...]]

    @property
    def stored(self) -> bool:
        return self.version is not None


def load_alignment(
    cur: duckdb.DuckDBPyConnection, dataset: str, document_id: str, unit_ids: Sequence[str], ranker: str
) -> StoredAlignment:
    """What `ranker` stored for these units of `document_id`."""
    recorded = cur.execute(
        "SELECT version, aligned_at FROM alignment_ranker WHERE dataset = ? AND document_id = ? AND ranker = ?",
        [dataset, document_id, ranker],
    ).fetchone()
    if recorded is None:
        return StoredAlignment(ranker, None, None, {})
    rows = cur.execute(
        """
        SELECT unit_id, list({'rank': rank, 'start': start_char, 'end': end_char, 'score': score} ORDER BY rank)
        FROM alignment
        WHERE dataset = ? AND ranker = ? AND unit_id IN (SELECT unnest(?::VARCHAR[]))
        GROUP BY unit_id
        """,
        [dataset, ranker, list(unit_ids)],
    ).fetchall()
    matches = {unit_id: tuple(Match(**item) for item in found) for unit_id, found in rows}
    return StoredAlignment(ranker, recorded[0], recorded[1], matches)


def select_matches(matches: Sequence[Match], top_k: int, min_score: float | None = None) -> list[Match]:
    """The stored passages the reader asked for: at most `top_k`, each scoring at least `min_score`
    (None: any score, for rankers whose scores have no fixed scale)."""
    return [m for m in matches if m.rank <= top_k and (min_score is None or m.score >= min_score)]


def aligned_to(
    alignment: StoredAlignment, start: int, end: int, top_k: int, min_score: float | None = None
) -> dict[str, int]:
    """unit id -> the rank at which the passage [start, end) is among that unit's shown passages."""
    return {
        unit_id: match.rank
        for unit_id, matches in alignment.matches.items()
        for match in select_matches(matches, top_k, min_score)
        if (match.start, match.end) == (start, end)
    }


def passages(alignment: StoredAlignment, top_k: int, min_score: float | None = None) -> list[tuple[int, int]]:
    """Every passage shown for any unit, in source order: the passages a reader can pick."""
    spans = {
        (m.start, m.end) for matches in alignment.matches.values() for m in select_matches(matches, top_k, min_score)
    }
    return sorted(spans)
