"""`python -m faithlens`: one module per command group, each adding its commands in `configure`.

Errors a user can fix print one line on stderr and exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from faithlens.cli import coding, data, errors, llm, metrics, reproduced
from faithlens.errors import FaithLensError

EXIT_USER_ERROR = 2
GROUPS = (data, metrics, errors, reproduced, llm, coding)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m faithlens", description="FaithLens: faithfulness benchmarks in one DuckDB model."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.configure(sub)
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
