"""The scripted server's batch APIs through the real SDKs: OpenAI files + batches and Anthropic
message batches, submitted, polled, collected and cancelled as an application does it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletion

from tests.llmserver import REFUSAL_TEXT, LLMServer, Reply, Request

ANSWER = "The claim is supported"
SYSTEM = "Answer briefly."
QUESTIONS = {"claim-1": "Is the first claim supported?", "claim-2": "And the second one?", "claim-3": "The third?"}
MIX = (Reply(ANSWER), Reply(status=500, message="boom"), Reply(refusal=True))
ENDPOINT = "/v1/chat/completions"


@pytest.fixture(params=[0, 1, 3], ids=lambda n: f"polls{n}")
def srv(request: pytest.FixtureRequest) -> Iterator[LLMServer]:
    with LLMServer(batch_polls=request.param) as server:
        yield server


@pytest.fixture
def srv2() -> Iterator[LLMServer]:
    """Batches stay in progress for two retrieves: time to cancel."""
    with LLMServer(batch_polls=2) as server:
        yield server


def oai(srv: LLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)


def ant(srv: LLMServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k", max_retries=0)


def words(*texts: str) -> int:
    return sum(len(text.split()) for text in texts)


def openai_input(custom_ids: list[str]) -> bytes:
    lines = []
    for custom_id in custom_ids:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTIONS.get(custom_id, "q")}]
        body = {"model": "m", "messages": messages}
        lines.append({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def openai_submit(client: openai.OpenAI, custom_ids: list[str] | None = None) -> Any:
    uploaded = client.files.create(file=("in.jsonl", openai_input(custom_ids or list(QUESTIONS))), purpose="batch")
    return client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")


def anthropic_requests(custom_ids: list[str]) -> list[dict[str, Any]]:
    def params(custom_id: str) -> dict[str, Any]:
        messages = [{"role": "user", "content": [{"type": "text", "text": QUESTIONS.get(custom_id, "q")}]}]
        return {"model": "m", "max_tokens": 50, "system": SYSTEM, "messages": messages}

    return [{"custom_id": custom_id, "params": params(custom_id)} for custom_id in custom_ids]


def anthropic_submit(client: anthropic.Anthropic, custom_ids: list[str] | None = None) -> Any:
    return client.messages.batches.create(requests=anthropic_requests(custom_ids or list(QUESTIONS)))


def poll(retrieve: Callable[[str], Any], batch_id: str, ended: Callable[[Any], bool]) -> tuple[Any, int]:
    """Retrieve until `ended`: (the ended batch, how many retrieves found it still running)."""
    running = 0
    while not ended(batch := retrieve(batch_id)):
        running += 1
        assert running < 10
    return batch, running


def jsonl(client: openai.OpenAI, file_id: str) -> dict[str, dict[str, Any]]:
    """An OpenAI output or error file: custom_id -> line."""
    lines = [json.loads(text) for text in client.files.content(file_id).text.splitlines()]
    return {line["custom_id"]: line for line in lines}


def batch_lines(srv: LLMServer) -> list[Request]:
    return [r for r in srv.requests if r.batch_id is not None]


def test_openai_batch_answers_errors_and_refusals(srv: LLMServer) -> None:
    client = oai(srv)
    srv.queue(*MIX)
    created = openai_submit(client)
    assert created.status == ("completed" if srv.batch_polls == 0 else "validating")
    assert created.request_counts.total == 3 and created.input_file_id in srv.files
    batch, running = poll(client.batches.retrieve, created.id, lambda b: b.status == "completed")
    assert running == srv.batch_polls and srv.batches[batch.id].retrieves == srv.batch_polls + 1
    counts = batch.request_counts
    assert (counts.total, counts.completed, counts.failed) == (3, 2, 1)
    done, failed = jsonl(client, batch.output_file_id), jsonl(client, batch.error_file_id)
    assert list(done) == ["claim-1", "claim-3"] and list(failed) == ["claim-2"]
    answer = ChatCompletion.model_validate(done["claim-1"]["response"]["body"])
    assert done["claim-1"]["response"]["status_code"] == 200 and done["claim-1"]["error"] is None
    assert answer.choices[0].message.content == ANSWER
    prompt = words(SYSTEM, QUESTIONS["claim-1"])
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (prompt, 4)
    refused = ChatCompletion.model_validate(done["claim-3"]["response"]["body"]).choices[0].message
    assert (refused.content, refused.refusal) == (None, REFUSAL_TEXT)
    error = failed["claim-2"]["response"]
    assert error["status_code"] == 500 and error["body"]["error"]["message"] == "boom"
    assert batch.usage.input_tokens == prompt + words(SYSTEM, QUESTIONS["claim-3"])
    assert batch.usage.output_tokens == 4 + words(REFUSAL_TEXT)
    lines = batch_lines(srv)
    assert [(r.custom_id, r.batch_id, r.path) for r in lines] == [(c, batch.id, ENDPOINT) for c in QUESTIONS]
    assert [r.last_user_text() for r in lines] == list(QUESTIONS.values()) and lines[0].system == SYSTEM
    assert srv.batches[batch.id].outcomes == {"claim-1": "succeeded", "claim-2": "errored", "claim-3": "succeeded"}


def test_anthropic_batch_answers_errors_and_refusals(srv: LLMServer) -> None:
    client = ant(srv)
    srv.queue(*MIX)
    created = anthropic_submit(client)
    assert created.id.startswith("msgbatch_") and created.type == "message_batch"
    assert created.processing_status == ("ended" if srv.batch_polls == 0 else "in_progress")
    batch, running = poll(client.messages.batches.retrieve, created.id, lambda b: b.processing_status == "ended")
    assert running == srv.batch_polls
    counts = batch.request_counts
    assert (counts.processing, counts.succeeded, counts.errored, counts.canceled) == (0, 2, 1, 0)
    assert batch.results_url == f"{srv.anthropic_base_url}/v1/messages/batches/{batch.id}/results"
    results = {line.custom_id: line.result for line in client.messages.batches.results(batch.id)}
    assert [result.type for result in results.values()] == ["succeeded", "errored", "succeeded"]
    message = results["claim-1"].message
    assert [block.text for block in message.content] == [ANSWER] and message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (words(SYSTEM, QUESTIONS["claim-1"]), 4)
    assert results["claim-2"].error.error.type == "api_error" and results["claim-2"].error.error.message == "boom"
    assert (results["claim-3"].message.stop_reason, results["claim-3"].message.content) == ("refusal", [])
    lines = batch_lines(srv)
    assert [(r.protocol, r.custom_id, r.path) for r in lines] == [("anthropic", c, "/v1/messages") for c in QUESTIONS]
    assert [r.last_user_text() for r in lines] == list(QUESTIONS.values())
    assert srv.batches[batch.id].retrieves == srv.batch_polls + 2  # results() retrieves the batch first


def test_batch_lines_use_the_responder_and_reply_usage() -> None:
    def responder(request: Request) -> Reply | str:
        return Reply("Two words", input_tokens=7, output_tokens=5) if request.custom_id == "claim-2" else "No"

    with LLMServer(responder, batch_polls=0) as srv:
        batch = openai_submit(oai(srv))
        done = jsonl(oai(srv), batch.output_file_id)
        usage = done["claim-2"]["response"]["body"]["usage"]
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == (7, 5)
        assert done["claim-1"]["response"]["body"]["choices"][0]["message"]["content"] == "No"
        assert batch.error_file_id is None
        results = list(ant(srv).messages.batches.results(anthropic_submit(ant(srv)).id))
        assert [r.result.message.content[0].text for r in results] == ["No", "Two words", "No"]


def test_openai_cancel_before_completion(srv2: LLMServer) -> None:
    client = oai(srv2)
    created = openai_submit(client)
    assert client.batches.retrieve(created.id).status == "in_progress"
    cancelling = client.batches.cancel(created.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    batch = client.batches.retrieve(created.id)
    assert batch.status == "cancelled" and batch.output_file_id is None
    assert (batch.request_counts.completed, batch.request_counts.failed) == (0, 0)
    failed = jsonl(client, batch.error_file_id)
    assert list(failed) == list(QUESTIONS)
    assert {line["error"]["code"] for line in failed.values()} == {"batch_cancelled"}
    assert all(line["response"] is None for line in failed.values())
    assert batch_lines(srv2) == []  # no line was answered
    with pytest.raises(openai.ConflictError):
        client.batches.cancel(created.id)


def test_anthropic_cancel_before_completion(srv2: LLMServer) -> None:
    client = ant(srv2)
    created = anthropic_submit(client)
    canceling = client.messages.batches.cancel(created.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    batch = client.messages.batches.retrieve(created.id)
    assert batch.processing_status == "ended" and batch.request_counts.canceled == 3
    results = list(client.messages.batches.results(created.id))
    assert [(r.custom_id, r.result.type) for r in results] == [(c, "canceled") for c in QUESTIONS]
    assert batch_lines(srv2) == [] and srv2.batches[created.id].status == "ended"
    with pytest.raises(anthropic.ConflictError):
        client.messages.batches.cancel(created.id)


def test_results_before_the_end(srv2: LLMServer) -> None:
    with pytest.raises(anthropic.AnthropicError, match="results_url"):  # the SDK checks before fetching
        ant(srv2).messages.batches.results(anthropic_submit(ant(srv2)).id)
    batch = openai_submit(oai(srv2))
    assert oai(srv2).batches.retrieve(batch.id).output_file_id is None


def test_duplicate_custom_ids_are_refused(srv2: LLMServer) -> None:
    with pytest.raises(openai.BadRequestError, match="claim-1"):
        openai_submit(oai(srv2), ["claim-1", "claim-2", "claim-1"])
    with pytest.raises(anthropic.BadRequestError, match="claim-1"):
        anthropic_submit(ant(srv2), ["claim-1", "claim-1"])
    assert srv2.batches == {}


@pytest.mark.parametrize("custom_id", ["has space", "x" * 65, "", "dot.ted"])
def test_invalid_anthropic_custom_id_is_refused(srv2: LLMServer, custom_id: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        anthropic_submit(ant(srv2), [custom_id])
    assert refused.value.status_code == 400 and refused.value.body["error"]["type"] == "invalid_request_error"


def test_invalid_openai_input_is_refused(srv2: LLMServer) -> None:
    client = oai(srv2)
    bad = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/embeddings", "body": {}}).encode()
    uploaded = client.files.create(file=("in.jsonl", bad), purpose="batch")
    with pytest.raises(openai.BadRequestError, match="line 1"):
        client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
    with pytest.raises(openai.BadRequestError):
        client.batches.create(input_file_id="file-missing", endpoint=ENDPOINT, completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_missing")


def test_malformed_lines(srv2: LLMServer) -> None:
    srv2.batch_polls = 0
    srv2.queue(Reply(malformed=True))
    client = oai(srv2)
    batch = openai_submit(client, ["claim-1"])
    line = jsonl(client, batch.output_file_id)["claim-1"]["response"]
    assert line["status_code"] == 200 and isinstance(line["body"], str)
    with pytest.raises(json.JSONDecodeError):
        json.loads(line["body"])
    srv2.queue(Reply(malformed=True))
    with pytest.raises(json.JSONDecodeError):
        list(ant(srv2).messages.batches.results(anthropic_submit(ant(srv2), ["claim-1"]).id))


def test_uploaded_file_round_trips(srv2: LLMServer) -> None:
    client = oai(srv2)
    data = openai_input(list(QUESTIONS))
    uploaded = client.files.create(file=("requests.jsonl", data), purpose="batch")
    assert (uploaded.object, uploaded.bytes, uploaded.filename) == ("file", len(data), "requests.jsonl")
    assert (uploaded.purpose, uploaded.status) == ("batch", "processed")
    assert client.files.retrieve(uploaded.id).bytes == len(data)
    assert client.files.content(uploaded.id).content == data


def test_batch_routes_need_a_key(srv2: LLMServer) -> None:
    response = httpx2.post(f"{srv2.openai_base_url}/batches", json={})
    assert response.status_code == 401 and response.json()["error"]["message"] == "missing key"
    response = httpx2.get(f"{srv2.anthropic_base_url}/v1/messages/batches/msgbatch_x")
    assert response.status_code == 401 and response.json()["error"]["type"] == "authentication_error"
