"""Runs through the providers' batch APIs, against the scripted server's OpenAI Batch and Anthropic
Message Batches: answers stored at batch prices, failed lines listed, only what is missing sent
again, and a run killed while polling picks the same batch up again instead of buying it twice."""

from __future__ import annotations

import json
import signal
import time
import tomllib
from pathlib import Path

import duckdb
import pytest

from faithlens.llm.runs import engine, log, spec
from tests.llm.conftest import ANTHROPIC_KEY, ME, OPENAI_KEY, PRICES, PROVIDERS
from tests.llm.runs_support import PerSummary, current_labels, storysumm_summaries, verdict
from tests.llm.test_cli_llm import environment, faithlens
from tests.llm.test_cli_runs import start
from tests.llmserver import REFUSAL_TEXT, LLMServer, Reply


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAITHLENS_BATCH_POLL", "0.01")


def said(provider: str, summary) -> str:
    """The scripted verdict as the prompt asks for it: StorySumm's Claude variant wants <answer> tags."""
    return f"<answer>{verdict(summary)}</answer>" if provider == "anthropic" else verdict(summary)


def batch_price(model: str) -> tuple[float, float]:
    """The table's batch rates; a dated snapshot (claude-3-5-sonnet-20241022) is priced as its model."""
    models = tomllib.loads(PRICES.read_text())["models"]
    row = models.get(model) or models[model.rsplit("-", 1)[0]]
    return row["batch_input"], row["batch_output"]


def batch_spec(server: LLMServer, provider: str) -> spec.RunSpec:
    model, url = PROVIDERS[provider]
    return spec.RunSpec(
        "storysumm", "summary", "storysumm-binary", provider, model, base_url=getattr(server, url), batch=True
    )


def execute(conn: duckdb.DuckDBPyConnection, run_id: int) -> engine.Snapshot:
    with conn.cursor() as cur:
        return engine.Runner(conn, log.load(cur, run_id), ME).execute()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_run_stores_answers_at_batch_prices_and_resends_only_what_failed(
    llm_env: LLMServer, conn, provider: str
) -> None:
    val = storysumm_summaries("val")
    broken, refused = val[0].summary_id, val[1].summary_id
    faults = {broken: Reply(status=500, message="line failed"), refused: Reply(refusal=True)}
    llm_env.responder = PerSummary(lambda s, _: faults.get(s.summary_id, said(provider, s)), "val")
    wanted = batch_spec(llm_env, provider)
    done = execute(conn, engine.create_run(conn, wanted, spec.Selection(split="val"), ME))

    [batch] = llm_env.batches.values()
    assert len(batch.custom_ids) == len(val) and batch.protocol == provider
    assert (done.done, done.failed, done.calls) == (len(val) - 2, 2, len(val) - 1)
    reasons = {f.target_id: (f.reason, f.bought) for f in done.failures}
    assert "line failed" in reasons[broken][0] and not reasons[broken][1]
    assert reasons[refused][0].startswith("refused") and reasons[refused][1]
    lines = [r for r in llm_env.requests if r.batch_id]
    answered = [r for r in lines if PerSummary(verdict, "val").which(r).summary_id != broken]
    words_out = sum(len(said(provider, s).split()) for s in val[2:])
    words_out += len(REFUSAL_TEXT.split()) if provider == "openai" else 0
    per_in, per_out = batch_price(wanted.model)
    assert done.cost == pytest.approx((sum(r.prompt_words() for r in answered) * per_in + words_out * per_out) / 1e6)
    source = wanted.resolved().source
    assert set(current_labels(conn, source)) == {s.summary_id for s in val} - {broken, refused}

    llm_env.responder = PerSummary(lambda s, _: said(provider, s), "val")
    again = execute(conn, engine.create_run(conn, wanted, spec.Selection(split="val"), ME))
    assert len(llm_env.batches) == 2
    assert list(llm_env.batches.values())[1].custom_ids == [batch.custom_ids[0]]
    assert (again.done, again.failed, again.calls, again.cached) == (len(val) - 1, 1, 1, len(val) - 2)


def test_a_run_killed_while_polling_collects_the_same_batch_on_resume(server: LLMServer, db_copy: Path) -> None:
    server.responder = PerSummary(lambda s, _: said("anthropic", s), "val")
    server.batch_polls = 10**6
    env = environment(server, ANTHROPIC_API_KEY=ANTHROPIC_KEY, OPENAI_API_KEY=OPENAI_KEY, FAITHLENS_BATCH_POLL="0.02")
    args = ["llm", "run", "--dataset", "storysumm", "--level", "summary", "--method", "storysumm-binary"]
    args += ["--split", "val", "--provider", "anthropic", "--model", PROVIDERS["anthropic"][0], "--batch-api"]
    args += ["--json", "--db", str(db_copy)]
    worker = start(args, env)
    deadline = time.monotonic() + 60
    while not server.batches or next(iter(server.batches.values())).retrieves < 3:
        assert time.monotonic() < deadline and worker.poll() is None, "the batch was not submitted and polled"
        time.sleep(0.02)
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)
    [batch] = server.batches.values()
    batch.polls = 0

    resumed = faithlens(["llm", "run", "--resume", "1", "--json", "--db", str(db_copy)], env)
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads(resumed.stdout)
    val = storysumm_summaries("val")
    assert (record["done"], record["failed"], record["calls"]) == (len(val), 0, len(val))
    assert len(server.batches) == 1
    assert len([r for r in server.requests if r.batch_id]) == len(val)
