"""On-demand LLM answers end to end: the papers' prompts rendered for a unit of the bundled data,
sent through the real SDKs to a scripted local server, and stored (cache row, label event, tags) so
that Explore and Compare see them; and every way a call can fail, which must store nothing that
counts as a label. Expected texts, prices and versions are read from the TOML files and the data,
never from the code under test."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.build import ingest
from faithlens.build.rankers import registry
from faithlens.errors import FaithLensError
from faithlens.llm import ask, targets
from faithlens.llm.providers import ProviderError
from faithlens.views import compare
from tests import raw
from tests.llm.conftest import (
    ANTHROPIC_KEY,
    ME,
    OPENAI_KEY,
    asking,
    one,
    price,
    prompt_file,
    rows,
    storysumm_summaries,
    target,
)
from tests.llmserver import REFUSAL_TEXT, LLMServer, Reply

SENTENCE_ID = "1e21553b47944b67bc2cdf67860d8e15#s2"
SENTENCE = "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still."


def llm_counts(conn: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """(llm_call rows, label events of LLM sources, LLM label sources)."""
    return (
        one(conn, "SELECT count(*) FROM llm_call"),
        one(conn, "SELECT count(*) FROM label WHERE source LIKE 'llm/%'"),
        one(conn, "SELECT count(*) FROM label_source WHERE kind = 'llm'"),
    )


def current(conn: duckdb.DuckDBPyConnection, source: str, target_id: str) -> dict:
    found = rows(conn, "SELECT * FROM current_label WHERE source = ? AND target_id = ?", [source, target_id])
    assert len(found) == 1, found
    return found[0]


# --- 1, 4: a verdict, its label event, the cache and fresh samples --------------------------------------------


@pytest.mark.parametrize(
    ("provider", "prompt", "reply"),
    [("openai", "storysumm-binary", "No"), ("anthropic", "storysumm-binary.claude", "<answer>No</answer>")],
)
def test_binary_answer_becomes_a_label_then_is_cached_then_resampled(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str, prompt: str, reply: str
) -> None:
    """With Anthropic the paper's Claude variant is the default, and the source names it."""
    srv = llm_env
    (summary,) = storysumm_summaries(conn, 1)
    unit = target(conn, "storysumm", summary["summary_id"])
    what = asking(srv, "storysumm-binary", provider)
    srv.queue(Reply(reply, input_tokens=1234, output_tokens=7))

    answer = ask.ask(conn, unit, what, ME)

    source = f"llm/{prompt.replace('.', '-')}/{what.model}"
    per_input, per_output = price("gpt-4o" if provider == "openai" else "claude-3-5-sonnet")
    cost = (1234 * per_input + 7 * per_output) / 1_000_000
    assert (answer.status, answer.label, answer.source, answer.cached) == ("ok", "unfaithful", source, False)
    assert (answer.input_tokens, answer.output_tokens) == (1234, 7)
    assert answer.cost == pytest.approx(cost)
    label = current(conn, source, summary["summary_id"])
    assert (label["dataset"], label["level"], label["value"], label["raw_output"]) == (
        "storysumm",
        "summary",
        "unfaithful",
        reply,
    )
    assert (label["input_tokens"], label["output_tokens"]) == (1234, 7)
    assert label["cost_usd"] == pytest.approx(cost)
    template = prompt_file(prompt)
    (src,) = rows(conn, "SELECT * FROM label_source WHERE source = ?", [source])
    assert (src["dataset"], src["kind"], src["model"]) == ("storysumm", "llm", what.model)
    assert template.version in src["prompt_version"]

    (request,) = srv.requests
    assert request.stream and request.model == what.model
    assert request.system == template.system
    assert [m["role"] for m in request.messages] == ["user"]
    user = request.last_user_text()
    assert summary["story"] in user and summary["summary"] in user
    assert user == template.render(story=summary["story"], summary=summary["summary"])
    assert request.body["temperature"] == template.temperature

    again = ask.ask(conn, unit, what, ME)
    assert again.cached and again.label == "unfaithful" and again.raw_output == reply
    assert len(srv.requests) == 1, "a cached answer must not call the provider"
    assert llm_counts(conn) == (1, 1, 1), "a cache hit adds no call row and no second label event"

    srv.queue(Reply(reply.replace("No", "Yes"), input_tokens=1000, output_tokens=3))
    fresh = ask.ask(conn, unit, asking(srv, "storysumm-binary", provider, fresh=True), ME)
    assert not fresh.cached and fresh.label == "faithful"
    assert len(srv.requests) == 2
    samples = rows(conn, "SELECT sample, status FROM llm_call ORDER BY sample")
    assert samples == [{"sample": 0, "status": "ok"}, {"sample": 1, "status": "ok"}]
    assert current(conn, source, summary["summary_id"])["value"] == "faithful"
    assert ask.ask(conn, unit, what, ME).label == "faithful", "the cache answers with the newest sample"
    assert len(srv.requests) == 2


def test_anthropic_streams_text_pieces_to_the_caller(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    srv = llm_env
    (summary,) = storysumm_summaries(conn, 1)
    reply = "The summary invents the rock. <answer>No</answer>"
    srv.queue(reply)
    pieces: list[str] = []
    answer = ask.ask(
        conn,
        target(conn, "storysumm", summary["summary_id"]),
        asking(srv, "storysumm-binary", "anthropic"),
        ME,
        pieces.append,
    )
    (request,) = srv.requests
    assert (request.protocol, request.path, request.stream) == ("anthropic", "/v1/messages", True)
    assert len(pieces) > 1 and "".join(pieces) == reply
    assert (answer.label, answer.raw_label, answer.explanation) == ("unfaithful", "No", "The summary invents the rock.")
    assert answer.source == "llm/storysumm-binary-claude/claude-3-5-sonnet-20241022"


# --- 2: Compare sees the new source ----------------------------------------------------------------------------


def test_compare_lists_the_llm_source_with_the_summaries_asked(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    srv = llm_env
    summaries = storysumm_summaries(conn, 3)
    what = asking(srv, "storysumm-binary")
    for summary, reply in zip(summaries, ["No", "Yes", "No"], strict=True):
        srv.queue(reply)
        ask.ask(conn, target(conn, "storysumm", summary["summary_id"]), what, ME)
    source = f"llm/storysumm-binary/{what.model}"
    with conn.cursor() as cur:
        choices = compare.available_sources(cur, "storysumm")
        result = compare.compare(cur, "storysumm", "summary", sources=[source])
    assert choices["summary"][source].kind == "llm"
    by_split = {row["split"]: row for row in result.json_rows() if row["source"] == source}
    assert by_split["all"]["n"] == 3
    assert by_split["all"]["pct_faithful"] == pytest.approx(100 / 3, abs=0.01)
    records = raw.storysumm_records()
    for split in ("val", "test"):
        asked = sum(records[s["summary_id"]]["split"] == split for s in summaries)
        assert (by_split[split]["n"] if split in by_split else 0) == asked


# --- 3: chain of thought is two turns --------------------------------------------------------------------------


def test_cot_sends_the_second_turn_after_the_first_reply(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    srv = llm_env
    (summary,) = storysumm_summaries(conn, 1)
    reasoning = "Yes, mostly, but the summary puts Daniel on the rock, which the story never does."
    srv.queue(reasoning, "No")
    answer = ask.ask(conn, target(conn, "storysumm", summary["summary_id"]), asking(srv, "storysumm-cot"), ME)
    template = prompt_file("storysumm-cot")
    first, second = srv.requests
    turn1 = template.render(0, story=summary["story"], summary=summary["summary"])
    assert first.messages == [{"role": "user", "content": turn1}]
    assert second.messages == [
        {"role": "user", "content": turn1},
        {"role": "assistant", "content": reasoning},
        {"role": "user", "content": template.turns[1]},
    ]
    assert (answer.label, answer.raw_label, answer.explanation) == ("unfaithful", "No", reasoning)
    (call,) = rows(conn, "SELECT replies, status FROM llm_call")
    assert call == {"replies": [reasoning, "No"], "status": "ok"}
    assert current(conn, "llm/storysumm-cot/gpt-4o", summary["summary_id"])["value"] == "unfaithful"


# --- 5: faults --------------------------------------------------------------------------------------------------


def _ask_summary(conn: duckdb.DuckDBPyConnection, srv: LLMServer, provider: str) -> ask.Answer:
    (summary,) = storysumm_summaries(conn, 1)
    return ask.ask(
        conn, target(conn, "storysumm", summary["summary_id"]), asking(srv, "storysumm-binary", provider), ME
    )


BOTH = pytest.mark.parametrize("provider", ["openai", "anthropic"])
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@BOTH
def test_401_names_the_key_setting_and_stores_nothing(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.queue(Reply(status=401, message="Incorrect API key provided"))
    version = store.data_version(conn)
    with pytest.raises(ProviderError) as raised:
        _ask_summary(conn, llm_env, provider)
    assert raised.value.kind == "auth"
    assert KEY_ENV[provider] in str(raised.value) and "Incorrect API key provided" in str(raised.value)
    assert llm_counts(conn) == (0, 0, 0) and store.data_version(conn) == version
    assert len(llm_env.requests) == 1, "a 401 is not retried"


@BOTH
def test_429_with_retry_after_is_retried_by_the_sdk(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.queue(
        Reply(status=429, headers={"retry-after-ms": "20"}), "No" if provider == "openai" else "<answer>No</answer>"
    )
    answer = _ask_summary(conn, llm_env, provider)
    assert answer.label == "unfaithful"
    assert [r.retry_count for r in llm_env.requests] == [0, 1]
    assert llm_counts(conn) == (1, 1, 1)


@BOTH
def test_persistent_500_fails_with_the_servers_message_after_retries(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.responder = lambda request: Reply(status=500, message="upstream model crashed")
    with pytest.raises(ProviderError) as raised:
        _ask_summary(conn, llm_env, provider)
    assert raised.value.kind == "server" and "upstream model crashed" in str(raised.value)
    attempts = [r.retry_count for r in llm_env.requests]
    assert len(attempts) > 1 and attempts == list(range(len(attempts))), "the SDK retried"
    assert llm_counts(conn) == (0, 0, 0)


@BOTH
def test_a_reply_slower_than_the_timeout_fails(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "0.3")
    llm_env.responder = lambda request: Reply("No", delay=5)
    with pytest.raises(ProviderError) as raised:
        _ask_summary(conn, llm_env, provider)
    assert raised.value.kind == "timeout" and "FAITHLENS_LLM_TIMEOUT" in str(raised.value)
    assert llm_counts(conn) == (0, 0, 0)


@BOTH
def test_a_body_that_is_not_json_is_a_malformed_error(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.queue(Reply(malformed=True))
    with pytest.raises(ProviderError) as raised:
        _ask_summary(conn, llm_env, provider)
    assert raised.value.kind == "malformed"
    assert llm_counts(conn) == (0, 0, 0)


@BOTH
def test_a_stream_cut_midway_fails_and_stores_nothing(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.queue(Reply("No, the summary is not consistent with the story at all", cut_after=3))
    pieces: list[str] = []
    (summary,) = storysumm_summaries(conn, 1)
    what = asking(llm_env, "storysumm-binary", provider)
    with pytest.raises(ProviderError) as raised:
        ask.ask(conn, target(conn, "storysumm", summary["summary_id"]), what, ME, pieces.append)
    assert raised.value.kind == "cut" and "cut off mid-stream" in raised.value.message
    assert "".join(pieces) == "No, the summary ", "the stream was cut after three pieces"
    assert llm_counts(conn) == (0, 0, 0)


@BOTH
def test_a_refusal_is_stored_as_refused_and_is_no_label(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    llm_env.queue(Reply(refusal=True))
    answer = _ask_summary(conn, llm_env, provider)
    assert answer.status == "refused" and answer.label is None
    (call,) = rows(conn, "SELECT status, replies FROM llm_call")
    assert call["status"] == "refused"
    assert call["replies"] == ([REFUSAL_TEXT] if provider == "openai" else [""])
    assert llm_counts(conn)[1:] == (0, 0)


@pytest.mark.parametrize(
    ("reply", "status"),
    [("", "empty"), ("   \n", "empty"), ("Maybe", "parse_failure"), ("Yes. No.", "parse_failure")],
)
def test_empty_and_unreadable_answers_are_kept_but_never_labels(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, reply: str, status: str
) -> None:
    llm_env.queue(reply)
    answer = _ask_summary(conn, llm_env, "openai")
    assert (answer.status, answer.label, answer.raw_output) == (status, None, reply)
    assert answer.failure
    (call,) = rows(conn, "SELECT status, replies, failure FROM llm_call")
    assert (call["status"], call["replies"]) == (status, [reply])
    if status == "parse_failure":
        assert "Yes or No" in call["failure"]
    assert llm_counts(conn)[1:] == (0, 0)


def test_a_refusal_in_words_is_stored_as_refused(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    """A model that declines in plain text (as Claude does without the refusal stop reason) refused;
    the strict parser recognises it (`Parsed.refused`), so the call's status should say so."""
    reply = "I'm sorry, but I can't help with evaluating this story."
    llm_env.queue(reply)
    answer = _ask_summary(conn, llm_env, "openai")
    assert answer.label is None and llm_counts(conn)[1:] == (0, 0)
    assert one(conn, "SELECT status FROM llm_call") == "refused"


@BOTH
def test_no_key_and_no_base_url_names_the_setting(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV[provider])
    monkeypatch.delenv(f"FAITHLENS_{provider.upper()}_BASE_URL")
    monkeypatch.setattr("faithlens.config._secrets", lambda path=None: {})  # a developer's secrets.toml
    (summary,) = storysumm_summaries(conn, 1)
    what = ask.Ask("storysumm-binary", provider, "gpt-4o")
    with pytest.raises(ProviderError) as raised:
        ask.ask(conn, target(conn, "storysumm", summary["summary_id"]), what, ME)
    assert raised.value.kind == "no_key" and KEY_ENV[provider] in str(raised.value)
    assert llm_counts(conn) == (0, 0, 0) and llm_env.requests == []


@BOTH
def test_the_api_key_never_reaches_the_database(llm_env: LLMServer, db_copy: Path, provider: str) -> None:
    key = OPENAI_KEY if provider == "openai" else ANTHROPIC_KEY
    conn = store.connect(db_copy)
    try:
        llm_env.queue("No" if provider == "openai" else "<answer>No</answer>")
        assert _ask_summary(conn, llm_env, provider).label == "unfaithful"
        assert llm_env.requests[0].headers["authorization"] == f"Bearer {key}", "the distinctive key was used"
        for table in ("llm_call", "label_source", "label", "write_log"):
            text = one(conn, f"SELECT string_agg(CAST(t AS VARCHAR), '|') FROM {table} AS t")
            assert key not in text, table
    finally:
        conn.close()
    for path in (db_copy, db_copy.with_name(db_copy.name + ".wal")):
        if path.exists():
            assert key.encode() not in path.read_bytes(), path


# --- 6: ARM rewrite ---------------------------------------------------------------------------------------------

EXPLANATION = "The story says the sky turns dark, not black, and time only seems to stop."
# Word edit distance, stemmed tokens: black -> dark (1 substitution); "stands" -> "seems to stand"
# is 2 insertions, since "stands" and "stand" share the stem "stand". Total 3. (Unstemmed it is 4.)
REWRITE = "He finds a mermaid sitting on a rock, but the sky suddenly goes dark and time seems to stand still."
POINTS = ("The sky turns dark rather than black.", "Time only seems to stop.")


def test_arm_rewrite_labels_a_changed_sentence_and_splits_its_explanation(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    srv = llm_env
    unit = target(conn, "storysumm", SENTENCE_ID)
    assert unit.text == SENTENCE
    srv.queue(
        Reply(f"{EXPLANATION}\n<answer>{REWRITE}</answer>", input_tokens=900, output_tokens=40),
        Reply("".join(f"<item>{p}</item>\n" for p in POINTS), input_tokens=50, output_tokens=20),
    )
    answer = ask.ask(conn, unit, asking(srv, "arm-rewrite"), ME)
    assert (answer.label, answer.raw_label, answer.rewrite, answer.rewritten) == (
        "unfaithful",
        "rewritten",
        REWRITE,
        True,
    )
    assert answer.edit_distance == 3
    assert answer.explanation == EXPLANATION and answer.points == POINTS
    assert (answer.input_tokens, answer.output_tokens) == (950, 60)

    rewrite_request, points_request = srv.requests
    story, summary = unit.document, unit.summary
    assert rewrite_request.last_user_text() == prompt_file("arm-rewrite.both").render(
        story=story, summary=summary, sentence=SENTENCE
    )
    assert points_request.last_user_text() == prompt_file("arm-explanation-points").render(explanation=EXPLANATION)
    label = current(conn, "llm/arm-rewrite-both/gpt-4o", SENTENCE_ID)
    assert (label["level"], label["value"], label["raw_value"], label["rewrite"]) == (
        "sentence",
        "unfaithful",
        "rewritten",
        REWRITE,
    )
    assert label["explanation"] == EXPLANATION

    cached = ask.ask(conn, unit, asking(srv, "arm-rewrite"), ME)
    assert cached.cached and cached.points == POINTS and cached.edit_distance == 3 and len(srv.requests) == 2


def test_arm_rewrite_repeating_the_sentence_is_faithful(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    llm_env.queue(f"<answer>{SENTENCE}</answer>")
    answer = ask.ask(conn, target(conn, "storysumm", SENTENCE_ID), asking(llm_env, "arm-rewrite"), ME)
    assert (answer.label, answer.raw_label, answer.rewritten, answer.edit_distance) == (
        "faithful",
        "unchanged",
        False,
        0,
    )
    label = current(conn, "llm/arm-rewrite-both/gpt-4o", SENTENCE_ID)
    assert (label["value"], label["raw_value"], label["rewrite"]) == ("faithful", "unchanged", SENTENCE)


# --- 7: FABLES evidence settings --------------------------------------------------------------------------------


def _fables_claim() -> tuple[str, str, list[str]]:
    """The first claim in the raw file with two or more evidence quotes: (claim id, text, quotes)."""
    for book, models in raw.fables_books().items():
        for model, summary in models.items():
            for position, claim in summary["claims"].items():
                if len(claim["evidence"]) >= 2:
                    return f"{book} / {model}#c{position}", claim["claim"], claim["evidence"]
    raise AssertionError("no claim with evidence quotes")


def test_fables_verify_puts_the_chosen_evidence_in_the_prompt(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    srv = llm_env
    claim_id, claim, quotes = _fables_claim()
    unit = target(conn, "fables", claim_id)
    assert (unit.level, unit.text) == ("claim", claim)
    template = prompt_file("fables-verify")
    srv.queue("True", "False")
    human = ask.ask(conn, unit, asking(srv, "fables-verify", evidence="human"), ME)
    none = ask.ask(conn, unit, asking(srv, "fables-verify", evidence="none"), ME)
    assert srv.requests[0].last_user_text() == template.render(evidence="\n\n".join(quotes), claim=claim)
    assert srv.requests[1].last_user_text() == template.render(evidence="", claim=claim)
    assert (human.label, human.source) == ("faithful", "llm/fables-verify-human/gpt-4o")
    assert (none.label, none.source) == ("unfaithful", "llm/fables-verify-none/gpt-4o")
    assert current(conn, "llm/fables-verify-human/gpt-4o", claim_id)["level"] == "claim"

    text, note = rows(
        conn,
        "SELECT d.text, d.text_note FROM summary s JOIN document d USING (dataset, document_id) "
        "WHERE s.dataset = 'fables' AND s.summary_id = ?",
        [unit.summary_id],
    )[0].values()
    assert text is None and note
    for setting in ("bm25", "document"):
        with pytest.raises(FaithLensError) as raised:
            ask.ask(conn, unit, asking(srv, "fables-verify", evidence=setting), ME)
        assert note in str(raised.value)
    assert len(srv.requests) == 2 and llm_counts(conn)[0] == 2


def _passages(text: str, size: int = 256) -> list[str]:
    """FABLES' passages: consecutive runs of `size` whitespace-separated words, here re-joined by one space."""
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def test_fables_verify_on_a_story_sentence_retrieves_story_passages(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection
) -> None:
    srv = llm_env
    unit = target(conn, "storysumm", SENTENCE_ID)
    story = unit.document
    srv.responder = lambda request: "True"
    bm25_one = ask.ask(conn, unit, asking(srv, "fables-verify", evidence="bm25", k=1), ME)
    ask.ask(conn, unit, asking(srv, "fables-verify", evidence="bm25"), ME)
    document = ask.ask(conn, unit, asking(srv, "fables-verify", evidence="document"), ME)

    def context(request) -> str:
        text = request.last_user_text()
        return text.split("Context:\n", 1)[1].split("\n\nStatement:", 1)[0]

    passages = _passages(story)
    assert len(passages) > 1, "the story spans several passages"
    best = " ".join(context(srv.requests[0]).split())
    assert best in passages and best != " ".join(story.split())
    assert {"mermaid", "rock", "sky"} & set(best.lower().split())
    for part in context(srv.requests[1]).split("\n\n"):
        assert " ".join(part.split()) in passages
    assert srv.requests[2].last_user_text() == prompt_file("fables-verify").render(evidence=story, claim=SENTENCE)
    assert bm25_one.source == "llm/fables-verify-bm25/gpt-4o" and document.source == "llm/fables-verify-document/gpt-4o"
    with pytest.raises(FaithLensError, match="no annotator evidence"):
        ask.ask(conn, unit, asking(srv, "fables-verify", evidence="human"), ME)
    sources = {row["source"] for row in rows(conn, "SELECT source FROM label_source WHERE kind = 'llm'")}
    assert sources == {"llm/fables-verify-bm25/gpt-4o", "llm/fables-verify-document/gpt-4o"}


# --- 8: ambiguity type ------------------------------------------------------------------------------------------


def test_ambiguity_type_becomes_a_tag_of_the_source(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    srv = llm_env
    unit = target(conn, "storysumm", SENTENCE_ID)
    source = "llm/arm-ambiguity-type/gpt-4o"
    srv.queue("The story never says the sky was black. <type>2</type>")
    answer = ask.ask(conn, unit, asking(srv, "arm-ambiguity-type"), ME)
    assert answer.status == "ok" and answer.items == ("2",)
    tags = rows(conn, "SELECT dataset, level, target_id, kind, value FROM tag WHERE source = ?", [source])
    assert tags == [
        {"dataset": "storysumm", "level": "sentence", "target_id": SENTENCE_ID, "kind": "ambiguity_type", "value": "2"}
    ]
    assert one(conn, "SELECT count(*) FROM label WHERE source = ?", [source]) == 0

    srv.queue("Clear and faithful. <type>none</type>")
    ask.ask(conn, unit, asking(srv, "arm-ambiguity-type", fresh=True), ME)
    assert one(conn, "SELECT count(*) FROM tag WHERE source = ?", [source]) == 0, "the newest answer replaces tags"


# --- 9: TofuEval's prompts by level -----------------------------------------------------------------------------


def test_tofueval_dir_picks_the_sentence_or_summary_prompt(llm_env: LLMServer, db_copy: Path, tmp_path: Path) -> None:
    srv = llm_env
    sentence_id = "NPR-5615 / model_A / Presidential helicopter cost#s0"
    summary_id = "NPR-5615 / model_A / Presidential helicopter cost"
    conn = store.connect(db_copy)
    try:
        unit = target(conn, "tofueval", sentence_id)
        note = one(conn, "SELECT text_note FROM document WHERE dataset = 'tofueval' AND document_id = 'NPR-5615'")
        with pytest.raises(FaithLensError) as raised:
            ask.ask(conn, unit, asking(srv, "tofueval-dir"), ME)
        assert note in str(raised.value) and srv.requests == []
    finally:
        conn.close()

    transcript = "HOST: The new presidential helicopters cost more than planned.\nGUEST: Yes, about $400 million each."
    docs = tmp_path / "transcripts.csv"
    with docs.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["doc_id", "source"], ["NPR-5615", transcript]])
    ingest.import_file(db_copy, docs, "tofueval-docs", "tofueval")

    conn = store.connect(db_copy)
    try:
        sentence, summary = target(conn, "tofueval", sentence_id), target(conn, "tofueval", summary_id)
        srv.queue("Yes", "No")
        at_sentence = ask.ask(conn, sentence, asking(srv, "tofueval-dir"), ME)
        at_summary = ask.ask(conn, summary, asking(srv, "tofueval-dir"), ME)
        assert (at_sentence.label, at_summary.label) == ("faithful", "unfaithful")
        assert current(conn, "llm/tofueval-dir/gpt-4o", summary_id)["level"] == "summary"
    finally:
        conn.close()
    expected_sentence = prompt_file("tofueval-dir.sentence").render(story=transcript, sentence=sentence.text)
    expected_summary = prompt_file("tofueval-dir.summary").render(story=transcript, summary=summary.text)
    assert expected_sentence != expected_summary
    assert [r.last_user_text() for r in srv.requests] == [expected_sentence, expected_summary]
    assert srv.requests[0].body["temperature"] == prompt_file("tofueval-dir.sentence").temperature


# --- 10: unknown prices -----------------------------------------------------------------------------------------


def test_a_model_without_a_price_has_unknown_cost_not_zero(
    llm_env: LLMServer, db_copy: Path, capsys: pytest.CaptureFixture
) -> None:
    from faithlens import cli

    conn = store.connect(db_copy)
    try:
        (summary,) = storysumm_summaries(conn, 1)
        unit = target(conn, "storysumm", summary["summary_id"])
        llm_env.queue(Reply("No", input_tokens=500, output_tokens=2), Reply("No", input_tokens=500, output_tokens=2))
        local = ask.ask(conn, unit, asking(llm_env, "storysumm-binary", model="llama-3-local"), ME)
        priced = ask.ask(conn, unit, asking(llm_env, "storysumm-binary"), ME)
        label = current(conn, "llm/storysumm-binary/llama-3-local", summary["summary_id"])
        calls = rows(conn, "SELECT model, cost_usd FROM llm_call ORDER BY call_id")
    finally:
        conn.close()
    assert (local.input_tokens, local.output_tokens, local.cost) == (500, 2, None)
    assert label["cost_usd"] is None and label["input_tokens"] == 500
    assert calls[0] == {"model": "llama-3-local", "cost_usd": None}
    assert priced.cost == pytest.approx((500 * price("gpt-4o")[0] + 2 * price("gpt-4o")[1]) / 1_000_000)

    assert cli.main(["llm", "costs", "--db", str(db_copy)]) == 0
    out = capsys.readouterr().out.splitlines()
    (local_line,) = [line for line in out if "llama-3-local" in line]
    (priced_line,) = [line for line in out if " gpt-4o " in line]
    assert "cost unknown" in local_line and "$" not in local_line
    assert "cost unknown" not in priced_line and "$" in priced_line


def test_pasted_text_is_answered_but_never_labelled(llm_env: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    llm_env.queue("No")
    answer = ask.ask(conn, targets.pasted("A short story.", "A summary."), asking(llm_env, "storysumm-binary"), ME)
    assert answer.label == "unfaithful"
    assert llm_counts(conn) == (1, 0, 0)
    assert rows(conn, "SELECT dataset, target_id FROM llm_call") == [{"dataset": None, "target_id": None}]


@BOTH
def test_a_key_echoed_back_in_an_error_is_hidden_from_the_message(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, provider: str
) -> None:
    key = OPENAI_KEY if provider == "openai" else ANTHROPIC_KEY
    llm_env.queue(Reply(status=401, message=f"Incorrect API key provided: {key}."))
    with pytest.raises(ProviderError) as raised:
        _ask_summary(conn, llm_env, provider)
    assert key not in str(raised.value)
    assert "Incorrect API key provided: [key hidden]." in str(raised.value)


@pytest.mark.parametrize("setting", ["semantic", "hybrid"])
def test_fables_verify_can_retrieve_by_the_semantic_or_hybrid_ranker_and_records_its_version(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, setting: str
) -> None:
    srv = llm_env
    unit = target(conn, "storysumm", SENTENCE_ID)
    srv.responder = lambda request: "True"
    asked = ask.ask(conn, unit, asking(srv, "fables-verify", evidence=setting, k=2), ME)
    context = srv.requests[-1].last_user_text().split("Context:\n", 1)[1].split("\n\nStatement:", 1)[0]
    parts = [" ".join(part.split()) for part in context.split("\n\n")]
    assert len(parts) == 2 and all(part in _passages(unit.document) for part in parts), "two of FABLES' passages"
    assert asked.source == f"llm/fables-verify-{setting}/gpt-4o"
    (parameters,) = rows(
        conn, "SELECT parameters FROM llm_call WHERE source = ? ORDER BY call_id DESC LIMIT 1", [asked.source]
    )[0].values()
    recorded = json.loads(parameters) if isinstance(parameters, str) else parameters
    assert recorded["evidence"] == setting and recorded["k"] == 2
    assert recorded["ranker"] == registry()[setting].version
