"""`python -m faithlens export`: one label source of a dataset as CSV, JSON Lines or Parquet (the file
the Compare and Runs pages download). Read-only, so it works while the app runs (from a snapshot)."""

from __future__ import annotations

import argparse
from pathlib import Path

from faithlens.cli.options import add_db, reading
from faithlens.exports import labels


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `export` (`faithlens.cli.COMMANDS`)."""
    parser.add_argument("--dataset", required=True)
    parser.add_argument(
        "--source", required=True, help="a label source of the dataset: gold, an evaluator, a coder, an LLM source"
    )
    parser.add_argument("--format", required=True, help=f"one of {', '.join(labels.FORMATS)}")
    parser.add_argument("--out", required=True, help="the file to write (replaced if it exists)")
    add_db(parser)
    parser.set_defaults(run=_export)


def _export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with reading(args.db) as conn:
        written = labels.export(conn, args.dataset, args.source, args.format, out)
    print(f"wrote {written:,} labels of {args.source} ({args.dataset}) to {out}")
    return 0
