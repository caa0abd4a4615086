"""`python -m faithlens llm run|runs`: one method over many units, in the foreground.

`llm run` shows a progress bar on stderr and prints the outcome (JSON with --json). Ctrl-C stops
cleanly (answers in flight are stored) and exits 130; running the same command again makes a new
run that takes every stored answer from the cache, so it calls only what is missing, and with
`--resume RUN` the same run goes on. `--estimate` prints the estimate and calls nothing. Like
`import`, `llm run` writes, so it needs the app stopped; `llm runs` only reads. `llm run` acts as
FAITHLENS_USER (or --as NAME), an admin, who is charged for its calls and whose budget it keeps to.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import TYPE_CHECKING

from faithlens import access, config, store
from faithlens.cli.options import actor, add_actor, add_db, reading
from faithlens.errors import FaithLensError
from faithlens.llm import costs, methods, providers
from faithlens.llm.runs import engine, estimate, log, spec
from faithlens.views import arm_tables, run_failures, runs

if TYPE_CHECKING:
    from faithlens.llm.runs import stability

EXIT_CANCELLED = 130
EXIT_STOPPED = 1
PROGRESS_EVERY_S = 0.5


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `llm run` or `llm runs` (`faithlens.cli.COMMANDS`)."""
    if name == "run":
        _run_options(parser)
        parser.set_defaults(run=_run)
        return
    parser.add_argument("--dataset")
    parser.add_argument("--json", action="store_true")
    add_db(parser)
    parser.set_defaults(run=_runs)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset")
    parser.add_argument("--level", choices=spec.LEVELS)
    parser.add_argument("--method", choices=list(methods.METHODS))
    parser.add_argument("--variant")
    parser.add_argument("--evidence", choices=methods.EVIDENCE_SETTINGS, default="none")
    parser.add_argument("--k", type=int, default=5, help="BM25 passages for --evidence bm25")
    parser.add_argument("--provider", choices=providers.PROVIDERS)
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--split")
    parser.add_argument("--claim-set", help="claims extracted by this source (default: the dataset's own)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1, help="K >= 2 measures self-agreement")
    parser.add_argument(
        "--budget", type=float, help="US dollars; the run stops before it would pass them (with --resume: a new budget)"
    )
    parser.add_argument("--source", help="label source name (default llm/<method>[-<variant>][-<evidence>]/<model>)")
    parser.add_argument("--batch-api", action="store_true", help="the provider's batch API, at batch prices")
    parser.add_argument(
        "--attempts",
        type=int,
        help="per call, on 429/5xx/timeouts/lost connections/cut streams/bad bodies/empty answers "
        "(default FAITHLENS_LLM_ATTEMPTS, 4)",
    )
    parser.add_argument(
        "--resume", type=int, metavar="RUN", help="go on with run RUN (its own settings; only --budget may change)"
    )
    parser.add_argument("--retry-failed", action="store_true", help="with --resume: ask the failed items again")
    parser.add_argument("--estimate", action="store_true", help="print the estimate and call nothing")
    parser.add_argument("--json", action="store_true")
    add_db(parser)
    add_actor(parser)


def _spec(args: argparse.Namespace) -> spec.RunSpec:
    needed = ("dataset", "level", "method", "provider", "model")
    missing = [f"--{name}" for name in needed if getattr(args, name) is None]
    if missing:
        raise FaithLensError(f"llm run needs {', '.join(missing)}", "or --resume RUN to go on with a run")
    return spec.RunSpec(
        dataset=args.dataset,
        level=args.level,
        method=args.method,
        provider=args.provider,
        model=args.model,
        variant=args.variant,
        evidence=args.evidence,
        k=args.k,
        base_url=args.base_url,
        concurrency=args.concurrency,
        repeats=args.repeats,
        budget=args.budget,
        source=args.source,
        batch=args.batch_api,
        attempts=args.attempts,
    )


def _run(args: argparse.Namespace) -> int:
    # Imported here: scikit-learn (a second of import) is for a finished run's agreement, not for --help.
    from faithlens.llm.runs import stability

    starter = actor(args)
    conn = store.connect(config.db_path(args.db), create=False)
    try:
        store.catch_up(conn)
        if args.resume is None:
            wanted = _spec(args)
            selection = spec.Selection(split=args.split, claim_set=args.claim_set)
            if args.estimate:
                return _print_estimate(conn, wanted, selection, starter, args.json)
            run_id = engine.create_run(conn, wanted, selection, starter)
        else:
            run_id = args.resume
        with conn.cursor() as cur:
            run = log.load(cur, run_id)
        if run is None:
            raise FaithLensError(f"no run {run_id}", "see `python -m faithlens llm runs`")
        print(f"run {run.run_id}: {run.source} over {run.selection}", file=sys.stderr)
        budget = args.budget if args.resume is not None else None
        runner = engine.Runner(conn, run, starter, retry_failed=args.retry_failed, budget=budget)
        started = time.monotonic()
        snapshot = _foreground(runner)
        with conn.cursor() as cur:
            agreement = stability.of_run(cur, run.run_id)
            figures = arm_tables.run_figures(cur, run.run_id)
            stored = log.summary(cur, run.run_id)
            failed = run_failures.report(cur, stored)
    finally:
        store.close(conn)
    result = _result(snapshot, time.monotonic() - started, agreement) | _failures_json(stored, failed)
    if figures is not None:
        result["arm"] = figures.to_json()
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _text(result))
    return {"cancelled": EXIT_CANCELLED, "stopped": EXIT_STOPPED}.get(snapshot.state, 0)


def _foreground(runner: engine.Runner) -> engine.Snapshot:
    """Run on a worker thread while this one draws progress; Ctrl-C cancels and waits for calls in flight.

    Waits on an Event rather than `Thread.join`: a join interrupted by Ctrl-C can report the thread
    finished while it still runs."""
    outcome: list[engine.Snapshot] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append(runner.execute())
        finally:
            finished.set()

    threading.Thread(target=work, daemon=True).start()
    try:
        while not finished.wait(PROGRESS_EVERY_S):
            _progress(runner.snapshot())
    except KeyboardInterrupt:
        print("\ncancelling: storing the answers in flight (Ctrl-C again to quit now)", file=sys.stderr)
        runner.cancel()
        finished.wait()
    _progress(runner.snapshot())
    print(file=sys.stderr)
    if not outcome:
        raise FaithLensError(f"run {runner.run.run_id} ended without a result", "see the error above")
    return outcome[0]


def _progress(now: engine.Snapshot) -> None:
    width = 30
    filled = int(width * (now.done + now.failed) / now.total) if now.total else width
    eta = f", about {now.eta_s:.0f} s left" if now.eta_s is not None else ""
    cost = costs.describe_cost(now.cost)
    line = f"[{'#' * filled}{'.' * (width - filled)}] {now.done:,} done, {now.failed:,} failed of {now.total:,}"
    line += f"; {now.calls:,} calls, {cost}{eta}" + (f"; {now.batch}" if now.batch else "")
    sys.stderr.write(("\r" if sys.stderr.isatty() else "") + line + ("" if sys.stderr.isatty() else "\n"))
    sys.stderr.flush()


def _result(now: engine.Snapshot, wall_s: float, agreement: stability.Stability | None) -> dict[str, object]:
    result = {
        "run_id": now.run_id,
        "source": now.source,
        "state": now.state,
        "reason": now.reason,
        "total": now.total,
        "done": now.done,
        "failed": now.failed,
        "cached": now.cached,
        "calls": now.calls,
        "input_tokens": now.input_tokens,
        "output_tokens": now.output_tokens,
        "cost": now.cost,
        "wall_s": round(wall_s, 3),
        "points_failed": now.points_failed,
        "points_failures": [{"unit": f.target_id, "repeat": f.repeat, "reason": f.reason} for f in now.points_failures],
    }
    if agreement is not None:
        result["self_agreement"] = agreement.to_json()
    return result


def _failures_json(run: log.RunSummary, failed: run_failures.Report) -> dict[str, object]:
    """A run's failures with their cause and unit, counted by cause, and what would go on with it."""
    unanswered = failed.breakdown.unanswered
    return {
        **failed.to_json(),
        "resume_offered": runs.offers_resume(run.state, unanswered),
        "retry_failed_offered": bool(run.failed or run.points_failed),
    }


def _failures_text(result: dict[str, object]) -> list[str]:
    counted = ", ".join(f"{cause} {count:,}" for cause, count in result["by_cause"].items())
    lines = [f"by cause: {counted}" + "".join(f" (asked {e})" for e in result["endpoints"])] if counted else []
    return lines + [
        f"  failed, {f['cause']}: {f['unit']} (repeat {f['repeat'] + 1}): {f['detail']}" for f in result["failures"]
    ]


def _text(result: dict[str, object]) -> str:
    lines = [
        f"run {result['run_id']} ({result['source']}): {result['state']}: {result['reason']}",
        f"{result['done']:,} done ({result['cached']:,} from stored answers), {result['failed']:,} failed "
        f"of {result['total']:,}; {result['calls']:,} calls, {result['input_tokens']:,} in, "
        f"{result['output_tokens']:,} out, {costs.describe_cost(result['cost'])}, {result['wall_s']} s",
    ]
    lines += _failures_text(result)
    if result["points_failed"]:
        lines.append(f"explanation points failed for {result['points_failed']:,} done items (the rewrites count)")
        lines += [f"  {f['unit']} (repeat {f['repeat']}): {f['reason']}" for f in result["points_failures"]]
    if "arm" in result:
        lines.append(_arm_text(result["arm"]))
    if "self_agreement" in result:
        agreement = result["self_agreement"]
        kappa = "undefined" if agreement["kappa_mean"] is None else f"{agreement['kappa_mean']:.3f}"
        lines.append(
            f"self-agreement over {agreement['repeats']} repeats: mean Cohen's kappa {kappa}; "
            f"{agreement['flipping_units']:,} of {agreement['units']:,} units flip"
        )
    return "\n".join(lines)


def _arm_text(arm: dict[str, object]) -> str:
    """ARM Table 3's figures of a rewrite run in one line."""
    if not arm["rewrites"]:
        return f"ARM: 0 of {arm['claims']:,} {arm['level']}s rewritten"
    return (
        f"ARM: {arm['rewrites']:,} of {arm['claims']:,} {arm['level']}s rewritten (r != s); average edit distance "
        f"of the rewrites {arm['avg_edit_distance']:.2f} (normalised, Table 3's scale), "
        f"{arm['avg_word_edits']:.2f} word edits"
    )


def _print_estimate(conn, wanted: spec.RunSpec, selection: spec.Selection, starter: access.Actor, as_json: bool) -> int:
    wanted = wanted.resolved()
    with conn.cursor() as cur:
        units, words = spec.select_units(cur, wanted.dataset, wanted.level, selection)
    found = estimate.estimate(conn, wanted, units, starter)
    if as_json:
        figures = {name: value for name, value in found.__dict__.items() if name != "spending"}
        left = {"person": starter.id, "budget_left_usd": found.spending.left_usd()}
        print(json.dumps({"selection": words, "source": wanted.source, **figures, **left}, indent=2))
        return 0
    seconds = "within 24 h (batch)" if found.seconds is None else f"about {found.seconds:,.0f} s"
    print(
        f"{wanted.source} over {words}: {found.items:,} items ({found.cached_items:,} already stored), "
        f"{found.calls:,} calls, {found.input_tokens:,} input and {found.output_tokens:,} output tokens, "
        f"{costs.describe_cost(found.cost)}, {seconds}"
    )
    print("\n".join(f"  - {note}" for note in found.notes))
    return 0


def _runs(args: argparse.Namespace) -> int:
    with reading(args.db) as conn, conn.cursor() as cur:
        found = log.summaries(cur, dataset=args.dataset)
        figures = {r.run_id: arm_tables.run_figures(cur, r.run_id) for r in found}
        failed = {r.run_id: _failures_json(r, run_failures.report(cur, r)) for r in found}
    arm = {run_id: f.to_json() for run_id, f in figures.items() if f is not None}
    if args.json:
        rows = [
            {**r.__dict__, "spec": json.loads(r.spec)}
            | failed[r.run_id]
            | ({"arm": arm[r.run_id]} if r.run_id in arm else {})
            for r in found
        ]
        print(json.dumps(rows, indent=2, default=str))
        return 0
    for r in found:
        print(
            f"run {r.run_id} {r.created_at:%Y-%m-%d %H:%M} {r.source} over {r.selection}: {r.state}; "
            f"{r.done:,} done, {r.failed:,} failed of {r.total:,}; {r.calls:,} calls, {costs.describe_cost(r.cost)}"
            + (f"; explanation points failed for {r.points_failed:,}" if r.points_failed else "")
        )
        if failed[r.run_id]["by_cause"]:
            print("  " + _failures_text(failed[r.run_id])[0])
        if r.run_id in arm:
            print("  " + _arm_text(arm[r.run_id]))
    return 0
