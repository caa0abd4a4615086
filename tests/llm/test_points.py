"""ARM's explanation points (A.3) on scripted answers from the local server, through the real ask path:
a split that does not parse is reported beside a rewrite that counts (on demand, in a run, in the CLI's
record), asked again alone; points answered from another unit's cached call are found by their request;
none are asked when r = s; and the coding page's view of a unit says why it has no points, and gets them
when the coder asks again. The texts a coder reads name neither the original nor the rewrite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.coding import modes, sessions
from faithlens.coding.sessions import SessionSpec
from faithlens.filters import Filters
from faithlens.llm import ask, points
from faithlens.llm.providers import ProviderError
from faithlens.llm.runs import engine, log
from faithlens.llm.runs.spec import RunSpec, Selection
from tests import raw
from tests.coders import ADMIN
from tests.llm.conftest import ME, OPENAI_KEY, asking, rows, target
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer, Reply

MODEL = "gpt-4o"
SOURCE = f"llm/arm-rewrite-both/{MODEL}"
POINTS = ("It names the gift.", "It keeps the order of events.")
ITEMS = "".join(f"<item>{p}</item>" for p in POINTS)
UNTAGGED = "1. It names the gift. 2. It keeps the order of events."
SUMMARY = next(i for i, r in sorted(raw.storysumm_records().items()) if "honeycomb" in " ".join(r["summary"]).lower())
SENTENCES = [s.strip() for s in raw.storysumm_records()[SUMMARY]["summary"]]
SPLIT = "Summarize the key reasons described in this explanation"
"""The fixed start of ARM's explanation-points prompt (A.3), as the paper prints it."""


def _unit(position: int) -> str:
    return f"{SUMMARY}#s{position}"


def _rewrite(sentence: str, why: str = "The story never says so.") -> str:
    return f"{why}\n<answer>{sentence.removesuffix('.')} plainly.</answer>"


def _ask(conn: duckdb.DuckDBPyConnection, server: LLMServer, position: int, **options) -> ask.Answer:
    return ask.ask(conn, target(conn, "storysumm", _unit(position)), asking(server, "arm-rewrite", **options), ME)


def _lookup(conn: duckdb.DuckDBPyConnection, position: int) -> points.Points:
    with conn.cursor() as cur:
        return points.lookup(cur, "storysumm", "sentence", SOURCE, _unit(position))


def _split_requests(server: LLMServer) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions") and SPLIT in r.last_user_text()]


def test_a_split_that_does_not_parse_is_reported_and_asked_again_alone(conn, llm_env: LLMServer) -> None:
    llm_env.queue(_rewrite(SENTENCES[0]), UNTAGGED)
    answer = _ask(conn, llm_env, 0, variant="both")
    assert answer.status == "ok" and answer.rewritten and answer.points is None
    assert answer.points_failure.startswith("parse_failure: expected points between <item></item> tags")
    label = rows(conn, "SELECT raw_value FROM current_label WHERE source = ? AND target_id = ?", [SOURCE, _unit(0)])
    assert label == [{"raw_value": "rewritten"}], "the rewrite is stored and counts though its points failed"
    assert _lookup(conn, 0) == points.Points((), points.FAILED["parse_failure"], True)

    llm_env.queue(ITEMS)
    again = _ask(conn, llm_env, 0, variant="both", fresh_points=True)
    assert again.points == POINTS and again.points_failure is None and again.rewrite == answer.rewrite
    assert len(llm_env.requests) == 3 and SPLIT in llm_env.requests[-1].last_user_text(), "only the points again"
    assert _lookup(conn, 0) == points.Points(POINTS)


def test_points_answered_from_another_units_cache_are_found_by_their_request(conn, llm_env: LLMServer) -> None:
    """Two sentences whose rewrites carry the same explanation: the second one's points are the first's
    stored answer (one split call, stored under the first unit), and the second unit has them too."""
    llm_env.queue(_rewrite(SENTENCES[0]), ITEMS, _rewrite(SENTENCES[1]))
    first, second = _ask(conn, llm_env, 0), _ask(conn, llm_env, 1)
    assert first.points == second.points == POINTS and len(llm_env.requests) == 3
    stored = rows(conn, "SELECT target_id FROM llm_call WHERE prompt_name = 'arm-explanation-points'")
    assert stored == [{"target_id": _unit(0)}], "one split call, which names the first unit"
    assert _lookup(conn, 1) == points.Points(POINTS)

    made = sessions.create(
        conn,
        ADMIN,
        SessionSpec("pref", "storysumm", "sentence", "arm-preference", "arm-preference", suggestions=SOURCE),
    )
    assert sorted(made.units) == [_unit(0), _unit(1)]
    with conn.cursor() as cur:
        shown = [modes.context(cur, made, unit) for unit in made.units]
    assert [c.points for c in shown] == [POINTS, POINTS], "both units have points to mark"


def test_no_points_are_asked_when_the_rewrite_repeats_the_sentence(conn, llm_env: LLMServer) -> None:
    llm_env.queue(f"It is accurate and clear.\n<answer>{SENTENCES[0]}</answer>")
    answer = _ask(conn, llm_env, 0)
    assert answer.status == "ok" and answer.rewritten is False and answer.explanation
    assert answer.points is None and answer.points_failure is None
    assert len(llm_env.requests) == 1, "r = s: ARM has nothing to mark, so no split is asked"
    assert _lookup(conn, 0) == points.Points((), points.R_EQUALS_S, False)


def test_a_coder_is_told_why_there_are_no_points_and_gets_them_by_asking_again(conn, llm_env: LLMServer) -> None:
    llm_env.queue(_rewrite(SENTENCES[0]), UNTAGGED)
    _ask(conn, llm_env, 0)
    # The split of the second rewrite is refused by the provider (400, not retried): the rewrite is stored,
    # its points were never stored.
    llm_env.queue(_rewrite(SENTENCES[1], "Another reason."), Reply(status=400, message="bad request"))
    with pytest.raises(ProviderError):
        _ask(conn, llm_env, 1)
    made = sessions.create(
        conn,
        ADMIN,
        SessionSpec("pref", "storysumm", "sentence", "arm-preference", "arm-preference", suggestions=SOURCE),
    )
    with conn.cursor() as cur:
        failed, never = (modes.context(cur, made, _unit(n)) for n in (0, 1))
    assert (failed.points, failed.points_reason, failed.points_askable) == ((), points.FAILED["parse_failure"], True)
    assert (never.points, never.points_reason, never.points_askable) == ((), points.NOT_ASKED, True)
    words = " ".join([*points.FAILED.values(), points.NOT_ASKED, points.R_EQUALS_S, points.NO_EXPLANATION])
    words += " " + " ".join([points.NO_CALL, points.NO_REWRITE])
    assert not re.search(r"\b(original|rewrite|rewritten)\b", words), "a coder must not learn which version is which"

    llm_env.queue(ITEMS, ITEMS)
    assert points.ask_again(conn, "storysumm", "sentence", SOURCE, _unit(0), ME) == points.Points(POINTS)
    assert points.ask_again(conn, "storysumm", "sentence", SOURCE, _unit(1), ME) == points.Points(POINTS)
    assert all(SPLIT in r.last_user_text() for r in llm_env.requests[-2:])
    with conn.cursor() as cur:
        assert [modes.context(cur, made, _unit(n)).points for n in (0, 1)] == [POINTS, POINTS]


def _per_sentence(good_points: bool):
    """Rewrites with one explanation per sentence; splits that parse only when `good_points`."""

    def respond(request) -> Reply:
        text = request.last_user_text()
        if SPLIT in text:
            return Reply(ITEMS if good_points else UNTAGGED)
        sentence = text.rsplit("Sentence: ", 1)[1].strip()
        return Reply(_rewrite(sentence, f"Sentence {SENTENCES.index(sentence)} says too much."))

    return respond


def test_a_run_counts_and_lists_the_points_that_failed_and_retry_asks_only_them(
    server: LLMServer, db_copy: Path, llm_env: LLMServer
) -> None:
    server.responder = _per_sentence(good_points=False)
    conn = store.connect(db_copy)
    wanted = RunSpec("storysumm", "sentence", "arm-rewrite", "openai", MODEL, "both", base_url=server.openai_base_url)
    run_id = engine.create_run(conn, wanted, Selection(filters=Filters(search=SENTENCES[0])), ME)
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    assert run.units == [_unit(i) for i in range(len(SENTENCES))], "the honeycomb summary's sentences"
    now = engine.Runner(conn, run, ME).execute()
    conn.close()
    n = len(SENTENCES)
    assert (now.done, now.failed, now.points_failed) == (n, 0, n)
    assert now.reason == f"{n} done, 0 failed of {n}; explanation points failed for {n} (Retry failed asks them again)"
    assert sorted(f.target_id for f in now.points_failures) == run.units
    assert all(f.reason.startswith("explanation points: parse_failure: expected points") for f in now.points_failures)
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    listed = json.loads(faithlens(["llm", "runs", "--json", "--db", str(db_copy)], env).stdout)
    assert [(r["done"], r["failed"], r["points_failed"]) for r in listed] == [(n, 0, n)]

    server.responder = _per_sentence(good_points=True)
    before = len(server.requests)
    again = faithlens(["llm", "run", "--resume", str(run_id), "--retry-failed", "--json", "--db", str(db_copy)], env)
    assert again.returncode == 0, again.stderr
    record = json.loads(again.stdout)
    asked = [r for r in server.requests[before:] if r.path.endswith("/chat/completions")]
    assert len(asked) == n and all(SPLIT in r.last_user_text() for r in asked), "only the points were asked again"
    assert (record["done"], record["points_failed"], record["points_failures"]) == (n, 0, [])
    assert record["reason"] == f"{n} done, 0 failed of {n}"
