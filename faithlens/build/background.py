"""Aligning a long document by an embedding ranker (semantic, or a hybrid that uses it) in the background.

A 120k-word book has about 5,000 passages: embedding them on CPU takes minutes, which no page can wait
for. So the passages are embedded in chunks on a thread, each chunk committed to `passage_embedding`
as it is done, and progress is the share of the document's passages stored. The work is keyed by
(dataset, document, ranker) in `alignment_job`, so a server that stops half-way loses at most the
chunk in flight: whoever starts the job again (the page that shows it, or `python -m faithlens
align`) embeds only what is missing. Once every passage is stored, the document's units are
aligned through the ranker as any alignment is (`alignment.align_and_store`), the stored passage
vectors handed to the model's cache so nothing is embedded twice.

Embedding chunks are committed without a data version: they change nothing a page shows but the
progress bar, which reads them directly. Only the finished alignment is a write that pages see.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from faithlens import access
from faithlens.build import alignment, semantic
from faithlens.build.rankers import EMBEDDING
from faithlens.errors import NotFoundError

BACKGROUND_PASSAGES = 400
"""A document with more passages than this (about 10,000 words) is aligned by an embedding ranker in
the background; a StorySumm story (at most about 250) is aligned while the page waits."""
CHUNK = 64
Key = tuple[str, str, str]
"""(dataset, document id, ranker)."""


@dataclass(frozen=True)
class Progress:
    embedded: int
    total: int
    finished: bool
    error: str | None


def _text(cur: duckdb.DuckDBPyConnection, dataset: str, document_id: str) -> str:
    row = cur.execute(
        "SELECT text FROM document WHERE dataset = ? AND document_id = ?", [dataset, document_id]
    ).fetchone()
    if row is None or not row[0]:
        raise NotFoundError(f"document {document_id!r} of {dataset!r} has no text to align", "attach its text first")
    return row[0]


def needs_background(text: str, ranker: str) -> bool:
    return ranker in EMBEDDING and len(alignment.passages(text)) > BACKGROUND_PASSAGES


def request(conn: duckdb.DuckDBPyConnection, actor: access.Actor, key: Key) -> None:
    """Record that the ranker should align the document (once `actor` may); `Jobs.start` does the work.
    Stored embeddings are kept: a job requested again goes on from them."""
    access.require(actor, "compute_alignment")
    dataset, document_id, ranker = key
    with conn.cursor() as cur:
        total = len(alignment.passages(_text(cur, dataset, document_id)))
        cur.execute(
            "INSERT OR REPLACE INTO alignment_job (dataset, document_id, ranker, passages, requested_at) "
            "VALUES (?, ?, ?, ?, current_timestamp)",
            [dataset, document_id, ranker, total],
        )


def progress(cur: duckdb.DuckDBPyConnection, key: Key) -> Progress | None:
    """How far the job has come (None: no job for this document and ranker)."""
    dataset, document_id, ranker = key
    row = cur.execute(
        """
        SELECT j.passages, j.finished_at IS NOT NULL, j.error,
               (SELECT count(*) FROM passage_embedding e
                WHERE e.dataset = j.dataset AND e.document_id = j.document_id AND e.model = ?)
        FROM alignment_job j WHERE j.dataset = ? AND j.document_id = ? AND j.ranker = ?
        """,
        [semantic.version(), dataset, document_id, ranker],
    ).fetchone()
    if row is None:
        return None
    total, finished, error, embedded = row
    return Progress(min(embedded, total), total, finished, error)


def _stored(cur: duckdb.DuckDBPyConnection, dataset: str, document_id: str) -> dict[int, list[float]]:
    rows = cur.execute(
        "SELECT start_char, vector FROM passage_embedding WHERE dataset = ? AND document_id = ? AND model = ?",
        [dataset, document_id, semantic.version()],
    ).fetchall()
    return dict(rows)


def _embed_missing(
    conn: duckdb.DuckDBPyConnection,
    dataset: str,
    document_id: str,
    text: str,
    stop: threading.Event,
    on_chunk: Callable[[int, int], None] | None,
) -> bool:
    """Embed and commit the passages not stored yet, a chunk at a time, calling `on_chunk(embedded,
    total)` after each commit; False when stopped first."""
    with conn.cursor() as cur:
        done = _stored(cur, dataset, document_id)
    spans = alignment.passages(text)
    missing = [span for span in spans if span[0] not in done]
    model = semantic.version()
    for first in range(0, len(missing), CHUNK):
        if stop.is_set():
            return False
        chunk = missing[first : first + CHUNK]
        vectors = semantic.embed([text[start:end] for start, end in chunk])
        rows = [
            (dataset, document_id, model, start, end, vector.tolist())
            for (start, end), vector in zip(chunk, vectors, strict=True)
        ]
        with conn.cursor() as cur:
            cur.begin()
            cur.executemany("INSERT OR IGNORE INTO passage_embedding VALUES (?, ?, ?, ?, ?, ?)", rows)
            cur.commit()
        if on_chunk is not None:
            on_chunk(len(spans) - len(missing) + first + len(chunk), len(spans))
    return True


def _finish(conn: duckdb.DuckDBPyConnection, key: Key, error: str | None) -> None:
    with conn.cursor() as cur:
        cur.execute(
            "UPDATE alignment_job SET finished_at = CASE WHEN ?::VARCHAR IS NULL THEN current_timestamp END, "
            "error = ? WHERE dataset = ? AND document_id = ? AND ranker = ?",
            [error, error, *key],
        )


def run(
    conn: duckdb.DuckDBPyConnection,
    actor: access.Actor,
    key: Key,
    stop: threading.Event | None = None,
    on_chunk: Callable[[int, int], None] | None = None,
) -> int | None:
    """Do (or go on with) the job `key`: the alignment rows written once it is finished, None when
    `stop` came first. An error is recorded on the job (the page shows it) and raised (on a job's
    thread, into the server log)."""
    dataset, document_id, ranker = key
    stop = stop or threading.Event()
    try:
        with conn.cursor() as cur:
            text = _text(cur, dataset, document_id)
        if not _embed_missing(conn, dataset, document_id, text, stop, on_chunk):
            return None
        with conn.cursor() as cur:
            stored = _stored(cur, dataset, document_id)
        spans = alignment.passages(text)
        semantic.remember([text[start:end] for start, end in spans], [stored[start] for start, _ in spans])
        written = alignment.align_and_store(conn, actor, dataset, [document_id], ranker)
    except Exception as error:
        _finish(conn, key, f"{type(error).__name__}: {error}")
        raise
    _finish(conn, key, None)
    return written


class Jobs:
    """The background jobs of one process: one thread per job key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[Key, tuple[threading.Event, threading.Thread]] = {}

    def alive(self, key: Key) -> bool:
        found = self._threads.get(key)
        return found is not None and found[1].is_alive()

    def start(self, conn: duckdb.DuckDBPyConnection, actor: access.Actor, key: Key) -> None:
        """Work on the requested job `key` on a thread, unless one already does (a no-op then)."""
        access.require(actor, "compute_alignment")
        with self._lock:
            if self.alive(key):
                return
            stop = threading.Event()
            thread = threading.Thread(
                target=run, args=(conn, actor, key, stop), name=f"align-{key[1]}-{key[2]}", daemon=True
            )
            self._threads[key] = (stop, thread)
            thread.start()

    def join(self, key: Key, timeout: float | None = None) -> None:
        found = self._threads.get(key)
        if found is not None:
            found[1].join(timeout)
