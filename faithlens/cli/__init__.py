"""`python -m faithlens`: one module per command group, imported only when one of its commands runs.

COMMANDS lists every command with its one-line help and the module that holds its options and its
body, so the command list (`--help`) is built without importing any of them: scikit-learn, pandas
or DuckDB load only for the command that needs them. The chosen command's module adds its options
in `configure(parser, name)` and sets `run`, the function that does the work.

Errors a user can fix print one line on stderr and exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from dataclasses import dataclass

from faithlens.errors import FaithLensError

EXIT_USER_ERROR = 2


@dataclass(frozen=True)
class Command:
    """`words` as typed after `python -m faithlens`; `module` under faithlens.cli holds it."""

    words: tuple[str, ...]
    module: str
    help: str


GROUPS = {
    "llm": "ask a language model about one unit, with the papers' prompts; run a method over many",
    "coding": "coding sessions: import codes, agreement, export, list sessions",
    "demo-pack": "stored answers about chosen summaries in one file, to replay a demo offline elsewhere",
    "people": "who may use a shared server: people, roles, budgets, sign-in links (acts as an admin)",
}
COMMANDS = (
    Command(("ingest",), "data", "build or refresh the database from data/"),
    Command(("import",), "data", "add one file to the database"),
    Command(("stats",), "data", "counts and label distributions per dataset"),
    Command(("metrics",), "metrics", "agreement metrics of label sources against a reference (as the Compare page)"),
    Command(
        ("errors",),
        "errors",
        "a tag family's values per generator, topic type or corpus, and recall per value (as the Errors page)",
    ),
    Command(
        ("reproduced",),
        "reproduced",
        "every published figure FaithLens reproduces, ours beside the paper's (as the Reproduced figures page)",
    ),
    Command(
        ("align",),
        "align",
        "store the alignment of a dataset's documents by one ranker (semantic, hybrid, lexical, bm25)",
    ),
    Command(
        ("align-eval",),
        "align_eval",
        "how well each alignment ranker finds a FABLES claim's evidence quotes: recall@k and ms per claim",
    ),
    Command(("export",), "export", "one label source of a dataset as CSV, JSON Lines or Parquet, with its units' text"),
    Command(("llm", "verify"), "llm", "verify one sentence, claim or summary"),
    Command(("llm", "rewrite"), "llm", "rewrite one sentence, claim or summary"),
    Command(("llm", "costs"), "llm", "calls, tokens and cost by model, method and day"),
    Command(("llm", "run"), "llm_runs", "run a method over a dataset, a level, a split (background-safe)"),
    Command(("llm", "runs"), "llm_runs", "list runs with their progress and cost"),
    Command(("coding", "import"), "coding", "add coders' codes from a CSV (unit_id, coder, code[, note])"),
    Command(("coding", "agreement"), "coding", "inter-coder agreement of a session, overall and per code"),
    Command(("coding", "export"), "coding", "every current code of a session with its provenance"),
    Command(("coding", "sessions"), "coding", "the coding sessions, newest first, with each coder's progress"),
    Command(("demo-pack", "export"), "packs", "the stored answers about chosen summaries or units, as one file"),
    Command(("demo-pack", "import"), "packs", "add a pack's answers to this database's cache (one transaction)"),
    Command(("people", "list"), "people", "everyone with their role, budget, spending, last sign-in and sign-in links"),
    Command(("people", "add"), "people", "add a person who will sign in with a link (optionally with a role)"),
    Command(("people", "role"), "people", "give a person a role: viewer, coder, runner, adjudicator or admin"),
    Command(("people", "budget"), "people", "set what a person may spend on paid calls a day and a month"),
    Command(("people", "link"), "people", "make a person a sign-in link and print it (shown once)"),
    Command(("people", "revoke"), "people", "withdraw a sign-in link, or every link and browser session of a person"),
)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """Every command's parser, with options only for the one `argv` names (its leading words)."""
    parser = argparse.ArgumentParser(
        prog="python -m faithlens", description="FaithLens: faithfulness benchmarks in one DuckDB model."
    )
    levels = {(): parser.add_subparsers(dest="command", required=True)}
    for command in COMMANDS:
        group = command.words[:-1]
        if group not in levels:
            named = levels[()].add_parser(group[0], help=GROUPS[group[0]], description=GROUPS[group[0]])
            levels[group] = named.add_subparsers(dest="action", required=True)
        leaf = levels[group].add_parser(command.words[-1], help=command.help, description=command.help)
        if tuple(argv[: len(command.words)]) == command.words:
            importlib.import_module(f"faithlens.cli.{command.module}").configure(leaf, command.words[-1])
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    # psycopg_pool logs each failed connection attempt; the command's one error line says it all.
    logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
    try:
        return args.run(args)
    except FaithLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error. Silence the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
