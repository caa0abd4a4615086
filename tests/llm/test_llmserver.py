"""The scripted LLM server, driven through the real openai and anthropic SDKs (no patching), so
that what the LLM tests script is what the SDKs really see: answers, usage, streams, retries,
errors, refusals, timeouts, cut connections and bodies that are not JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from tests.llmserver import REFUSAL_TEXT, LLMServer, Reply, Request, chunks

ANSWER = "The claim is supported"
SYSTEM = "Answer briefly."
QUESTION = "Is the claim supported by the passage?"


@pytest.fixture
def srv() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


def oai(srv: LLMServer, **options: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.openai_base_url, api_key="k", **{"max_retries": 0, **options})


def ant(srv: LLMServer, **options: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k", **{"max_retries": 0, **options})


def ask_openai(client: openai.OpenAI, **kwargs: object) -> object:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    return client.chat.completions.create(model="m", messages=messages, **kwargs)


def ask_anthropic(client: anthropic.Anthropic, **kwargs: object) -> object:
    messages = [{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]
    return client.messages.create(model="m", max_tokens=50, system=SYSTEM, messages=messages, **kwargs)


def ask(srv: LLMServer, sdk: str, *, stream: bool = False, **options: object) -> object:
    """One request through the real SDK; a stream is read to its end."""
    if sdk == "openai":
        result = ask_openai(oai(srv, **options), stream=stream)
    else:
        result = ask_anthropic(ant(srv, **options), stream=stream)
    return list(result) if stream else result


def test_chunks_join_back() -> None:
    for text in ["", "Yes", ANSWER, "  two  spaces \n"]:
        assert "".join(chunks(text)) == text
    assert len(chunks(ANSWER)) == 4


def test_openai_answer_usage_and_request(srv: LLMServer) -> None:
    srv.queue(Reply(ANSWER, input_tokens=12))
    completion = ask_openai(oai(srv))
    assert completion.choices[0].message.content == ANSWER
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 4)
    assert ask_openai(oai(srv)).choices[0].message.content == "Yes"  # the default once the queue is empty
    first = srv.requests[0]
    assert (first.protocol, first.path, first.model, first.stream) == ("openai", "/v1/chat/completions", "m", False)
    assert (first.system, first.last_user_text(), first.retry_count) == (SYSTEM, QUESTION, 0)
    assert [m["role"] for m in first.messages] == ["user"]


def test_anthropic_answer_usage_and_request(srv: LLMServer) -> None:
    srv.queue(Reply(ANSWER))
    message = ask_anthropic(ant(srv))
    assert [block.text for block in message.content] == [ANSWER]
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (9, 4)  # words of system + question
    request = srv.requests[0]
    assert (request.protocol, request.path, request.system, request.last_user_text()) == (
        "anthropic",
        "/v1/messages",
        SYSTEM,
        QUESTION,
    )
    assert request.headers["authorization"] == "Bearer k"  # not x-api-key


def test_responder_answers_after_the_queue() -> None:
    def responder(request: Request) -> Reply | str:
        return "No" if "passage" in request.last_user_text() else Reply("Maybe")

    with LLMServer(responder) as srv:
        srv.queue("First")
        answers = [ask_openai(oai(srv)).choices[0].message.content for _ in range(2)]
        assert answers == ["First", "No"]
        srv.reset()
        assert srv.requests == []


def test_openai_stream_chunks_and_usage(srv: LLMServer) -> None:
    srv.queue(Reply(ANSWER))
    events = list(ask_openai(oai(srv), stream=True, stream_options={"include_usage": True}))
    pieces = [e.choices[0].delta.content for e in events if e.choices and e.choices[0].delta.content]
    assert len(pieces) == 4 and "".join(pieces) == ANSWER
    assert events[-1].choices == [] and events[-1].usage.completion_tokens == 4
    assert srv.requests[0].stream


def test_anthropic_stream_chunks_and_usage(srv: LLMServer) -> None:
    srv.queue(Reply(ANSWER))
    events = list(ask_anthropic(ant(srv), stream=True))
    pieces = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert len(pieces) == 4 and "".join(pieces) == ANSWER
    assert events[0].type == "message_start" and events[0].message.usage.input_tokens == 9
    assert events[-2].type == "message_delta" and events[-2].usage.output_tokens == 4
    srv.queue(Reply(ANSWER))  # the SDK's stream helper accumulates the same events
    with ant(srv).messages.stream(model="m", max_tokens=50, messages=[{"role": "user", "content": "q"}]) as stream:
        assert "".join(stream.text_stream) == ANSWER
        assert stream.get_final_message().usage.output_tokens == 4


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_rate_limit_is_retried_after_the_header_delay(srv: LLMServer, sdk: str) -> None:
    srv.queue(Reply(status=429, headers={"retry-after-ms": "10"}), Reply(ANSWER))
    answer = ask(srv, sdk, max_retries=2)
    assert (answer.choices[0].message.content if sdk == "openai" else answer.content[0].text) == ANSWER
    assert [r.retry_count for r in srv.requests] == [0, 1]


def test_server_error_carries_the_message(srv: LLMServer) -> None:
    srv.queue(Reply(status=500, message="boom"), Reply(status=529, message="busy"))
    with pytest.raises(openai.InternalServerError) as oerr:
        ask_openai(oai(srv))
    assert oerr.value.status_code == 500 and oerr.value.body["message"] == "boom"
    with pytest.raises(anthropic.InternalServerError) as aerr:  # 529 has its own class, a subclass
        ask_anthropic(ant(srv))
    assert isinstance(aerr.value, anthropic.OverloadedError) and "busy" in str(aerr.value)
    assert aerr.value.body["error"] == {"type": "overloaded_error", "message": "busy"}


def test_missing_key_is_rejected(srv: LLMServer) -> None:
    """The SDKs refuse to send without a key, so a raw client stands in for a misconfigured one."""
    response = httpx2.post(f"{srv.openai_base_url}/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 401 and response.json()["error"]["message"] == "missing key"
    response = httpx2.post(f"{srv.anthropic_base_url}/v1/v1/messages", headers={"x-api-key": "k"}, json={})
    assert response.status_code == 404  # the base URL mistake TECH-NOTES warns about is not papered over


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
def test_malformed_body_is_a_bare_json_error(srv: LLMServer, sdk: str, stream: bool) -> None:
    srv.queue(Reply(malformed=True))
    with pytest.raises(json.JSONDecodeError):
        ask(srv, sdk, stream=stream, max_retries=2)
    assert len(srv.requests) == 1  # never retried


def test_cut_stream_raises(srv: LLMServer) -> None:
    srv.queue(Reply(ANSWER, cut_after=2), Reply(ANSWER, cut_after=2))
    seen: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        for event in ask_openai(oai(srv), stream=True):
            seen += [event.choices[0].delta.content or ""]
    assert "".join(seen) == "The claim "
    with pytest.raises(httpx2.RemoteProtocolError):  # escapes the anthropic SDK unwrapped
        list(ask_anthropic(ant(srv), stream=True))


def test_cut_without_response_is_retried(srv: LLMServer) -> None:
    srv.queue(Reply(cut_after=0), Reply(ANSWER), Reply(cut_after=0))
    assert ask_openai(oai(srv, max_retries=1)).choices[0].message.content == ANSWER
    with pytest.raises(anthropic.APIConnectionError):  # max_retries=0
        ask_anthropic(ant(srv))
    assert [r.retry_count for r in srv.requests] == [0, 1, 0]


def test_refusals(srv: LLMServer) -> None:
    srv.queue(*[Reply(refusal=True)] * 3)
    message = ask_openai(oai(srv)).choices[0].message
    assert (message.content, message.refusal) == (None, REFUSAL_TEXT)
    streamed = [e.choices[0].delta.refusal or "" for e in ask_openai(oai(srv), stream=True) if e.choices]
    assert "".join(streamed) == REFUSAL_TEXT
    refused = ask_anthropic(ant(srv))
    assert (refused.stop_reason, refused.content) == ("refusal", [])


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_delay_beyond_the_timeout(srv: LLMServer, sdk: str) -> None:
    srv.queue(Reply(ANSWER, delay=2))  # the handler's sleep ends when the server stops
    with pytest.raises(openai.APITimeoutError if sdk == "openai" else anthropic.APITimeoutError):
        ask(srv, sdk, timeout=0.1)
