"""An LLM run on one server of a team, against the scripted provider (tests/llmserver): its answers,
labels and progress reach the other server, whose own run of the same method then buys nothing (the
answers are its cache too), and no answer is stored twice."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from faithlens import store
from faithlens.llm.runs import engine, log, spec
from tests.llm.conftest import ME, OPENAI_KEY
from tests.llm.runs_support import (
    PerSummary,
    answers_per_request,
    current_labels,
    model_requests,
    storysumm_summaries,
    verdict,
)
from tests.llmserver import LLMServer

SOURCE = "llm/storysumm-binary/gpt-4o"


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        yield server


def _run(conn, server: LLMServer) -> engine.Snapshot:
    wanted = spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", "gpt-4o", concurrency=8)
    run_id = engine.create_run(conn, wanted, spec.Selection(split="val"), ME)
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    return engine.Runner(conn, run, ME).execute()


def test_a_run_on_one_server_is_the_other_servers_cache(servers, provider: LLMServer):
    a, b = servers("a"), servers("b")
    provider.responder = PerSummary(lambda s, _: verdict(s), split="val")
    val = storysumm_summaries("val")
    done = _run(a, provider)
    assert (done.done, done.calls) == (len(val), len(val))
    store.catch_up(b)
    expected = {s.summary_id: "unfaithful" if verdict(s) == "No" else "faithful" for s in val}
    assert current_labels(a, SOURCE) == current_labels(b, SOURCE) == expected
    with b.cursor() as cur:
        (on_b,) = log.summaries(cur, dataset="storysumm")
    assert (on_b.state, on_b.done, on_b.failed) == ("finished", len(val), 0)

    provider.reset()
    again = _run(b, provider)
    assert (again.done, again.calls, again.cached) == (len(val), 0, len(val))
    assert model_requests(provider.requests) == []
    store.catch_up(a)
    assert max(answers_per_request(a).values()) == max(answers_per_request(b).values()) == 1
