"""`ingest`, `import` and `stats`: building the database and saying what it holds."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from faithlens import config
from faithlens.build import ingest
from faithlens.cli.options import add_db, reading
from faithlens.datasets import FORMATS, tofueval
from faithlens.views import catalog

PLURALS = {"document": "documents", "summary": "summaries", "unit": "sentences and claims", "label": "labels"}


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
    report = ingest.import_file(
        config.db_path(args.db),
        Path(args.file),
        args.format,
        args.name,
        args.source,
        corpus=args.corpus,
        split=args.split,
    )
    _print_report(report, "imported")
    return 0


def _stats(args: argparse.Namespace) -> int:
    with reading(args.db) as conn, conn.cursor() as cur:
        document = {"datasets": catalog.stats(cur)}
    if args.json:
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        for name, info in document["datasets"].items():
            print(
                f"{name}: {info['documents']} documents, {info['summaries']} summaries, {info['sentences']} sentences, {info['claims']} claims"
            )
            for source, counts in info["sources"].items():
                print(f"  {source} ({counts['kind']}): {counts['labelled']} labelled, {counts['scored']} scored")
    return 0


def configure(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ingest", help="build or refresh the database from data/")
    add_db(parser)
    parser.add_argument("--data-dir", help="folder of raw datasets (default: data/)")
    parser.add_argument("--if-stale", action="store_true", help="do nothing when the database matches the raw files")
    parser.set_defaults(run=_ingest)

    parser = sub.add_parser("import", help="add one file to the database")
    parser.add_argument("file")
    parser.add_argument(
        "--format",
        required=True,
        choices=sorted(FORMATS),
        help="; ".join(f"{f.name}: {f.help}" for f in FORMATS.values()),
    )
    parser.add_argument(
        "--name", help="dataset to create (letters, digits, - and _; default from the file name) or to attach to"
    )
    parser.add_argument("--source", help="label source name for storysumm-predictions (default from the file path)")
    parser.add_argument(
        "--corpus", choices=tofueval.CORPORA, help="tofueval: the corpus of a CSV whose file name does not say it"
    )
    parser.add_argument(
        "--split", choices=tofueval.SPLITS, help="tofueval: the split of a CSV whose name does not say it"
    )
    add_db(parser)
    parser.set_defaults(run=_import)

    parser = sub.add_parser("stats", help="counts and label distributions per dataset")
    parser.add_argument("--json", action="store_true", help="print the JSON document")
    add_db(parser)
    parser.set_defaults(run=_stats)
