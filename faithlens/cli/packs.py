"""`python -m faithlens demo-pack export|import`: the stored answers about chosen summaries carried to
another database in one file, so a demo prepared with keys replays offline (`faithlens.llm.packs`).

`export` only reads (it works while the app runs); `import` writes in one transaction, so it needs the
app stopped, like `import`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from faithlens.cli.options import actor, add_actor, add_db, reading


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `demo-pack export|import` (`faithlens.cli.COMMANDS`)."""
    if name == "export":
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--summary",
            action="append",
            default=[],
            help="a summary id: every stored answer about it, its sentences and its claims (repeatable)",
        )
        parser.add_argument("--unit", action="append", default=[], help="one sentence or claim id (repeatable)")
        parser.add_argument("--out", required=True, help="the pack to write, e.g. demo.faithlens-pack.json")
        parser.set_defaults(run=_export)
    else:
        parser.add_argument("file", help="a pack written by `demo-pack export`")
        add_actor(parser)
        parser.set_defaults(run=_import)
    add_db(parser)


def _export(args: argparse.Namespace) -> int:
    from faithlens.llm import packs  # the LLM layer loads only when the command runs, not for --help

    out = Path(args.out)
    with reading(args.db) as conn:
        done = packs.export_to(conn, args.dataset, args.summary, args.unit, out)
    print(f"wrote {done.answers:,} stored answers about {done.targets:,} units to {out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from faithlens import config, store
    from faithlens.llm import packs

    conn = store.connect(config.db_path(args.db), create=False)
    try:
        store.catch_up(conn)
        done = packs.import_file(conn, Path(args.file), actor(args))
    finally:
        store.close(conn)
    print("\n".join(done.lines()))
    return 0
