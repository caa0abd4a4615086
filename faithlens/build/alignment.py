"""Sentence-to-passage alignment, computed once at ingest so pages only read it.

Passages are the source's own sentences, adjusted on both sides of a useful size:

* A highlight should point at the words that support a summary sentence, so the unit is a
  sentence rather than a fixed-size window that cuts through sentences and makes the reader
  hunt for the boundaries.
* Very short sentences ("The song continued.", dialogue such as "Yes.") are merged with the next
  one: on their own, their few words appear in many summary sentences and would outrank the real
  support.
* Very long ones (meeting transcripts without punctuation) are cut into windows of at most
  MAX_PASSAGE_TOKENS words, so one run-on turn cannot match every summary sentence.

Scoring uses rapidfuzz's `token_set_ratio` in one `process.cdist` call over lowercased text
(`utils.default_process`): it rewards a passage whose words the sentence reuses even when they are
reordered or the sentence compresses the passage, which is what a paraphrasing summary does.
On hand-marked StorySumm sentences it put the supporting passage first for 8 of 11 sentences and in
the top 3 for 10 of 11, as well as TF-IDF cosine did; `ratio`, `token_sort_ratio` and `WRatio` did
worse. Ties (a passage whose words are all in the sentence scores 100 too) are broken by
`token_sort_ratio`, then by position, so a verbatim copy ranks first. The stored score is the
`token_set_ratio`, 0..100.

Every summary sentence keeps its TOP_K best passages; the page filters them by rank and score at
read time, so its controls always act on stored data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.build.rankers import token_set_ranking
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


def align(sentences: list[str], text: str, top_k: int = TOP_K) -> list[list[Match]]:
    """For each sentence, its `top_k` best passages of `text`, best first (`rankers.token_set_ranking`)."""
    spans = passages(text)
    if not spans or not sentences:
        return [[] for _ in sentences]
    order, scores = token_set_ranking(sentences, [text[start:end] for start, end in spans], top_k)
    return [
        [
            Match(rank + 1, spans[column][0], spans[column][1], round(float(scores[row, column]), 2))
            for rank, column in enumerate(columns)
        ]
        for row, columns in enumerate(order.tolist())
    ]


def align_documents(cur: duckdb.DuckDBPyConnection, dataset: str, document_ids: Iterable[str] | None = None) -> int:
    """(Re)compute and store the alignments of every summary sentence of the given documents.

    `document_ids=None` means every document of `dataset`. Documents without text are skipped
    (their old alignments, if any, are removed). Runs inside the caller's transaction; returns
    the number of alignment rows written.
    """
    ids = None if document_ids is None else sorted(set(document_ids))
    if ids == []:
        return 0
    rows = cur.execute(
        """
        SELECT d.document_id, d.text, list(u.unit_id ORDER BY u.summary_id, u.position),
               list(u.text ORDER BY u.summary_id, u.position)
        FROM document d
        JOIN summary s ON s.dataset = d.dataset AND s.document_id = d.document_id
        JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id AND u.kind = 'sentence'
        WHERE d.dataset = ? AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], d.document_id))
          AND coalesce(d.text, '') <> ''
        GROUP BY d.document_id, d.text
        """,
        [dataset, ids, ids],
    ).fetchall()
    cur.execute(
        """
        DELETE FROM alignment WHERE dataset = ? AND unit_id IN (
            SELECT u.unit_id FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
            WHERE u.dataset = ? AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], s.document_id)))
        """,
        [dataset, dataset, ids, ids],
    )
    return store_records(cur, aligned(dataset, rows))


Document = tuple[str, str, list[str], list[str]]
"""(document id, its text, its summary sentences' unit ids and texts, in summary and position order)."""


def aligned(dataset: str, documents: Iterable[Document]) -> list[tuple]:
    """The alignment rows of these documents' summary sentences, computed without the database."""
    records = []
    for _document_id, text, unit_ids, unit_texts in documents:
        for unit, matches in zip(unit_ids, align(unit_texts, text), strict=True):
            records.extend((dataset, unit, m.rank, m.start, m.end, m.score) for m in matches)
    return records


def bundle_documents(rows: dict[str, list[dict]]) -> list[Document]:
    """The documents with text of a parsed bundle (`Bundle.rows`) and their summary sentences, as
    `align_documents` reads them from the database: so ingest can align while it writes."""
    document_of = {row["summary_id"]: row["document_id"] for row in rows["summary"]}
    sentences: dict[str, list[tuple[str, int, str, str]]] = {}
    for unit in rows["unit"]:
        if unit["kind"] == "sentence" and unit["summary_id"] in document_of:
            document = document_of[unit["summary_id"]]
            sentences.setdefault(document, []).append(
                (unit["summary_id"], unit["position"], unit["unit_id"], unit["text"])
            )
    found = []
    for row in rows["document"]:
        units = sorted(sentences.get(row["document_id"], ()))
        if row.get("text") and units:
            found.append((row["document_id"], row["text"], [u[2] for u in units], [u[3] for u in units]))
    return found


def store_records(cur: duckdb.DuckDBPyConnection, records: list[tuple]) -> int:
    """Insert alignment rows inside the caller's transaction; returns how many."""
    if not records:
        return 0
    import numpy as np  # on use: every page imports this module (for TOP_K), few align

    columns = ("dataset", "unit_id", "rank", "start_char", "end_char", "score")
    frame = {name: np.array(values) for name, values in zip(columns, zip(*records, strict=True), strict=True)}
    cur.register("alignment_frame", frame)  # a dict of NumPy columns: DuckDB scans it without pandas
    try:
        cur.execute(
            "INSERT INTO alignment (dataset, unit_id, rank, start_char, end_char, score) "
            "SELECT dataset, unit_id, rank, start_char, end_char, score FROM alignment_frame"
        )
    finally:
        cur.unregister("alignment_frame")
    return len(records)


def align_and_store(
    conn: duckdb.DuckDBPyConnection, actor: access.Actor, dataset: str, document_ids: Iterable[str]
) -> int:
    """Compute and store the alignments of these documents' summary sentences as one write (for a
    document whose text arrived without them), once `actor` may (not on a demo server); returns the
    number of alignment rows written."""
    access.require(actor, "compute_alignment")
    with store.write(conn, f"alignment {dataset}", local=True) as cur:
        return align_documents(cur, dataset, document_ids)
