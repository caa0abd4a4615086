"""Runs in this process against the scripted server: every unit labelled once, faults listed with
their reason and retried without buying an answer twice, the budget kept, cancel and resume, and
self-agreement over repeats computed with scikit-learn from the scripted verdicts."""

from __future__ import annotations

import math

import duckdb
import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens.llm.runs import engine, estimate, jobs, log, spec, stability
from tests.llm.conftest import ANTHROPIC_KEY, ME, PROVIDERS, one, price, rows
from tests.llm.runs_support import (
    PerSummary,
    answers_per_request,
    current_labels,
    model_requests,
    pairs,
    prompt_chars,
    storysumm_summaries,
    verdict,
)
from tests.llmserver import LLMServer, Reply

MODEL = "gpt-4o"


def binary(server: LLMServer, **options) -> spec.RunSpec:
    fields = {"concurrency": 8, "base_url": server.openai_base_url} | options
    return spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", MODEL, **fields)


def execute(conn: duckdb.DuckDBPyConnection, run_id: int, retry_failed: bool = False) -> engine.Snapshot:
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    return engine.Runner(conn, run, ME, retry_failed=retry_failed).execute()


def test_a_run_labels_every_summary_once_and_a_second_run_buys_nothing(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: verdict(s))
    run_id = engine.create_run(conn, binary(llm_env), spec.Selection(), ME)
    first = execute(conn, run_id)
    summaries = storysumm_summaries()
    asked = model_requests(llm_env.requests)
    assert (first.total, first.done, first.failed, first.calls, first.cached) == (96, 96, 0, 96, 0)
    assert len(asked) == 96
    expected = {s.summary_id: "unfaithful" if verdict(s) == "No" else "faithful" for s in summaries}
    assert current_labels(conn, "llm/storysumm-binary/gpt-4o") == expected
    tokens_in = sum(r.prompt_words() for r in asked)
    per_in, per_out = price(MODEL)
    assert (first.input_tokens, first.output_tokens) == (tokens_in, 96)
    assert first.cost == pytest.approx((tokens_in * per_in + 96 * per_out) / 1e6)

    llm_env.reset()
    again = execute(conn, engine.create_run(conn, binary(llm_env), spec.Selection(), ME))
    assert (again.done, again.calls, again.cached, again.cost) == (96, 0, 96, 0.0)
    assert model_requests(llm_env.requests) == []
    assert max(answers_per_request(conn).values()) == 1


def test_the_estimate_counts_the_prompts_sent_and_stored_answers_as_free(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: verdict(s), split="val")
    wanted = binary(llm_env).resolved()
    with conn.cursor() as cur:
        units, words = spec.select_units(cur, "storysumm", "summary", spec.Selection(split="val"))
    before = estimate.estimate(conn, wanted, units, ME)
    execute(conn, engine.create_run(conn, wanted, spec.Selection(split="val"), ME))
    sent = model_requests(llm_env.requests)
    val = storysumm_summaries("val")
    assert words == f"{len(val)} summaries where split is val"
    assert (before.items, before.cached_items, before.calls) == (len(val), 0, len(val))
    assert before.input_tokens == sum(math.ceil(prompt_chars(r) / 4) for r in sent)
    after = estimate.estimate(conn, wanted, units, ME)
    assert (after.cached_items, after.calls, after.input_tokens, after.cost) == (len(val), 0, 0, 0)
    assert any("stored answers" in note for note in after.notes)


FAULTS = {
    0: lambda attempt: Reply(status=429, headers={"retry-after-ms": "10"}) if attempt == 0 else Reply("Yes"),
    1: lambda attempt: Reply(status=500, message="upstream exploded"),
    2: lambda attempt: Reply(malformed=True),
    3: lambda attempt: Reply(""),
    4: lambda attempt: Reply(refusal=True),
    5: lambda attempt: Reply("No no no, this goes on and on", cut_after=2),
    6: lambda attempt: Reply("Yes", delay=3),
    7: lambda attempt: Reply("Perhaps, it is hard to say."),
}
REASONS = {
    1: "500 server error: upstream exploded",
    2: "not valid JSON",
    3: "empty",
    4: "refused",
    5: "cut off",
    6: "no answer in time",
    7: "parse_failure",
}


def test_faults_are_listed_with_their_reason_and_a_retry_buys_only_what_failed(
    llm_env: LLMServer, conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "1")
    monkeypatch.setenv("FAITHLENS_LLM_BACKOFF", "0.01")
    val = storysumm_summaries("val")
    faulty = {val[n].summary_id: fault for n, fault in FAULTS.items()}
    llm_env.responder = PerSummary(lambda s, attempt: faulty.get(s.summary_id, lambda _: verdict(s))(attempt), "val")
    run_id = engine.create_run(conn, binary(llm_env, attempts=2), spec.Selection(split="val"), ME)
    first = execute(conn, run_id)

    assert first.done + first.failed == first.total == len(val)
    reasons = {f.target_id: f.reason for f in first.failures}
    assert set(reasons) == {val[n].summary_id for n in REASONS}
    for n, words in REASONS.items():
        assert words in reasons[val[n].summary_id], (n, reasons[val[n].summary_id])
    bought = {f.target_id for f in first.failures if f.bought}
    assert bought == {val[n].summary_id for n in (3, 4, 7)}
    source = "llm/storysumm-binary/gpt-4o"
    assert set(current_labels(conn, source)) == {s.summary_id for s in val} - set(reasons)

    llm_env.responder = PerSummary(lambda s, _: verdict(s), "val")
    second = execute(conn, run_id, retry_failed=True)
    assert (second.done, second.failed) == (len(val), 0)
    assert second.calls == len(REASONS)
    samples = rows(conn, "SELECT target_id, sample FROM llm_call WHERE source = ? ORDER BY ALL", [source])
    per_unit = {}
    for row in samples:
        per_unit.setdefault(row["target_id"], []).append(row["sample"])
    assert {u: s for u, s in per_unit.items() if s != [0]} == {val[n].summary_id: [0, 1] for n in (3, 4, 7)}
    assert max(answers_per_request(conn).values()) == 1
    assert len(current_labels(conn, source)) == len(val)


def test_the_budget_stops_the_run_before_it_would_pass(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: verdict(s))
    run_id = engine.create_run(conn, binary(llm_env, budget=0.02, concurrency=2), spec.Selection(), ME)
    stopped = execute(conn, run_id)
    paid = one(conn, "SELECT sum(cost_usd) FROM llm_call")
    assert stopped.state == "budget"
    assert "budget of $0.02" in stopped.reason
    assert 1 <= stopped.done < 96 and stopped.failed == 0
    assert paid <= 0.02
    assert paid == pytest.approx(stopped.cost)
    assert len(model_requests(llm_env.requests)) == stopped.done

    with conn.cursor() as cur:
        raised = engine.Runner(conn, log.load(cur, run_id), ME, budget=1.0).execute()
    assert (raised.state, raised.done, raised.calls) == ("finished", 96, 96 - stopped.done)
    assert len(model_requests(llm_env.requests)) == 96


def test_an_unpriced_model_cannot_have_a_budget(llm_env: LLMServer, conn) -> None:
    wanted = spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", "my-local-model", budget=1.0)
    with pytest.raises(Exception, match="no price"):
        engine.create_run(conn, wanted, spec.Selection(), ME)


def test_cancel_keeps_what_arrived_and_resume_calls_only_the_rest(llm_env: LLMServer, conn) -> None:
    llm_env.responder = PerSummary(lambda s, _: Reply(verdict(s), delay=0.15), "val")
    run_id = engine.create_run(conn, binary(llm_env, concurrency=2), spec.Selection(split="val"), ME)
    registry = jobs.Jobs()
    registry.start(conn, run_id, ME)
    while registry.snapshot(run_id).done < 4:
        registry.join(run_id, 0.05)
    registry.cancel(run_id)
    registry.join(run_id, 10)
    cancelled = registry.snapshot(run_id)
    assert cancelled.state == "cancelled" and not registry.alive(run_id)
    assert 4 <= cancelled.done < cancelled.total
    with conn.cursor() as cur:
        assert log.summary(cur, run_id).done == cancelled.done

    registry.start(conn, run_id, ME)
    registry.join(run_id, 30)
    resumed = registry.snapshot(run_id)
    val = storysumm_summaries("val")
    assert (resumed.state, resumed.done, resumed.failed) == ("finished", len(val), 0)
    assert resumed.calls == len(val) - cancelled.done
    assert len(model_requests(llm_env.requests)) == len(val)
    assert max(answers_per_request(conn).values()) == 1


def test_repeats_give_cohens_kappa_between_runs_and_the_units_that_flip(llm_env: LLMServer, conn) -> None:
    val = storysumm_summaries("val")
    flips = {s.summary_id for s in val[::4]}

    def rule(summary, attempt):
        if summary.summary_id in flips and attempt == 1:
            return "Yes" if verdict(summary) == "No" else "No"
        return verdict(summary)

    llm_env.responder = PerSummary(rule, "val")
    run_id = engine.create_run(conn, binary(llm_env, repeats=3), spec.Selection(split="val"), ME)
    done = execute(conn, run_id)
    with conn.cursor() as cur:
        agreement = stability.of_run(cur, run_id)
    assert (done.done, done.total) == (3 * len(val), 3 * len(val))
    # Which repeat got the flipped answer depends on the order the calls went out: read each answer
    # as the model gave it (the stored reply of sample r), in unit order.
    replies = rows(conn, "SELECT target_id, sample, replies[1] AS reply FROM llm_call ORDER BY target_id, sample")
    by_repeat = {r: [row["reply"] for row in replies if row["sample"] == r] for r in range(3)}
    assert all(len(by_repeat[r]) == len(val) for r in range(3))
    expected = [cohen_kappa_score(by_repeat[a], by_repeat[b]) for a, b in pairs([0, 1, 2])]
    assert [p.kappa for p in agreement.pairs] == pytest.approx(expected)
    assert agreement.kappa == pytest.approx(sum(expected) / 3)
    assert set(agreement.flipping) == flips and agreement.units == len(val)
    first = {
        row["target_id"]: "unfaithful" if row["reply"] == "No" else "faithful" for row in replies if row["sample"] == 0
    }
    assert current_labels(conn, "llm/storysumm-binary/gpt-4o") == first
    assert one(conn, "SELECT count(DISTINCT sample) FROM llm_call") == 3


def test_a_missing_key_stops_the_run_without_failing_items_and_a_resume_finishes(
    llm_env: LLMServer, conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_env.responder = PerSummary(lambda s, _: f"<answer>{verdict(s)}</answer>", "val")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    wanted = spec.RunSpec(
        "storysumm", "summary", "storysumm-binary", "anthropic", PROVIDERS["anthropic"][0],
        base_url=llm_env.anthropic_base_url,
    )  # fmt: skip
    run_id = engine.create_run(conn, wanted, spec.Selection(split="val"), ME)
    stopped = execute(conn, run_id)
    assert (stopped.state, stopped.done, stopped.failed) == ("stopped", 0, 0)
    assert "ANTHROPIC_API_KEY" in stopped.reason
    assert model_requests(llm_env.requests) == []

    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    resumed = execute(conn, run_id)
    assert (resumed.state, resumed.done, resumed.failed) == ("finished", resumed.total, 0)
