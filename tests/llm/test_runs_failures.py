"""A run's failures as a user acts on them: grouped by cause with counts, each with its unit in context
(the story, the generator and the summary, read here from the raw StorySumm file), the provider and
base URL named once; Resume on a finished run asks only for the calls that failed; and every state a
run passes through (start, cancel, resume, budget stop, resume with a new budget, stopped on auth)
reads right from the stored events and the job registry."""

from __future__ import annotations

import pytest

from faithlens.llm import retrying
from faithlens.llm.runs import causes, engine, jobs, log, spec
from faithlens.views import run_failures, runs
from tests import raw
from tests.llm.conftest import ME
from tests.llm.runs_support import PerSummary, model_requests, storysumm_summaries, verdict
from tests.llm.test_runs import binary, execute
from tests.llmserver import LLMServer, Reply

ATTEMPTS = 2
FAULTS = {
    "rate limit": Reply(status=429, headers={"retry-after-ms": "10"}),
    "server error": Reply(status=503, message="upstream exploded"),
    "malformed": Reply(malformed=True),
    "cut": Reply("No no no, this goes on and on and on", cut_after=2),
    "timeout": Reply("Yes", delay=3),
    "empty": Reply(""),
    "refused": Reply(refusal=True),
    "unparseable": Reply("Perhaps, it is hard to say."),
}
"""One summary of the val split per cause; each fault comes back on every attempt."""
ANSWERED = {"empty", "refused", "unparseable"}
"""Causes whose answer came back and is stored: only Retry failed asks them again."""


@pytest.fixture
def faulty(llm_env: LLMServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The scripted server failing one val summary per cause; returns summary id -> its cause."""
    monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "1")
    monkeypatch.setenv("FAITHLENS_LLM_BACKOFF", "0.01")
    val = storysumm_summaries("val")
    by_summary = {val[n].summary_id: cause for n, cause in enumerate(FAULTS)}
    llm_env.responder = PerSummary(
        lambda s, _: FAULTS[by_summary[s.summary_id]] if s.summary_id in by_summary else verdict(s), "val"
    )
    return by_summary


def _report(conn, run_id: int) -> run_failures.Report:
    with conn.cursor() as cur:
        return run_failures.report(cur, log.summary(cur, run_id))


def test_failures_are_counted_by_cause_and_shown_with_their_unit(llm_env: LLMServer, conn, faulty) -> None:
    run_id = engine.create_run(conn, binary(llm_env, attempts=ATTEMPTS), spec.Selection(split="val"), ME)
    done = execute(conn, run_id)
    assert (done.state, done.failed) == ("finished", len(FAULTS))

    report = _report(conn, run_id)
    assert report.breakdown.to_json()["by_cause"] == dict.fromkeys(FAULTS, 1)
    assert [c.cause.name for c in report.breakdown.counts] == [c.name for c in causes.CAUSES if c.name in FAULTS]
    assert report.breakdown.endpoints == (f"openai at {llm_env.openai_base_url}",)
    assert report.breakdown.unanswered == len(FAULTS) - len(ANSWERED)
    records = raw.storysumm_records()
    for row in report.rows:
        summary_id, record = row.failure.target_id, records[row.failure.target_id]
        assert row.failure.cause == faulty[summary_id], row.failure.reason
        assert (row.summary_id, row.where) == (summary_id, "summary")
        assert (row.document, row.generator) == (f"Story {record['story-id']}", record["model"])
        assert row.text.startswith(_first_sentence(summary_id)[:100])
        assert (row.explore.dataset, row.explore.detail.summary) == ("storysumm", summary_id)
        assert row.explore.filters.source == "llm/storysumm-binary/gpt-4o"
        assert not row.failure.detail.startswith("openai"), "the endpoint is named once, above the list"
        assert row.failure.bought == (row.failure.cause in ANSWERED)
    asked = {cause: 0 for cause in FAULTS}
    for request in model_requests(llm_env.requests):
        summary = next(s for s in storysumm_summaries("val") if s.first_sentence in request.last_user_text())
        if summary.summary_id in faulty:
            asked[faulty[summary.summary_id]] += 1
    attempts = {row.failure.cause: row.attempts for row in report.rows}
    for cause in FAULTS.keys() - ANSWERED - {"timeout"}:  # a timed-out request may reach the server or not
        assert attempts[cause] == asked[cause] == ATTEMPTS, cause
    assert attempts["refused"] == attempts["unparseable"] == 1


def _first_sentence(summary_id: str) -> str:
    return next(s.first_sentence for s in storysumm_summaries() if s.summary_id == summary_id)


def test_the_cause_of_each_failed_item_is_the_cause_its_last_attempt_recorded(llm_env, conn, faulty) -> None:
    run_id = engine.create_run(conn, binary(llm_env, attempts=ATTEMPTS), spec.Selection(split="val"), ME)
    execute(conn, run_id)
    with conn.cursor() as cur:
        last = dict(
            ((unit, repeat), cause)
            for unit, repeat, cause in cur.execute(
                "SELECT target_id, repeat, arg_max(cause, attempt_id) FROM llm_run_attempt WHERE run_id = ? "
                "GROUP BY ALL",
                [run_id],
            ).fetchall()
        )
        failures = log.failures(cur, run_id)
    unanswered = [f for f in failures if not f.bought]
    assert unanswered and all(f.cause == last[(f.target_id, f.repeat)] for f in unanswered)
    assert set(retrying.CAUSES) <= set(causes.BY_NAME), "every cause an attempt records has a group"


def test_resume_of_a_finished_run_asks_only_the_calls_that_failed(llm_env: LLMServer, conn, faulty) -> None:
    run_id = engine.create_run(conn, binary(llm_env, attempts=1), spec.Selection(split="val"), ME)
    first = execute(conn, run_id)
    report = _report(conn, run_id)
    assert first.state == "finished"
    assert runs.offers_resume(first.state, report.breakdown.unanswered)

    llm_env.reset()
    llm_env.responder = PerSummary(lambda s, _: verdict(s), "val")
    again = execute(conn, run_id)
    assert again.calls == len(model_requests(llm_env.requests)) == len(FAULTS) - len(ANSWERED)
    after = _report(conn, run_id)
    assert after.breakdown.to_json()["by_cause"] == dict.fromkeys(sorted(ANSWERED, key=causes.ORDER.get), 1)
    assert not runs.offers_resume(again.state, after.breakdown.unanswered)


def _summary(conn, run_id: int) -> log.RunSummary:
    with conn.cursor() as cur:
        return log.summary(cur, run_id)


def test_every_state_a_run_passes_through_reads_right(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: Reply(verdict(s), delay=0.1), "val")
    run_id = engine.create_run(conn, binary(llm_env, concurrency=2, budget=1.0), spec.Selection(split="val"), ME)
    registry = jobs.Jobs()
    registry.start(conn, run_id, ME)
    while registry.alive(run_id) and registry.snapshot(run_id).done < 2:
        registry.join(run_id, 0.05)
    assert _summary(conn, run_id).state == "running" and not registry.cancelling(run_id)
    registry.cancel(run_id)
    assert registry.cancelling(run_id) or not registry.alive(run_id)
    registry.join(run_id, 10)
    cancelled = _summary(conn, run_id)
    assert cancelled.state == "cancelled" and "resume asks only for the rest" in cancelled.reason
    assert not registry.cancelling(run_id), "a stopped worker is no longer cancelling"
    assert runs.offers_resume(cancelled.state, 0)

    registry.start(conn, run_id, ME, budget=0.001)
    assert not registry.cancelling(run_id), "the resumed run is not cancelling"
    registry.join(run_id, 30)
    stopped = _summary(conn, run_id)
    assert stopped.state == "budget" and "budget of $0.001" in stopped.reason
    assert runs.offers_resume(stopped.state, 0)
    report = _report(conn, run_id)
    assert report.breakdown.to_json()["by_cause"] == {"budget": stopped.remaining} and stopped.remaining > 0

    registry.start(conn, run_id, ME, budget=5.0)
    registry.join(run_id, 30)
    finished = _summary(conn, run_id)
    assert (finished.state, finished.done, finished.failed) == ("finished", finished.total, 0)
    assert _report(conn, run_id).breakdown.counts == []
    assert not runs.offers_resume(finished.state, 0)
    with conn.cursor() as cur:
        states = cur.execute(
            "SELECT status, reason FROM llm_run_event WHERE run_id = ? AND kind = 'state' ORDER BY event_id", [run_id]
        ).fetchall()
    assert [status for status, _ in states] == ["running", "cancelled", "running", "budget", "running", "finished"]
    assert [reason for status, reason in states if status == "running"] == [None, "budget now $0.001", "budget now $5"]


def test_a_wrong_key_stops_the_run_and_names_the_setting(llm_env: LLMServer, conn) -> None:
    llm_env.responder = lambda request: Reply(status=401, message="invalid api key")
    run_id = engine.create_run(conn, binary(llm_env), spec.Selection(split="val"), ME)
    execute(conn, run_id)
    stopped = _summary(conn, run_id)
    assert (stopped.state, stopped.done, stopped.failed) == ("stopped", 0, 0)
    assert "401" in stopped.reason and "OPENAI_API_KEY" in stopped.reason
    assert runs.offers_resume(stopped.state, 0)
    assert _report(conn, run_id).breakdown.counts == []


def test_a_resumed_run_reads_running_without_the_reason_it_stopped_for(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: verdict(s), "val")
    run_id = engine.create_run(conn, binary(llm_env), spec.Selection(split="val"), ME)
    log.record(conn, run_id, "state", "running")
    log.record(conn, run_id, "state", "cancelled", "cancelled after 3 of 33 items; resume asks only for the rest")
    log.record(conn, run_id, "state", "running")  # what a resume's worker writes first
    resumed = _summary(conn, run_id)
    assert (resumed.state, resumed.reason) == ("running", None)
