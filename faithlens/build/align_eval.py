"""How well each ranker finds a claim's evidence, measured on FABLES' human evidence quotes (issue 29).

FABLES' annotators, who had read the book, backed most claims with quotes from it. Book texts are
not released, so the passages are the quotes themselves: per book, the evidence quotes of all its
claims (every summary's), identical quote strings counted once, in sorted order so that a tie
favours no claim in particular (in order of first citation, each claim's own quotes would come
before those cited only by later claims). Each claim with at least one quote is a query against its
book's passages; it is a hit at k when one of its own quotes is among the ranker's top k.
recall@k = hits / claims evaluated; claims without a quote are counted and left out.

This undercounts every ranker alike (another claim's quote can be equally good evidence), so it
compares rankers rather than measuring any one absolutely. Gold claim labels are read from
`current_label` (source 'gold', level 'claim', its `evidence` list); a claim's book is
unit -> summary -> document.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from faithlens.build.rankers import Ranker, registry
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.vocab import GOLD

DATASET = "fables"
KS = (1, 3, 5)
NOTE = "undercounts every ranker alike: another claim's quote can be equal evidence; compare rankers, not absolutes"


@dataclass(frozen=True)
class Book:
    """One FABLES document: its pooled passages and, per claim with quotes, the claim's text and the
    indices of its own quotes among the passages."""

    document_id: str
    passages: tuple[str, ...]
    claims: tuple[str, ...]
    quotes: tuple[frozenset[int], ...]


@dataclass(frozen=True)
class EvidenceSet:
    books: tuple[Book, ...]
    claims_without_quotes: int

    @property
    def claims(self) -> int:
        return sum(len(book.claims) for book in self.books)

    @property
    def passages(self) -> int:
        return sum(len(book.passages) for book in self.books)


@dataclass(frozen=True)
class RankerResult:
    name: str
    version: str
    recall: dict[int, float]
    ms_per_claim: float


def book(document_id: str, claims: Sequence[tuple[str, Sequence[str]]]) -> Book:
    """The book's passages (its claims' quotes, deduplicated, sorted) and its claims that quote any."""
    passages = tuple(sorted({quote for _, quotes in claims for quote in quotes}))
    index = {passage: position for position, passage in enumerate(passages)}
    quoted = [(text, frozenset(index[quote] for quote in quotes)) for text, quotes in claims if quotes]
    return Book(document_id, passages, tuple(text for text, _ in quoted), tuple(own for _, own in quoted))


def evidence_set(cur: duckdb.DuckDBPyConnection, dataset: str = DATASET) -> EvidenceSet:
    """FABLES' claims and their gold evidence quotes, grouped by book."""
    rows = cur.execute(
        """
        SELECT s.document_id, u.text, coalesce(l.evidence, [])
        FROM current_label l
        JOIN unit u ON u.dataset = l.dataset AND u.unit_id = l.target_id AND u.kind = 'claim'
        JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
        WHERE l.dataset = ? AND l.source = ? AND l.level = 'claim'
        ORDER BY s.document_id, s.summary_id, u.position
        """,
        [dataset, GOLD],
    ).fetchall()
    if not rows:
        raise NotFoundError(
            f"this database has no {dataset} claims with gold labels",
            "build it with `python -m faithlens ingest` from a data/ folder that holds fables/",
        )
    by_book: dict[str, list[tuple[str, list[str]]]] = {}
    for document_id, text, quotes in rows:
        by_book.setdefault(document_id, []).append((text, quotes))
    books = tuple(book(document_id, claims) for document_id, claims in by_book.items())
    without = sum(1 for _, _, quotes in rows if not quotes)
    return EvidenceSet(books, without)


def evaluate(books: Sequence[Book], ranker: Ranker, ks: Sequence[int] = KS) -> RankerResult:
    """recall@k of `ranker` for each k in `ks`, and its wall time per claim (indexing included)."""
    import numpy as np

    deepest = max(ks)
    first_hits: list[int] = []  # per claim: rank (0-based) of its first own quote in the top `deepest`, else -1
    started = time.perf_counter()
    for each in books:
        if not each.claims:
            continue
        top = ranker.top(list(each.claims), list(each.passages), deepest)
        for ranked, own in zip(top.tolist(), each.quotes, strict=True):
            first_hits.append(next((rank for rank, passage in enumerate(ranked) if passage in own), -1))
    elapsed_ms = (time.perf_counter() - started) * 1000
    found = np.array(first_hits)
    claims = len(first_hits)
    recall = {k: float(np.count_nonzero((found >= 0) & (found < k)) / claims) if claims else 0.0 for k in ks}
    return RankerResult(ranker.name, ranker.version, recall, elapsed_ms / claims if claims else 0.0)


def evaluate_all(
    cur: duckdb.DuckDBPyConnection, ks: Sequence[int] = KS, names: Sequence[str] = ()
) -> tuple[EvidenceSet, list[RankerResult]]:
    """The FABLES evidence set and the results on it of the rankers `names` (empty: every registered
    one), in the registry's order. An unknown name is refused before anything is ranked."""
    rankers = registry()
    unknown = [name for name in names if name not in rankers]
    if unknown:
        raise FaithLensError(f"no ranker named {', '.join(map(repr, unknown))}", f"use one of {', '.join(rankers)}")
    chosen = [ranker for name, ranker in rankers.items() if not names or name in names]
    evidence = evidence_set(cur)
    return evidence, [evaluate(evidence.books, ranker, ks) for ranker in chosen]


def as_json(evidence: EvidenceSet, results: Sequence[RankerResult]) -> dict[str, object]:
    """The report `align-eval --json` prints: the set's counts, each ranker's recall@k and speed."""
    books = len(evidence.books)
    return {
        "set": {
            "dataset": DATASET,
            "books": books,
            "claims": evidence.claims,
            "claims_without_quotes": evidence.claims_without_quotes,
            "passages": evidence.passages,
            "passages_per_book": round(evidence.passages / books, 2) if books else 0.0,
        },
        "rankers": [
            {
                "name": result.name,
                "version": result.version,
                "recall": {str(k): round(value, 4) for k, value in result.recall.items()},
                "ms_per_claim": round(result.ms_per_claim, 3),
            }
            for result in results
        ],
        "note": NOTE,
    }
