"""Unit-to-passage alignment (summary sentences and claims), computed once at ingest so pages only read it.

Passages are the source's own sentences, adjusted on both sides of a useful size:

* A highlight should point at the words that support a summary sentence, so the unit is a
  sentence rather than a fixed-size window that cuts through sentences and makes the reader
  hunt for the boundaries.
* Very short sentences ("The song continued.", dialogue such as "Yes.") are merged with the next
  one: on their own, their few words appear in many summary sentences and would outrank the real
  support.
* Very long ones (meeting transcripts without punctuation) are cut into windows of at most
  MAX_PASSAGE_TOKENS words, so one run-on turn cannot match every summary sentence.

Passages are ordered by a ranker of `faithlens.build.rankers`: at ingest and import by its
`DEFAULT` (BM25, the best of them on FABLES' evidence quotes, see `python -m faithlens align-eval`),
and by any other on demand. Every row is stored with its ranker's name, and `alignment_ranker`
records, per document and ranker, the ranker's exact version and when it aligned. The stored score is
the ranker's own: token_set_ratio 0..100, a BM25 score, a cosine, fused reciprocal ranks.

Every unit keeps its TOP_K best passages; the page filters them by rank (and, for the lexical ranker,
score) at read time, so its controls always act on stored data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.build.rankers import DEFAULT, registry
from faithlens.build.text import split_sentences, tokenize, word_count

MIN_PASSAGE_TOKENS = 6
MAX_PASSAGE_TOKENS = 80
TOP_K = 5


@dataclass(frozen=True)
class Match:
    """One passage of the source for one summary sentence: rank 1 is the best."""

    rank: int
    start: int
    end: int
    score: float


def passages(text: str) -> list[tuple[int, int]]:
    """Character spans of the passages of `text` (see the module docstring for why these)."""
    merged: list[tuple[int, int]] = []
    pending: tuple[int, int] | None = None
    for start, end in split_sentences(text):
        if pending is not None:
            start = pending[0]
        if word_count(text[start:end]) < MIN_PASSAGE_TOKENS:
            pending = (start, end)
            continue
        pending = None
        merged.extend(_windows(text, start, end))
    if pending is not None:
        if merged and word_count(text[pending[0] : pending[1]]) < MIN_PASSAGE_TOKENS:
            merged[-1] = (merged[-1][0], pending[1])
        else:
            merged.append(pending)
    return merged


def _windows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    if word_count(text[start:end]) <= MAX_PASSAGE_TOKENS:
        return [(start, end)]
    tokens = tokenize(text[start:end])
    chunks = [tokens[i : i + MAX_PASSAGE_TOKENS] for i in range(0, len(tokens), MAX_PASSAGE_TOKENS)]
    spans = [(start + chunk[0].start, start + chunk[-1].end) for chunk in chunks]
    spans[0] = (start, spans[0][1])
    spans[-1] = (spans[-1][0], end)
    return spans


def align(sentences: list[str], text: str, top_k: int = TOP_K, ranker: str = DEFAULT) -> list[list[Match]]:
    """For each sentence or claim, its `top_k` best passages of `text` by `ranker`, best first."""
    spans = passages(text)
    if not spans or not sentences:
        return [[] for _ in sentences]
    order, scores = registry()[ranker].ranking(sentences, [text[start:end] for start, end in spans], top_k)
    return [
        [
            Match(rank + 1, spans[column][0], spans[column][1], round(float(scores[row, column]), 6))
            for rank, column in enumerate(columns)
        ]
        for row, columns in enumerate(order.tolist())
    ]


def align_documents(
    cur: duckdb.DuckDBPyConnection, dataset: str, document_ids: Iterable[str] | None = None, ranker: str = DEFAULT
) -> int:
    """(Re)compute and store, by `ranker`, the alignments of every summary sentence and claim of the
    given documents.

    `document_ids=None` means every document of `dataset`. Documents without text are skipped (their
    old alignments by this ranker, if any, are removed). Runs inside the caller's transaction; returns
    the number of alignment rows written.
    """
    ids = None if document_ids is None else sorted(set(document_ids))
    if ids == []:
        return 0
    found = documents(cur, dataset, ids)
    return replace(cur, dataset, ids, ranker, [row[0] for row in found], aligned(dataset, found, ranker))


def documents(cur: duckdb.DuckDBPyConnection, dataset: str, ids: list[str] | None) -> list[Document]:
    """The documents `ids` (None: all) of `dataset` that have text, with their summary units."""
    return cur.execute(
        """
        SELECT d.document_id, d.text, list(u.unit_id ORDER BY u.summary_id, u.kind DESC, u.position),
               list(u.text ORDER BY u.summary_id, u.kind DESC, u.position)
        FROM document d
        JOIN summary s ON s.dataset = d.dataset AND s.document_id = d.document_id
        JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id AND u.kind IN ('sentence', 'claim')
        WHERE d.dataset = ? AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], d.document_id))
          AND coalesce(d.text, '') <> ''
        GROUP BY d.document_id, d.text
        """,
        [dataset, ids, ids],
    ).fetchall()


def replace(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    ids: list[str] | None,
    ranker: str,
    aligned_ids: list[str],
    records: list[tuple],
) -> int:
    """Swap `ranker`'s stored alignments of the documents `ids` (None: all) for `records`, which align
    the documents `aligned_ids`; returns the number of rows written."""
    in_documents = "(?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], {column}))"
    cur.execute(
        f"""
        DELETE FROM alignment WHERE dataset = ? AND ranker = ? AND unit_id IN (
            SELECT u.unit_id FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
            WHERE u.dataset = ? AND {in_documents.format(column="s.document_id")})
        """,
        [dataset, ranker, dataset, ids, ids],
    )
    cur.execute(
        f"DELETE FROM alignment_ranker WHERE dataset = ? AND ranker = ? AND {in_documents.format(column='document_id')}",
        [dataset, ranker, ids, ids],
    )
    written = store_records(cur, records)
    record_ranker(cur, dataset, aligned_ids, ranker)
    return written


Document = tuple[str, str, list[str], list[str]]
"""(document id, its text, its summary sentences' and claims' unit ids and texts, in summary order)."""


def aligned(dataset: str, documents: Iterable[Document], ranker: str = DEFAULT) -> list[tuple]:
    """The alignment rows of these documents' summary units by `ranker`, computed without the database."""
    records = []
    for _document_id, text, unit_ids, unit_texts in documents:
        for unit, matches in zip(unit_ids, align(unit_texts, text, ranker=ranker), strict=True):
            records.extend((dataset, unit, ranker, m.rank, m.start, m.end, m.score) for m in matches)
    return records


def bundle_documents(rows: dict[str, list[dict]]) -> list[Document]:
    """The documents with text of a parsed bundle (`Bundle.rows`) and their summary units, as
    `align_documents` reads them from the database: so ingest can align while it writes."""
    document_of = {row["summary_id"]: row["document_id"] for row in rows["summary"]}
    units: dict[str, list[tuple[str, bool, int, str, str]]] = {}
    for unit in rows["unit"]:
        if unit["kind"] in ("sentence", "claim") and unit["summary_id"] in document_of:
            # a summary's sentences, then its claims, as align_documents orders them (kind DESC)
            order = (unit["summary_id"], unit["kind"] == "claim", unit["position"])
            units.setdefault(document_of[unit["summary_id"]], []).append((*order, unit["unit_id"], unit["text"]))
    found = []
    for row in rows["document"]:
        ordered = sorted(units.get(row["document_id"], ()))
        if row.get("text") and ordered:
            found.append((row["document_id"], row["text"], [u[3] for u in ordered], [u[4] for u in ordered]))
    return found


def store_records(cur: duckdb.DuckDBPyConnection, records: list[tuple]) -> int:
    """Insert alignment rows inside the caller's transaction; returns how many."""
    if not records:
        return 0
    import numpy as np  # on use: every page imports this module (for TOP_K), few align

    columns = ("dataset", "unit_id", "ranker", "rank", "start_char", "end_char", "score")
    frame = {name: np.array(values) for name, values in zip(columns, zip(*records, strict=True), strict=True)}
    cur.register("alignment_frame", frame)  # a dict of NumPy columns: DuckDB scans it without pandas
    try:
        cur.execute(f"INSERT INTO alignment ({', '.join(columns)}) SELECT {', '.join(columns)} FROM alignment_frame")
    finally:
        cur.unregister("alignment_frame")
    return len(records)


def record_ranker(cur: duckdb.DuckDBPyConnection, dataset: str, document_ids: Iterable[str], ranker: str) -> None:
    """Note that `ranker`, at its current version, has just aligned these documents' units, in a single
    statement for all of them: DuckDB runs an `executemany` row by row, ~0.5 ms a row in an ingest."""
    ids = sorted(set(document_ids))
    if not ids:
        return
    version = registry()[ranker].version
    cur.execute(
        "INSERT OR REPLACE INTO alignment_ranker (dataset, document_id, ranker, version, aligned_at) "
        "SELECT ?, unnest(?::VARCHAR[]), ?, ?, current_timestamp",
        [dataset, ids, ranker, version],
    )


def align_and_store(
    conn: duckdb.DuckDBPyConnection,
    actor: access.Actor,
    dataset: str,
    document_ids: Iterable[str],
    ranker: str = DEFAULT,
) -> int:
    """Compute and store, by `ranker`, the alignments of these documents' summary units as one write
    (for a document whose text arrived without them, or a ranker not stored yet), once `actor` may
    (not on a demo server); returns the number of alignment rows written. The ranking runs before
    the write opens, so a slow ranker holds no transaction."""
    access.require(actor, "compute_alignment")
    ids = sorted(set(document_ids))
    with conn.cursor() as cur:
        found = documents(cur, dataset, ids)
    records = aligned(dataset, found, ranker)
    with store.write(conn, f"alignment {dataset} {ranker}", local=True) as cur:
        return replace(cur, dataset, ids, ranker, [row[0] for row in found], records)
