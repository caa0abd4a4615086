"""`python -m faithlens align`: store the alignment of a dataset's documents by one ranker.

Ingest and import store the default ranker's; this adds another (semantic, a hybrid, lexical) ahead
of the page, for a whole dataset or some documents. A long document is embedded chunk by chunk, as
the page's background job does, and the same job record is used: a run that is interrupted (Ctrl-C,
a lost machine) goes on where it stopped when started again, and the page shows the progress.
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from faithlens import config, store
from faithlens.build.rankers import LABELS
from faithlens.cli import options
from faithlens.errors import NotFoundError


def _documents(conn: duckdb.DuckDBPyConnection, dataset: str, given: list[str] | None) -> list[tuple[str, str]]:
    """(document id, text) of the documents to align: those named, or every one with text."""
    with conn.cursor() as cur:
        rows = cur.execute(
            "SELECT document_id, text FROM document WHERE dataset = ? AND coalesce(text, '') <> '' ORDER BY document_id",
            [dataset],
        ).fetchall()
    if not given:
        return rows
    found = {document_id: text for document_id, text in rows}
    missing = [document_id for document_id in given if document_id not in found]
    if missing:
        raise NotFoundError(
            f"dataset {dataset!r} has no document with text named {', '.join(map(repr, missing))}",
            "name documents as `stats` or Explore shows them, or leave --document out for every one",
        )
    return [(document_id, found[document_id]) for document_id in given]


def _progress(document_id: str):
    def say(embedded: int, total: int) -> None:
        print(f"{document_id}: {embedded} of {total} passages embedded", file=sys.stderr, flush=True)

    return say


def _run(args: argparse.Namespace) -> int:
    from faithlens.build import alignment, background

    actor = options.actor(args)
    conn = store.connect(config.db_path(args.db), create=False)
    try:
        for document_id, text in _documents(conn, args.dataset, args.document):
            key = (args.dataset, document_id, args.ranker)
            if background.needs_background(text, args.ranker):
                background.request(conn, actor, key)
                with conn.cursor() as cur:
                    before = background.progress(cur, key)
                print(f"{document_id}: {before.embedded} of {before.total} passages embedded before", file=sys.stderr)
                rows = background.run(conn, actor, key, on_chunk=_progress(document_id))
            else:
                rows = alignment.align_and_store(conn, actor, args.dataset, [document_id], args.ranker)
            print(f"{document_id}: {rows} alignment rows by {args.ranker}")
    finally:
        store.close(conn)
    return 0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Store the alignment of a dataset's summary sentences and claims to their documents' passages by one "
        "ranker (ingest stores the default's). Documents longer than a story are embedded chunk by chunk; "
        "an interrupted run goes on where it stopped."
    )
    parser.add_argument("--dataset", required=True, help="dataset whose documents to align")
    parser.add_argument("--ranker", required=True, choices=list(LABELS), help="ranker to align by")
    parser.add_argument(
        "--document", action="append", help="align only this document (repeat for more; default: every one with text)"
    )
    options.add_actor(parser)
    options.add_db(parser)
    parser.set_defaults(run=_run)
