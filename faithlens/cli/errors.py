"""`python -m faithlens errors`: a tag family's values per generator, topic type, corpus or split, and
with `--recall-for`, each source's recall per value: the rows the Errors page shows
(`faithlens.views.errors`). Read-only, so it works while the app runs (on a snapshot).

JSON: `{dataset, family, level, by, of, tagged_by, tag_sources, how, notes, rows: [{family, value,
group, units, pct}]}`, plus `recall: [{family, value, source, flagged, total, recall, units,
threshold}]`, `reference`, `typed`, `split`, `mapping` and `recall_how` with `--recall-for`
(whose notes join `notes`). `pct` is 0-100, `recall` 0-1 (as in `metrics`). `tagged_by` is the tag source counted
(`gold` by default where the dataset's gold gives the family, `any` for every source's) and
`tag_sources` the sources whose tags were counted; `notes` say what a reader must know beside the rows
(a breakdown by TofuEval's shuffled generator slots says what a slot is).
"""

from __future__ import annotations

import argparse
import json

from faithlens.analysis import mapping
from faithlens.analysis.tag_stats import ANY_SOURCE, DIMENSIONS
from faithlens.analysis.thresholds import ALL
from faithlens.cli.options import add_db, add_mapping_and_thresholds, reading, table, thresholds_option
from faithlens.vocab import LEVELS


def _run(args: argparse.Namespace) -> int:
    # Imported here (and in _recall): scikit-learn and pandas are for the figures, not for --help.
    from faithlens.views import errors

    with reading(args.db) as conn, conn.cursor() as cur:
        family = errors.find_family(cur, args.dataset, args.family, args.level)
        tagged_by = family.tagged_by(args.tagged_by)
        shown = errors.distribution(cur, args.dataset, family, args.by, args.of, tagged_by)
        out: dict[str, object] = {
            "dataset": args.dataset,
            "family": family.name,
            "level": family.level,
            "by": args.by,
            "of": args.of,
            "tagged_by": None if family.verdicts_of else (tagged_by or ANY_SOURCE),
            "tag_sources": [tagged_by] if tagged_by else list(family.sources),
            "how": shown.how(),
            "notes": list(shown.notes()),
            "rows": [row.as_json() for row in shown.rows],
        }
        if args.recall_for:
            recall = _recall(cur, args, family, tagged_by)
            out.update(recall, notes=[*out["notes"], *recall["notes"]])
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(out["how"])
    for note in shown.notes():
        print(f"note: {note}")
    print(table(out["rows"], ("family", "value", "group", "units", "pct")))
    if args.recall_for:
        print()
        print(out["recall_how"])
        print(table(out["recall"], ("family", "value", "source", "flagged", "total", "recall")))
        for note in recall["notes"]:
            print(f"note: {note}")
    return 0


def _recall(cur, args: argparse.Namespace, family, tagged_by: str | None) -> dict[str, object]:
    from faithlens.views import errors

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
        tagged_by,
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


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "FAMILY is a tag kind (error_type, difficulty, ambiguity_type, a codebook's family) or verdict:SOURCE "
        "(that source's labels as values). Rows: the units carrying each value per group, and their % of the "
        "units carrying any value of the family in the group (--of tagged) or of every unit (--of all)."
    )
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--family", required=True, help="error_type, difficulty, ambiguity_type, verdict:gold, ...")
    parser.add_argument("--level", choices=LEVELS, help="the family's level, when it has several")
    parser.add_argument("--by", choices=tuple(DIMENSIONS), help="break the rows down by this (default: all units)")
    parser.add_argument("--of", choices=("tagged", "all"), default="tagged", help="the denominator of pct")
    parser.add_argument(
        "--tagged-by",
        metavar="SOURCE|any",
        help="whose tags count: a source, or 'any' for every source's (default: gold where the dataset's own tags "
        "give the family, as the papers count them; else any)",
    )
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
