"""`python -m faithlens`: ingest, import, stats (and more commands registered in COMMANDS).

Errors a user can fix print one line on stderr and exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from faithlens import catalog, cli_metrics, config, ingest, store
from faithlens.datasets import FORMATS
from faithlens.errors import FaithLensError

EXIT_USER_ERROR = 2
PLURALS = {"document": "documents", "summary": "summaries", "unit": "sentences and claims", "label": "labels"}


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database file (default: $FAITHLENS_DB or data/faithlens.duckdb)")


def _print_report(report: ingest.Report, verb: str) -> None:
    if report.skipped:
        print("database is up to date with data/; nothing to do")
        return
    for name, counts in report.datasets.items():
        parts = ", ".join(f"{n:,} {PLURALS[table]}" for table, n in counts.items())
        print(f"{verb} {name}: {parts}")
    for kind, file, position, message in report.log:
        print(f"  {kind}: {file}: {position}: {message}" if position else f"  {kind}: {file}: {message}")
    print(f"done in {report.seconds:.2f} s")


def _ingest(args: argparse.Namespace) -> int:
    report = ingest.ingest(config.db_path(args.db), config.data_dir(args.data_dir), only_if_stale=args.if_stale)
    _print_report(report, "loaded")
    return 0


def _import(args: argparse.Namespace) -> int:
    report = ingest.import_file(config.db_path(args.db), Path(args.file), args.format, args.name, args.source)
    _print_report(report, "imported")
    return 0


def _stats(args: argparse.Namespace) -> int:
    conn = store.connect(config.db_path(args.db), read_only=True)
    try:
        with conn.cursor() as cur:
            document = {"datasets": catalog.stats(cur)}
    finally:
        conn.close()
    if args.json:
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        for name, info in document["datasets"].items():
            print(
                f"{name}: {info['documents']} documents, {info['summaries']} summaries, {info['sentences']} sentences, {info['claims']} claims"
            )
    return 0


def _configure_ingest(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ingest", help="build or refresh the database from data/")
    _add_db(parser)
    parser.add_argument("--data-dir", help="folder of raw datasets (default: data/)")
    parser.add_argument("--if-stale", action="store_true", help="do nothing when the database matches the raw files")
    parser.set_defaults(run=_ingest)


def _configure_import(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="add one file to the database")
    parser.add_argument("file")
    parser.add_argument(
        "--format",
        required=True,
        choices=sorted(FORMATS),
        help="; ".join(f"{f.name}: {f.help}" for f in FORMATS.values()),
    )
    parser.add_argument("--name", help="dataset to create (default from the file name) or to attach to")
    parser.add_argument("--source", help="label source name for storysumm-predictions (default from the file path)")
    _add_db(parser)
    parser.set_defaults(run=_import)


def _configure_stats(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("stats", help="counts and label distributions per dataset")
    parser.add_argument("--json", action="store_true", help="print the JSON document")
    _add_db(parser)
    parser.set_defaults(run=_stats)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _configure_ingest,
    _configure_import,
    _configure_stats,
    cli_metrics.configure,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m faithlens", description="FaithLens: faithfulness benchmarks in one DuckDB model."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for configure in COMMANDS:
        configure(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except FaithLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error. Silence the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
