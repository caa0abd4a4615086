"""In-run retries against the scripted server: a provider failing 40% of first attempts (429 with
retry-after, 500, a cut stream, a malformed body, a connection reset) ends the run with only the
persistent failures, each answer stored once and every fault recorded; and a single-slot local
server that interrupts the request in flight stops a run at concurrency 2 with what to do, and
answers a run at concurrency 1 with its token counts from whole (non-streamed) answers."""

from __future__ import annotations

import threading
import time
import zlib
from collections import defaultdict

import duckdb
import pytest

from faithlens.llm import providers
from faithlens.llm.runs import attempts, engine, log, spec
from tests.llm.conftest import ME, rows
from tests.llm.runs_support import RawSummary, answers_per_request, model_requests, storysumm_summaries, verdict
from tests.llmserver import LLMServer, Reply, Request

MODEL = "gpt-4o"
RETRY_AFTER_MS = 150
TRANSIENT = {
    "rate limit": Reply(status=429, headers={"retry-after-ms": str(RETRY_AFTER_MS)}),
    "server error": Reply(status=500, message="upstream hiccup"),
    "cut": Reply("No no no, this goes on", cut_after=1),
    "malformed": Reply(malformed=True),
    "connection": Reply(reset=True),
}
KINDS = list(TRANSIENT)


class Flaky:
    """A provider that fails the first attempt at 40% of the summaries (the second too at every other
    one of those), cycling through the fault kinds; some summaries fail every time; some answers are
    refused or unparseable. Counts what it saw per summary, with times."""

    def __init__(self, summaries: list[RawSummary]) -> None:
        self.summaries = summaries
        self.seen: dict[str, list[float]] = defaultdict(list)
        self._lock = threading.Lock()
        self.faults: dict[str, list[str]] = {}
        self.persistent = {s.summary_id: KINDS[n % 2] for n, s in enumerate(summaries[:4])}
        self.refused, self.unparseable = summaries[4].summary_id, summaries[5].summary_id
        for n, s in enumerate(summaries[6:]):
            if zlib.crc32(s.summary_id.encode()) % 10 < 4:
                self.faults[s.summary_id] = [KINDS[n % 5]] + ([KINDS[(n + 1) % 5]] if n % 2 else [])

    def __call__(self, request: Request) -> Reply | str:
        text = request.last_user_text()
        summary = next(s for s in self.summaries if s.first_sentence in text)
        with self._lock:
            attempt = len(self.seen[summary.summary_id])
            self.seen[summary.summary_id].append(time.monotonic())
        if summary.summary_id in self.persistent:
            return TRANSIENT[self.persistent[summary.summary_id]]
        if summary.summary_id == self.refused:
            return Reply(refusal=True)
        if summary.summary_id == self.unparseable:
            return "Perhaps, it is hard to say."
        planned = self.faults.get(summary.summary_id, [])
        return TRANSIENT[planned[attempt]] if attempt < len(planned) else verdict(summary)


def run(conn: duckdb.DuckDBPyConnection, wanted: spec.RunSpec, selection: spec.Selection) -> engine.Snapshot:
    run_id = engine.create_run(conn, wanted, selection, ME)
    with conn.cursor() as cur:
        return engine.Runner(conn, log.load(cur, run_id), ME).execute()


def test_transient_faults_are_asked_again_and_only_persistent_ones_are_listed_failed(
    llm_env: LLMServer, conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHLENS_LLM_BACKOFF", "0.02")
    monkeypatch.delenv("FAITHLENS_LLM_ATTEMPTS", raising=False)  # the default, 4
    summaries = storysumm_summaries()
    flaky = Flaky(summaries)
    llm_env.responder = flaky
    wanted = spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", MODEL, base_url=llm_env.openai_base_url)
    done = run(conn, wanted, spec.Selection())

    failed_first = sum(1 for s in summaries if flaky.faults.get(s.summary_id)) + len(flaky.persistent)
    assert failed_first / len(summaries) >= 0.35, "the mix must fail a good share of first attempts"
    listed = {f.target_id: f for f in done.failures}
    assert set(listed) == set(flaky.persistent) | {flaky.refused, flaky.unparseable}
    assert (done.state, done.done, done.failed) == ("finished", len(summaries) - len(listed), len(listed))
    for unit in flaky.persistent:
        assert "(4 attempts)" in listed[unit].reason and not listed[unit].bought
    assert listed[flaky.refused].bought and listed[flaky.unparseable].bought

    seen = {unit: len(times) for unit, times in flaky.seen.items()}
    expected = {s.summary_id: 1 + len(flaky.faults.get(s.summary_id, [])) for s in summaries}
    expected |= {unit: 4 for unit in flaky.persistent}
    assert seen == expected, "each fault asked again once, refusals and unparseable answers never"
    assert max(answers_per_request(conn).values()) == 1
    assert len(rows(conn, "SELECT call_id FROM llm_call")) == len(summaries) - len(flaky.persistent)

    with conn.cursor() as cur:
        recorded = attempts.attempts(cur, done.run_id)
    causes = {unit: [a.cause for a in found] for (unit, _repeat), found in recorded.items()}
    assert causes == {u: kinds for u, kinds in flaky.faults.items() if kinds} | {
        u: [kind] * 4 for u, kind in flaky.persistent.items()
    }
    assert done.retried == sum(len(c) for c in causes.values())
    for (unit, _repeat), found in recorded.items():
        assert [a.attempt for a in found] == list(range(1, len(found) + 1))
        waits = [a.wait_s for a in found]
        assert (waits[-1] is None) == (unit in flaky.persistent), "the last attempt is followed by no wait"
        for a, then, after in zip(found, flaky.seen[unit], flaky.seen[unit][1:], strict=False):
            if a.cause == "rate limit":  # retry-after honoured, measured by the server
                assert a.wait_s >= RETRY_AFTER_MS / 1000 and after - then >= RETRY_AFTER_MS / 1000


def test_an_empty_answer_of_a_local_model_alone_in_flight_is_its_answer(llm_env: LLMServer, conn) -> None:
    val = storysumm_summaries("val")
    llm_env.responder = lambda request: "" if val[0].first_sentence in request.last_user_text() else "Yes"
    wanted = spec.RunSpec(
        "storysumm", "summary", "storysumm-binary", "openai", MODEL, base_url=llm_env.openai_base_url, concurrency=1
    )
    done = run(conn, wanted, spec.Selection(split="val"))
    (failure,) = done.failures
    assert failure.target_id == val[0].summary_id and failure.bought and "empty" in failure.reason
    asked = [r for r in model_requests(llm_env.requests) if val[0].first_sentence in r.last_user_text()]
    assert len(asked) == 1, "asked again at the same settings, a local model gives the same empty answer"


def test_a_single_slot_server_stops_a_concurrent_run_and_answers_one_at_a_time(llm_env: LLMServer, conn) -> None:
    val = storysumm_summaries("val")
    by_first = {s.first_sentence: s for s in val}

    def answer(request: Request) -> Reply:
        summary = next(s for first, s in by_first.items() if first in request.last_user_text())
        return Reply(verdict(summary), delay=0.15)

    with LLMServer(answer, single_slot=True, stream_usage=False) as local:
        wanted = spec.RunSpec(
            "storysumm", "summary", "storysumm-binary", "openai", "local-model", base_url=local.openai_base_url,
            concurrency=2,
        )  # fmt: skip
        stopped = run(conn, wanted, spec.Selection(split="val"))
        sent = len(model_requests(local.requests))
        assert stopped.state == "stopped" and stopped.failed == 0
        assert "concurrency 1" in stopped.reason and "--parallel" in stopped.reason
        assert sent <= attempts.WINDOW + 2, "it does not keep asking into the interruptions"
        assert rows(conn, "SELECT call_id FROM llm_call WHERE status = 'empty'") == []

        local.reset()
        again = run(conn, spec.RunSpec(**{**wanted.__dict__, "concurrency": 1}), spec.Selection(split="val"))
        assert (again.state, again.done, again.failed) == ("finished", len(val), 0)
        bought = model_requests(local.requests)
        assert len(bought) == len(val) - stopped.done and not any(r.stream for r in bought)
        stored = rows(
            conn,
            "SELECT target_id, input_tokens, output_tokens FROM llm_call WHERE base_url = ?",
            [local.openai_base_url],
        )
        words = {next(s for f, s in by_first.items() if f in r.last_user_text()).summary_id: r for r in bought}
        for row in stored:
            if row["target_id"] in words:  # answered whole: the server's usage
                assert (row["input_tokens"], row["output_tokens"]) == (words[row["target_id"]].prompt_words(), 1)


def test_a_stream_without_token_counts_turns_to_whole_answers_when_no_one_watches(llm_env: LLMServer) -> None:
    with LLMServer(default_text="No", stream_usage=False) as local:
        endpoint = providers.Endpoint("openai", local.openai_base_url)
        say = [{"role": "user", "content": "Is it consistent? three more words"}]
        first = providers.complete(endpoint, "m", None, say, 0.0, 5)
        second = providers.complete(endpoint, "m", None, say, 0.0, 5)
        watched = providers.complete(endpoint, "m", None, say, 0.0, 5, on_text=lambda _piece: None)
        assert [r.stream for r in local.requests] == [True, False, True]
    assert (first.input_tokens, first.output_tokens) == (None, None), "the stream reported nothing"
    assert (second.input_tokens, second.output_tokens) == (6, 1), "the whole answer's usage"
    assert watched.text == "No" and watched.input_tokens is None
