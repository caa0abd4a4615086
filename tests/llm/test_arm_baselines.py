"""ARM Table 2's baselines end to end against the scripted server: zero-shot and few-shot ("is this
claim objective?") and self-consistency (three CoT draws at temperature 0.7, majority), each rendered
from its prompt file, sent through the real SDK, stored with its label event, offered where Explore's
Ask panel and the Runs page take their methods, and run over many sentences. Expected texts come from
the TOML files and the data, never from the code under test."""

from __future__ import annotations

import re

import duckdb
import pytest

from faithlens.filters import Filters
from faithlens.llm import ask, methods
from faithlens.llm.runs import engine, estimate, log, spec
from faithlens.views import runs as runs_view
from tests.llm.conftest import ME, asking, one, prompt_file, rows, target
from tests.llmserver import LLMServer, Reply, Request

SENTENCE_ID = "1e21553b47944b67bc2cdf67860d8e15#s2"
SENTENCE = "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still."
BASELINES = ("arm-zero-shot", "arm-few-shot", "arm-self-consistency")


def labels(conn: duckdb.DuckDBPyConnection, source: str, target_id: str) -> list[dict]:
    """Every label event of `source` on the target, oldest first."""
    return rows(
        conn,
        "SELECT value, raw_value, explanation, raw_output FROM label WHERE source = ? AND target_id = ? "
        "ORDER BY event_id",
        [source, target_id],
    )


def body_temperature(request: Request) -> float:
    return float(request.body["temperature"])


@pytest.mark.parametrize(
    ("method", "reply", "value", "raw"),
    [
        ("arm-zero-shot", "It calls the figures aliens.\n<answer>No</answer>", "unfaithful", "subjective"),
        ("arm-few-shot", "<answer>Yes</answer>", "faithful", "objective"),
    ],
)
def test_objectivity_baselines_send_the_papers_prompt_and_flag_subjective_claims(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, method: str, reply: str, value: str, raw: str
) -> None:
    unit = target(conn, "storysumm", SENTENCE_ID)
    llm_env.queue(reply)
    answer = ask.ask(conn, unit, asking(llm_env, method), ME)

    (request,) = llm_env.requests
    paper = prompt_file(method)
    assert request.system == paper.system
    assert request.last_user_text() == paper.render(story=unit.document, summary=unit.summary, claim=SENTENCE)
    assert body_temperature(request) == paper.temperature == 0.0
    source = f"llm/{method}/gpt-4o"
    assert (answer.status, answer.label, answer.raw_label, answer.source) == ("ok", value, raw, source)
    (event,) = labels(conn, source, SENTENCE_ID)
    assert (event["value"], event["raw_value"]) == (value, raw)
    stored = one(conn, "SELECT prompt_version FROM label_source WHERE source = ?", [source])
    assert stored == f"{method}@{paper.version}"


def test_few_shot_carries_the_papers_five_worked_claims_before_the_one_asked(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    llm_env.queue("<answer>No</answer>")
    ask.ask(conn, target(conn, "storysumm", SENTENCE_ID), asking(llm_env, "arm-few-shot"), ME)
    text = llm_env.requests[0].last_user_text()
    asked = re.findall(r"Consider the following claim in the summary: (.+)", text)
    assert asked[:5] == [
        "The main character, Shelly, and her dog find an injured squirrel while out running.",
        "The dog's prey drive is activated around the squirrel.",
        "Shelly tucks the little fluffy squirrel into her pocket to bring home.",
        "She figures out how to nurse it back to health.",
        "She eventually lets the squirrel go again to live a healthy life.",
    ]
    assert asked[5] == SENTENCE and len(asked) == 6
    assert re.findall(r"<answer>(\w+)</answer>", text) == ["Yes", "No", "No", "No", "No"]


def test_self_consistency_draws_three_answers_at_07_and_labels_their_majority(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    unit = target(conn, "storysumm", SENTENCE_ID)
    replies = [
        "Reasoning: The story says the sky went black.\n\n<answer>Yes</answer>",
        "Reasoning: Time stopping is only implied.\n\n<answer>No</answer>",
        "Reasoning: The story never says time stands still.\n\n<answer>No</answer>",
    ]
    llm_env.queue(*(Reply(text, input_tokens=100, output_tokens=10) for text in replies))
    answer = ask.ask(conn, unit, asking(llm_env, "arm-self-consistency"), ME)

    paper = prompt_file("arm-self-consistency")
    assert len(llm_env.requests) == 3
    for request in llm_env.requests:
        assert request.system == paper.system
        assert request.last_user_text() == paper.render(story=unit.document, summary=unit.summary, claim=SENTENCE)
        assert body_temperature(request) == paper.temperature == 0.7
    assert (answer.status, answer.label, answer.raw_label, answer.votes) == (
        "ok",
        "unfaithful",
        "No",
        ("Yes", "No", "No"),
    )
    assert (answer.input_tokens, answer.output_tokens, answer.spent.calls) == (300, 30, 3)
    assert answer.explanation.startswith("Draw 1 (Yes): Reasoning: The story says the sky went black.")
    source = "llm/arm-self-consistency/gpt-4o"
    (event,) = labels(conn, source, SENTENCE_ID)
    assert (event["value"], event["raw_value"]) == ("unfaithful", "No")
    assert event["raw_output"] == "\n\n".join(replies)
    draws = rows(conn, "SELECT parameters FROM llm_call WHERE source = ? ORDER BY call_id", [source])
    assert [row["parameters"] for row in draws] == [
        f'{{"temperature": 0.7, "max_tokens": 1024, "draw": {n}}}' for n in range(3)
    ]

    cached = ask.ask(conn, unit, asking(llm_env, "arm-self-consistency"), ME)
    assert cached.cached and cached.votes == ("Yes", "No", "No") and len(llm_env.requests) == 3
    assert len(labels(conn, source, SENTENCE_ID)) == 1

    llm_env.queue("<answer>Yes</answer>", "<answer>Yes</answer>", "<answer>No</answer>")
    fresh = ask.ask(conn, unit, asking(llm_env, "arm-self-consistency", fresh=True), ME)
    assert (fresh.label, fresh.votes, len(llm_env.requests)) == ("faithful", ("Yes", "Yes", "No"), 6)
    assert [e["value"] for e in labels(conn, source, SENTENCE_ID)] == ["unfaithful", "faithful"]


def test_a_self_consistency_draw_that_does_not_parse_leaves_no_label(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    llm_env.queue("<answer>No</answer>", "It is hard to say.", "<answer>No</answer>")
    answer = ask.ask(conn, target(conn, "storysumm", SENTENCE_ID), asking(llm_env, "arm-self-consistency"), ME)
    assert answer.status == "parse_failure" and answer.label is None
    assert "expected <answer>Yes</answer> or <answer>No</answer>" in answer.failure
    assert labels(conn, "llm/arm-self-consistency/gpt-4o", SENTENCE_ID) == []


def test_the_baselines_are_offered_at_sentence_and_claim_level_where_ask_and_runs_take_methods(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    """Explore's Ask panel lists `methods_for(level)` with action verify; the Runs form lists the same for
    the level's sample unit; a dataset without source texts (FABLES) says why they are not offered."""
    for level in ("sentence", "claim"):
        offered = [m.name for m in methods.methods_for(level) if m.action == "verify"]
        assert set(BASELINES) <= set(offered)
        with conn.cursor() as cur:
            sample = runs_view.sample_target(cur, "storysumm", level)
        assert all(methods.method_reason(methods.method(name), sample) is None for name in BASELINES)
    with conn.cursor() as cur:
        book_claim = runs_view.sample_target(cur, "fables", "claim")
    assert all(methods.method_reason(methods.method(name), book_claim) for name in BASELINES)
    assert methods.methods_for("summary") == [m for m in methods.methods_for("summary") if m.name not in BASELINES]


class ByClaim:
    """Answers each self-consistency draw by the claim it asks about: the first draw No, the second Yes,
    the third `rule(claim)`, so the majority is the rule's answer (draws of one item are sequential)."""

    def __init__(self, rule) -> None:
        self.rule = rule
        self.seen: dict[str, int] = {}

    def __call__(self, request: Request) -> str:
        claim = re.search(r"Consider the following claim in the summary: (.+)", request.last_user_text()).group(1)
        attempt = self.seen[claim] = self.seen.get(claim, -1) + 1
        answer = ("No", "Yes", self.rule(claim))[attempt % 3]
        return f"Reasoning: scripted.\n\n<answer>{answer}</answer>"


def test_a_self_consistency_run_labels_each_sentence_by_its_majority(llm_env: LLMServer, conn) -> None:
    rule = {True: "No", False: "Yes"}
    llm_env.responder = ByClaim(lambda claim: rule[len(claim) % 2 == 0])
    wanted = spec.RunSpec(
        "storysumm",
        "sentence",
        "arm-self-consistency",
        "openai",
        "gpt-4o",
        base_url=llm_env.openai_base_url,
        concurrency=1,
    )
    selection = spec.Selection(filters=Filters(search="mermaid"))
    with conn.cursor() as cur:
        units, _ = spec.select_units(cur, "storysumm", "sentence", selection)
    assert len(units) >= 10
    planned = estimate.estimate(conn, wanted.resolved(), units, ME)
    assert (planned.items, planned.calls) == (len(units), 3 * len(units))

    run_id = engine.create_run(conn, wanted, selection, ME)
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    done = engine.Runner(conn, run, ME).execute()
    assert (done.done, done.failed, done.calls) == (len(units), 0, 3 * len(units))
    texts = {
        r["unit_id"]: r["text"]
        for r in rows(conn, "SELECT unit_id, text FROM unit WHERE list_contains(?, unit_id)", [units])
    }
    found = rows(conn, "SELECT target_id, value FROM current_label WHERE source = 'llm/arm-self-consistency/gpt-4o'")
    expected = {unit: "unfaithful" if len(texts[unit]) % 2 == 0 else "faithful" for unit in units}
    assert {row["target_id"]: row["value"] for row in found} == expected
    assert one(conn, "SELECT count(*) FROM label WHERE source = 'llm/arm-self-consistency/gpt-4o'") == len(units)


def test_self_consistency_draws_go_through_a_batch_api_and_the_majority_is_labelled(
    llm_env: LLMServer, conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The three draws are independent requests: one batch holds them all (three lines per sentence, at
    temperature 0.7), and each sentence gets its majority once the batch is collected."""
    monkeypatch.setenv("FAITHLENS_BATCH_POLL", "0.01")
    llm_env.responder = ByClaim(lambda claim: "No" if len(claim) % 2 == 0 else "Yes")
    wanted = spec.RunSpec(
        "storysumm", "sentence", "arm-self-consistency", "openai", "gpt-4o", base_url=llm_env.openai_base_url,
        batch=True,
    )  # fmt: skip
    selection = spec.Selection(filters=Filters(search="mermaid"))
    run_id = engine.create_run(conn, wanted, selection, ME)
    with conn.cursor() as cur:
        done = engine.Runner(conn, log.load(cur, run_id), ME).execute()
        units, _ = spec.select_units(cur, "storysumm", "sentence", selection)
    [batch] = llm_env.batches.values()
    lines = [r for r in llm_env.requests if r.batch_id]
    assert len(batch.custom_ids) == len(set(batch.custom_ids)) == 3 * len(units) == len(lines)
    assert {float(line.body["temperature"]) for line in lines} == {0.7}
    assert (done.done, done.failed) == (len(units), 0)
    texts = {
        r["unit_id"]: r["text"]
        for r in rows(conn, "SELECT unit_id, text FROM unit WHERE list_contains(?, unit_id)", [units])
    }
    found = rows(conn, "SELECT target_id, value FROM current_label WHERE source = 'llm/arm-self-consistency/gpt-4o'")
    expected = {unit: "unfaithful" if len(texts[unit]) % 2 == 0 else "faithful" for unit in units}
    assert {row["target_id"]: row["value"] for row in found} == expected
