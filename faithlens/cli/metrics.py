"""`python -m faithlens metrics`: agreement of label sources with a reference, as JSON or a table.

Calls the same core function as the Compare page (`faithlens.views.compare.compare`). One JSON object per
compared source and split: split `all` for all units together, then each split of the dataset; a
tuned score source has only the rows of the splits its threshold is tuned on and applied to. Each
object holds every number the page shows for that row (`compare.JSON_KEYS`, `confusion`,
`compare.PAIR_KEYS`); the text table leaves out the matrix and the coverage.
"""

from __future__ import annotations

import argparse
import json

from faithlens.analysis import mapping
from faithlens.analysis.thresholds import GRID, TUNINGS
from faithlens.cli.options import add_db, add_mapping_and_thresholds, reading, table, thresholds_option
from faithlens.errors import FaithLensError
from faithlens.vocab import GOLD, LEVELS


def _sources(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise FaithLensError("--sources is empty", "give comma-separated source names, or leave it out for all")
    return names


def _run(args: argparse.Namespace) -> int:
    # Imported here: scikit-learn and pandas (a second of import) are for the figures, not for --help.
    from faithlens.views import compare

    if args.level not in LEVELS:
        raise FaithLensError(f"--level {args.level!r} is not a level", f"use one of {', '.join(LEVELS)}")
    chosen_mapping = mapping.Mapping.parse(args.mapping)
    thresholds = thresholds_option(args.threshold or [])
    with reading(args.db) as conn, conn.cursor() as cur:
        result = compare.compare(
            cur,
            args.dataset,
            args.level,
            args.reference,
            _sources(args.sources),
            chosen_mapping,
            thresholds,
            by_topic=args.by_topic,
            tuning=args.tuning,
        )
    rows = result.json_rows(with_group=args.by_topic)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    shown = [*compare.JSON_KEYS, *(("topic_type", "corpus") if args.by_topic else ())]
    print(table([{key: row[key] for key in shown} for row in rows], tuple(shown)))
    return 0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Cohen's kappa, % faithful, precision/recall of the faithful class, % easy/hard unfaithful detected, "
        "balanced accuracy, per-class F1 and macro-F1 of each compared source against the reference, over the units "
        "both label, for all units and per split, with the units the mapping leaves out; --json adds each row's "
        "confusion matrix and how many units each source labels: every number the Compare page shows. "
        "Percentages (pct_*, balanced_accuracy) are 0-100."
    )
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--level", required=True, help=f"one of {', '.join(LEVELS)}")
    parser.add_argument("--reference", default=GOLD, help="label source on the rows (default: gold)")
    parser.add_argument("--sources", help="comma-separated sources to compare (default: every other source)")
    add_mapping_and_thresholds(parser)
    parser.add_argument(
        "--tuning",
        choices=TUNINGS,
        default=GRID,
        help="how a score source's threshold is tuned on val/dev: the StorySumm release notebook's 150-point grid "
        "(default), or every midpoint between consecutive distinct scores (cutpoints)",
    )
    parser.add_argument("--by-topic", action="store_true", help="add rows per topic type and corpus (TofuEval)")
    parser.add_argument("--json", action="store_true", help="print the JSON list")
    add_db(parser)
    parser.set_defaults(run=_run)
