"""`python -m faithlens align-eval`: recall@k and speed of each alignment ranker on FABLES' evidence.

Read-only: it works on a snapshot while the app holds the database. See `faithlens.build.align_eval`
for the set and the measure.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from faithlens.cli.options import add_db, reading, table
from faithlens.errors import FaithLensError

if TYPE_CHECKING:
    from faithlens.build.align_eval import RankerResult

DEFAULT_KS = "1,3,5"


def _ks(text: str) -> tuple[int, ...]:
    """`--k 1,3,5` as sorted distinct positive integers."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() and int(part) > 0 for part in parts):
        raise FaithLensError(
            f"--k {text!r} is not a list of ranks", "give positive integers separated by commas, e.g. 1,3,5"
        )
    return tuple(sorted({int(part) for part in parts}))


def _print_text(report: dict, results: list[RankerResult]) -> None:
    """The set's counts, then one row per ranker: recall@k as % (from the unrounded `results`)."""
    counts = report["set"]
    print(
        f"FABLES evidence set: {counts['books']} books, {counts['claims']:,} claims with evidence quotes "
        f"({counts['claims_without_quotes']} without, left out), {counts['passages']:,} passages "
        f"({counts['passages_per_book']:.1f} per book)"
    )
    rows = [
        {
            "ranker": result.name,
            **{f"recall@{k}": f"{100 * value:.1f}%" for k, value in result.recall.items()},
            "ms/claim": f"{result.ms_per_claim:.2f}",
            "version": result.version,
        }
        for result in results
    ]
    print(table(rows, ("ranker",)))
    print(f"note: {report['note']}")


def _run(args: argparse.Namespace) -> int:
    # Imported here: NumPy, rapidfuzz and bm25s are for the evaluation, not for --help.
    from faithlens.build import align_eval

    ks = _ks(args.k)
    with reading(args.db) as conn, conn.cursor() as cur:
        evidence, results = align_eval.evaluate_all(cur, ks, args.ranker or ())
    report = align_eval.as_json(evidence, results)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_text(report, results)
    return 0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "How well each ranker finds a claim's evidence: per FABLES book, the evidence quotes of all its claims "
        "are the passages; each claim with quotes ranks them, and counts a hit at k when one of its own quotes "
        "is in the top k. Prints recall@k (0-1 in --json, % in the table) and milliseconds per claim per ranker. "
        "Offline; this undercounts every ranker alike, so it compares rankers rather than measuring one."
    )
    parser.add_argument(
        "--k", default=DEFAULT_KS, help=f"comma-separated ranks to report recall at (default: {DEFAULT_KS})"
    )
    parser.add_argument(
        "--ranker",
        action="append",
        help="evaluate only this ranker, e.g. bm25 (repeat for more; default: every one, as the table names them)",
    )
    parser.add_argument("--json", action="store_true", help="print the JSON document")
    add_db(parser)
    parser.set_defaults(run=_run)
