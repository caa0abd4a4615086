"""`python -m faithlens llm verify|rewrite|costs`: ask a model about one unit with a paper's prompt.

The answer streams to stderr while it arrives; stdout gets the stored record (JSON with --json).
A request answered before comes from the cache with no call (`"cached": true`), unless --fresh.
These commands write the answer to the database, so they need the app stopped (like `import`). They act
as FAITHLENS_USER (or --as NAME), an admin, who is charged for a new answer.
"""

from __future__ import annotations

import argparse
import json
import sys

from faithlens import config, store
from faithlens.cli.options import actor, add_actor, add_db, reading
from faithlens.llm import ask, costs, methods, providers, targets
from faithlens.llm.usage import cost_text, usage_rows

DEFAULT_METHOD = {"verify": None, "rewrite": "arm-rewrite"}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `llm verify|rewrite|costs` (`faithlens.cli.COMMANDS`; `llm run|runs` are `llm_runs`')."""
    if name == "costs":
        add_db(parser)
        parser.add_argument("--json", action="store_true", help="print JSON rows")
        parser.set_defaults(run=_run_costs)
        return
    _ask_options(parser, name)
    parser.set_defaults(run=_run_ask, action=name)


def _ask_options(parser: argparse.ArgumentParser, action: str) -> None:
    names = [m.name for m in methods.METHODS.values() if (m.action == "rewrite") == (action == "rewrite")]
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--unit", required=True, help="a sentence, claim or summary id, as in Explore's links")
    parser.add_argument("--method", choices=names, default=DEFAULT_METHOD[action], required=action == "verify")
    parser.add_argument("--variant", help="prompt variant (arm-rewrite: both, subjectivity, unfaithfulness)")
    parser.add_argument("--evidence", choices=methods.EVIDENCE_SETTINGS, default="none", help="fables-verify only")
    parser.add_argument("--k", type=_positive, default=5, help="BM25 passages for --evidence bm25 (default 5)")
    parser.add_argument("--provider", choices=providers.PROVIDERS, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible server (else the settings')")
    parser.add_argument("--fresh", action="store_true", help="ask again even if cached; kept as another sample")
    parser.add_argument("--json", action="store_true", help="print the stored record as JSON")
    add_db(parser)
    add_actor(parser)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of passages, 1 or more; got {text!r}")
    return int(text)


def _run_ask(args: argparse.Namespace) -> int:
    asker = actor(args)
    conn = store.connect(config.db_path(args.db), create=False)
    try:
        store.catch_up(conn)
        with conn.cursor() as cur:
            target = targets.resolve(cur, args.dataset, args.unit)
        what = ask.Ask(
            method=args.method,
            provider=args.provider,
            model=args.model,
            variant=args.variant,
            evidence=args.evidence,
            k=args.k,
            base_url=args.base_url,
            fresh=args.fresh,
        )
        answer = ask.ask(conn, target, what, asker, on_text=_echo)
    finally:
        store.close(conn)
    print(file=sys.stderr)
    if args.json:
        print(json.dumps(answer.to_json(), indent=2, ensure_ascii=False))
    else:
        print(_summary(answer))
    return 0


def _echo(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _summary(answer: ask.Answer) -> str:
    lines = [f"source: {answer.source} ({'from cache' if answer.cached else 'new answer'})"]
    if answer.status != "ok":
        lines.append(f"{answer.status}: {answer.failure}")
    if answer.label:
        lines.append(f"label: {answer.label} (answer: {answer.raw_label})")
    if answer.rewrite is not None:
        lines.append(f"rewrite: {answer.rewrite}")
        lines.append(
            f"rewritten (r != s): {answer.rewritten}; word edit distance: {answer.edit_distance} "
            f"({answer.normalized_edit_distance:.2f} normalised, ARM Table 3's scale)"
        )
    if answer.votes:
        lines.append(f"draws: {', '.join(answer.votes)} (majority: {answer.raw_label or 'none'})")
    if answer.points is not None:
        lines += ["explanation points:", *(f"  - {p}" for p in answer.points)]
    if answer.points_failure:
        lines.append(f"explanation points failed: {answer.points_failure} (the rewrite is stored and counts)")
    if answer.items and answer.rewrite is None:
        lines += ["items:", *(f"  - {item}" for item in answer.items)]
    tokens = (
        "tokens unknown" if answer.input_tokens is None else f"{answer.input_tokens} in, {answer.output_tokens} out"
    )
    lines.append(f"{tokens}; {costs.describe_cost(answer.cost)}; prompts {', '.join(answer.prompts)}")
    return "\n".join(lines)


def _run_costs(args: argparse.Namespace) -> int:
    with reading(args.db) as conn, conn.cursor() as cur:
        rows = usage_rows(cur)
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    for row in rows:
        cost = cost_text(row)
        print(
            f"{row['day']} {row['provider']} {row['model']} {row['method']}: {row['calls']} calls, "
            f"{row['input_tokens']} in, {row['output_tokens']} out, {cost}"
        )
    return 0
