"""The providers' response formats, as the installed SDKs parse them: JSON bodies, the events of
a stream (server-sent events; `None` between them marks the end of a text chunk, for `cut_after`)
and the lines of batch results."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from tests.llmserver.script import REFUSAL_TEXT, Protocol, Reply, Request, chunks

MALFORMED = '{"id": "oops", this is not JSON'  # what a `Reply(malformed=True)` sends instead of a JSON body

# status -> (anthropic error type, openai error type, openai error code)
_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("invalid_request_error", "invalid_request_error", None),
    401: ("authentication_error", "invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "invalid_request_error", None),
    404: ("not_found_error", "invalid_request_error", None),
    409: ("invalid_request_error", "invalid_request_error", None),
    408: ("timeout_error", "server_error", None),
    413: ("request_too_large", "invalid_request_error", None),
    429: ("rate_limit_error", "requests", "rate_limit_exceeded"),
    529: ("overloaded_error", "server_error", None),
}


def error_body(protocol: Protocol, status: int, message: str = "") -> dict[str, Any]:
    anthropic_type, openai_type, code = _ERRORS.get(status, ("api_error", "server_error", None))
    message = message or HTTPStatus(status).phrase
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    return {"error": {"message": message, "type": openai_type, "param": None, "code": code}}


def models_body(protocol: Protocol, models: tuple[str, ...]) -> dict[str, Any]:
    if protocol == "anthropic":
        data = [{"id": m, "type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in models]
        return {"data": data, "has_more": False, "first_id": models[0], "last_id": models[-1]}
    return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in models]}


def _answer_text(request: Request, reply: Reply) -> str:
    if reply.refusal:
        return "" if request.protocol == "anthropic" else reply.text or REFUSAL_TEXT
    return reply.text


def _usage(request: Request, reply: Reply, text: str) -> tuple[int, int]:
    input_tokens = request.prompt_words() if reply.input_tokens is None else reply.input_tokens
    return input_tokens, len(text.split()) if reply.output_tokens is None else reply.output_tokens


def _anthropic_stop(reply: Reply) -> dict[str, Any]:
    if reply.refusal:
        details = {"type": "refusal", "category": None, "explanation": None}
        return {"stop_reason": "refusal", "stop_sequence": None, "stop_details": details}
    return {"stop_reason": "end_turn", "stop_sequence": None, "stop_details": None}


def answer_body(request: Request, reply: Reply) -> dict[str, Any]:
    """The body of a non-streamed answer."""
    text = _answer_text(request, reply)
    inp, out = _usage(request, reply, text)
    if request.protocol == "anthropic":
        content = [] if reply.refusal else [{"type": "text", "text": text}]
        message = {"id": "msg_test", "type": "message", "role": "assistant", "model": request.model, "content": content}
        return message | _anthropic_stop(reply) | {"usage": {"input_tokens": inp, "output_tokens": out}}
    key = "refusal" if reply.refusal else "content"
    message = {"role": "assistant", "content": None, "refusal": None, key: text}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out},
    }


def stream_events(request: Request, reply: Reply, usage: bool = True) -> Iterator[str | None]:
    """The server-sent events of a streamed answer, one text chunk per word. `usage=False` ignores
    OpenAI's `stream_options.include_usage`, as llama-cpp-python's server does."""
    if reply.malformed:  # anthropic skips events without a name, so this one has one
        yield "event: message_start\ndata: {not JSON\n\n" if request.protocol == "anthropic" else "data: {not JSON\n\n"
    elif request.protocol == "anthropic":
        yield from _anthropic_events(request, reply)
    else:
        yield from _openai_events(request, reply, usage)


def _anthropic_events(request: Request, reply: Reply) -> Iterator[str | None]:
    def event(kind: str, **data: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    text = _answer_text(request, reply)
    inp, out = _usage(request, reply, text)
    message = {"id": "msg_test", "type": "message", "role": "assistant", "model": request.model, "content": []}
    message |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": inp, "output_tokens": 1}}
    yield event("message_start", message=message)
    if not reply.refusal:
        yield event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        for piece in chunks(text):
            yield event("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
            yield None
        yield event("content_block_stop", index=0)
    yield event("message_delta", delta=_anthropic_stop(reply), usage={"output_tokens": out})
    yield event("message_stop")


def _openai_events(request: Request, reply: Reply, usage: bool) -> Iterator[str | None]:
    """With `stream_options.include_usage`, every chunk has `usage` (null) and a last one with no
    choices carries the counts, as the OpenAI API does."""
    include_usage = usage and bool((request.body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> str:
        data: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0}
        data["model"] = request.model
        data["choices"] = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        if include_usage:
            data["usage"] = usage
        return f"data: {json.dumps(data)}\n\n"

    text = _answer_text(request, reply)
    inp, out = _usage(request, reply, text)
    key = "refusal" if reply.refusal else "content"
    yield chunk({"role": "assistant", key: ""})
    for piece in chunks(text):
        yield chunk({key: piece})
        yield None
    yield chunk({}, "stop")
    if include_usage:
        yield chunk({}, usage={"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out})
    yield "data: [DONE]\n\n"


def new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


# Batch output lines. The outcome returned with a line is "succeeded" (status 200, malformed too) or "errored".


def openai_batch_line(request: Request, reply: Reply) -> tuple[str, dict[str, Any]]:
    if reply.status != 200:
        body: dict[str, Any] | str = error_body("openai", reply.status, reply.message)
    else:
        body = MALFORMED if reply.malformed else answer_body(request, reply)
    response = {"status_code": reply.status, "request_id": new_id("req_"), "body": body}
    line = {"id": new_id("batch_req_"), "custom_id": request.custom_id, "response": response, "error": None}
    return ("succeeded" if reply.status == 200 else "errored"), line


def anthropic_batch_line(request: Request, reply: Reply) -> tuple[str, dict[str, Any] | str]:
    if reply.status != 200:
        result = {"type": "errored", "error": error_body("anthropic", reply.status, reply.message)}
        return "errored", {"custom_id": request.custom_id, "result": result}
    if reply.malformed:
        return "succeeded", f'{{"custom_id": {json.dumps(request.custom_id)}, "result": {{not JSON'
    result = {"type": "succeeded", "message": answer_body(request, reply)}
    return "succeeded", {"custom_id": request.custom_id, "result": result}


def canceled_batch_line(protocol: Protocol, custom_id: str) -> dict[str, Any]:
    if protocol == "anthropic":
        return {"custom_id": custom_id, "result": {"type": "canceled"}}
    error = {"code": "batch_cancelled", "message": "The batch was cancelled before this request executed."}
    return {"id": new_id("batch_req_"), "custom_id": custom_id, "response": None, "error": error}
