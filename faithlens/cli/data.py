"""`ingest`, `import` and `stats`: building the database and saying what it holds."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from faithlens import config
from faithlens.build import ingest
from faithlens.cli.options import add_db, reading
from faithlens.datasets import FORMATS, tofueval
from faithlens.store.claim_sets import ClaimSet
from faithlens.views import catalog

PLURALS = {"document": "documents", "summary": "summaries", "unit": "sentences and claims", "label": "labels"}


def _print_report(report: ingest.Report, verb: str) -> None:
    """What was loaded on stdout; on stderr, one line per row repaired, dropped or left unattached and
    per note of the ingest log (file, line or record, what happened), so nothing is dropped unsaid."""
    if report.skipped:
        print("database is up to date with data/; nothing to do")
        return
    for name, counts in report.datasets.items():
        parts = ", ".join(f"{n:,} {PLURALS[table]}" for table, n in counts.items())
        print(f"{verb} {name}: {parts}")
    for kind, file, position, message in report.log:
        where = f"{file}: {position}" if position else file
        print(f"{kind}: {where}: {message}", file=sys.stderr)
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
            for claim_set in info["extracted_claims"]:
                print(f"  + {ClaimSet.from_json(claim_set).counted()}")
            for source, counts in info["sources"].items():
                print(f"  {source} ({counts['kind']}): {counts['labelled']} labelled, {counts['scored']} scored")
    return 0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `ingest`, `import` or `stats` (`faithlens.cli.COMMANDS`)."""
    options = {"ingest": _ingest_options, "import": _import_options, "stats": _stats_options}
    options[name](parser)


def _ingest_options(parser: argparse.ArgumentParser) -> None:
    add_db(parser)
    parser.add_argument("--data-dir", help="folder of raw datasets (default: data/)")
    parser.add_argument("--if-stale", action="store_true", help="do nothing when the database matches the raw files")
    parser.set_defaults(run=_ingest)


def _import_options(parser: argparse.ArgumentParser) -> None:
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


def _stats_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the JSON document")
    add_db(parser)
    parser.set_defaults(run=_stats)
