"""`python -m faithlens reproduced`: every published figure FaithLens reproduces, ours beside the
paper's, as the Reproduced figures page lists them (`faithlens.views.reproduced`). Read-only, so it
works while the app runs (on a snapshot).

JSON: `{summary: {total, matches, differs, missing, unprinted, causes: {kind: n}, line}, absent: [paper],
figures: [{paper, table, row, split, column, paper_value, ours, difference, status, cause_kind,
cause, how, link}]}`; `link` is the app's URL path and query of the view that computes the figure (or,
for a figure of ours not yet made, of the page to make it on). `total` counts printed figures;
`unprinted` the figures of ours beside charts that print no numbers (status "no printed number").
"""

from __future__ import annotations

import argparse
import json

from faithlens.cli.options import add_db, reading, table
from faithlens.views import reproduced
from faithlens.views.states import REPRODUCED_STATUSES

SHOWN = ("table", "row", "split", "column", "paper_value", "ours", "status", "cause_kind")


def _run(args: argparse.Namespace) -> int:
    with reading(args.db) as conn, conn.cursor() as cur:
        report = reproduced.reproduce(cur)
    figures = [
        f
        for f in report.figures
        if args.paper in (None, f.paper) and args.table in (None, f.table.key) and args.status in (None, f.status)
    ]
    summary = reproduced.summarize(figures)
    rows = [f.as_json(f.link.href() if f.link else None) for f in figures]
    if args.json:
        out = {
            "summary": {
                "total": summary.total,
                "matches": summary.matches,
                "differs": summary.differs,
                "missing": summary.missing,
                "unprinted": summary.unprinted,
                "causes": dict(summary.causes),
                "line": summary.line(),
            },
            "absent": list(report.absent),
            "figures": rows,
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(summary.line())
    for title in report.absent:
        print(f"{title}: its bundled dataset is not loaded, so its figures are not listed.")
    print(table([{column: row[column] for column in SHOWN} for row in rows], SHOWN))
    return 0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Each printed figure of the papers' tables that FaithLens computes, ours beside it, whether ours rounds "
        "to the printed figure (matches) or not (differs, with the cause), and the app view that computes it."
    )
    parser.add_argument("--paper", help="only this paper (storysumm, fables, tofueval, arm)")
    parser.add_argument("--table", help="only this table, by its key (table8, release, figure2, ...)")
    parser.add_argument("--status", choices=REPRODUCED_STATUSES, help="only figures with this status")
    parser.add_argument("--json", action="store_true", help="print the summary and every figure as JSON")
    add_db(parser)
    parser.set_defaults(run=_run)
