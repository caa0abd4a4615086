"""`python -m faithlens errors`: a tag family's values per generator, topic type, corpus or split, and
with `--recall-for`, each source's recall per value: the rows the Errors page shows
(`faithlens.views.errors`). Read-only, so it works while the app runs (on a snapshot).

JSON: `{dataset, family, level, by, of, tagged_by, how, rows: [{family, value, group, units, pct}]}`,
plus `recall: [{family, value, source, flagged, total, recall, units, threshold}]`, `reference`,
`typed`, `split`, `mapping`, `recall_how` and `notes` with `--recall-for`. `pct` is 0-100, `recall`
0-1 (as in `metrics`).
"""

from __future__ import annotations

import argparse
import json

from faithlens.analysis import mapping
from faithlens.analysis.tag_stats import DIMENSIONS
from faithlens.analysis.thresholds import ALL
from faithlens.cli.options import add_db, add_mapping_and_thresholds, reading, table, thresholds_option
from faithlens.vocab import LEVELS


def _run(args: argparse.Namespace) -> int:
    from faithlens.views import errors  # imported on use: scikit-learn adds ~1 s to every other command's start

    with reading(args.db) as conn, conn.cursor() as cur:
        family = errors.find_family(cur, args.dataset, args.family, args.level)
        shown = errors.distribution(cur, args.dataset, family, args.by, args.of, args.tagged_by)
        out: dict[str, object] = {
            "dataset": args.dataset,
            "family": family.name,
            "level": family.level,
            "by": args.by,
            "of": args.of,
            "tagged_by": args.tagged_by,
            "how": shown.how(),
            "rows": [row.as_json() for row in shown.rows],
        }
        if args.recall_for:
            out.update(_recall(cur, args, errors, family))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(out["how"])
    print(table(out["rows"], ("family", "value", "group", "units", "pct")))
    if args.recall_for:
        print()
        print(out["recall_how"])
        print(table(out["recall"], ("family", "value", "source", "flagged", "total", "recall")))
        for note in out["notes"]:
            print(f"note: {note}")
    return 0


def _recall(cur, args: argparse.Namespace, errors, family) -> dict[str, object]:
    if args.reference is None:
        reference = errors.default_reference(errors.sources_at(cur, args.dataset, family), family)
    else:
        reference = None if args.reference == errors.NO_REFERENCE else args.reference
    sources = None if args.recall_for == ["all"] else args.recall_for
    result = errors.recall(
        cur,
        args.dataset,
        family,
        sources,
        reference,
        mapping.Mapping.parse(args.mapping),
        thresholds_option(args.threshold or []),
        args.split,
        args.typed,
        args.tagged_by,
    )
    return {
        "reference": reference,
        "typed": result.typed,
        "split": result.split,
        "mapping": str(result.mapping),
        "recall_how": result.how(),
        "recall": [row.as_json() for row in result.rows],
        "notes": list(result.notes),
    }


def configure(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "errors",
        help="a tag family's values per generator, topic type or corpus, and recall per value (as the Errors page)",
        description=(
            "FAMILY is a tag kind (error_type, difficulty, ambiguity_type, a codebook's family) or verdict:SOURCE "
            "(that source's labels as values). Rows: the units carrying each value per group, and their % of the "
            "units carrying any value of the family in the group (--of tagged) or of every unit (--of all)."
        ),
    )
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--family", required=True, help="error_type, difficulty, ambiguity_type, verdict:gold, ...")
    parser.add_argument("--level", choices=LEVELS, help="the family's level, when it has several")
    parser.add_argument("--by", choices=tuple(DIMENSIONS), help="break the rows down by this (default: all units)")
    parser.add_argument("--of", choices=("tagged", "all"), default="tagged", help="the denominator of pct")
    parser.add_argument("--tagged-by", help="count only tags from this source (default: any source)")
    parser.add_argument(
        "--recall-for",
        action="append",
        metavar="SOURCE",
        help="add each value's recall for this source (repeatable; 'all' for every source at the level)",
    )
    parser.add_argument(
        "--reference", help="whose unfaithful units count (default: gold when it labels the level; none)"
    )
    parser.add_argument(
        "--typed",
        choices=("single", "any"),
        default="single",
        help="single: only units carrying one value of the family (TofuEval Figure 4); any: every unit carrying it",
    )
    parser.add_argument("--split", default=ALL, help="count recall on this split (default: all)")
    add_mapping_and_thresholds(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_db(parser)
    parser.set_defaults(run=_run)
