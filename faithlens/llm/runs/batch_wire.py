"""The two batch protocols as the installed SDKs expose them: is a batch over, cancel it, read its
results as one `Result` per line (an answer to parse and store, or the provider's reason for none)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from faithlens.llm import ask

OPENAI_ENDED = ("completed", "failed", "expired", "cancelled")


@dataclass(frozen=True)
class Result:
    custom_id: str
    received: ask.Received | None
    error: str | None = None


def status(client: object, provider: str, batch_id: str) -> tuple[bool, str]:
    """(whether the batch has ended, its state in words)."""
    if provider == "openai":
        found = client.batches.retrieve(batch_id)
        counts = found.request_counts
        answered = f"{counts.completed + counts.failed:,} of {counts.total:,} answered" if counts else ""
        return found.status in OPENAI_ENDED, f"batch {batch_id}: {found.status}, {answered}".rstrip(", ")
    found = client.messages.batches.retrieve(batch_id)
    counts = found.request_counts
    done = counts.succeeded + counts.errored + counts.canceled + counts.expired
    return found.processing_status == "ended", (
        f"batch {batch_id}: {found.processing_status}, {done:,} of {done + counts.processing:,} answered"
    )


def cancel(client: object, provider: str, batch_id: str) -> None:
    if provider == "openai":
        client.batches.cancel(batch_id)
    else:
        client.messages.batches.cancel(batch_id)


def results(client: object, provider: str, batch_id: str) -> list[Result]:
    """Every line the provider returned; reading stops at a line that is not JSON (its items then fail)."""
    out: list[Result] = []
    lines = _openai_results(client, batch_id) if provider == "openai" else _anthropic_results(client, batch_id)
    try:
        for result in lines:
            out.append(result)
    except json.JSONDecodeError:
        pass
    return out


def _openai_results(client: object, batch_id: str) -> Iterator[Result]:
    found = client.batches.retrieve(batch_id)
    for file_id in (found.output_file_id, found.error_file_id):
        if file_id:
            for raw in client.files.content(file_id).text.splitlines():
                if raw.strip():
                    yield _openai_line(json.loads(raw))


def _openai_line(data: dict) -> Result:
    custom_id, response = data["custom_id"], data.get("response")
    if response is None:
        return Result(custom_id, None, (data.get("error") or {}).get("message") or "no response")
    body, code = response.get("body"), response.get("status_code")
    if code != 200:
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        return Result(custom_id, None, f"{code}: {message or 'error'}")
    if not isinstance(body, dict) or not body.get("choices"):
        return Result(custom_id, None, "malformed: the batch line's answer is not a chat completion")
    choice = body["choices"][0]
    message = choice.get("message") or {}
    refused = bool(message.get("refusal")) or choice.get("finish_reason") == "content_filter"
    usage = body.get("usage")
    tokens = (usage["prompt_tokens"], usage["completion_tokens"]) if usage else None
    text = message.get("content") or message.get("refusal") or ""
    return Result(custom_id, ask.Received([text], tokens, refused, None, batch=True))


def _anthropic_results(client: object, batch_id: str) -> Iterator[Result]:
    for line in client.messages.batches.results(batch_id):
        result = line.result
        if result.type == "succeeded":
            message = result.message
            text = "".join(block.text for block in message.content if block.type == "text")
            tokens = (message.usage.input_tokens, message.usage.output_tokens)
            received = ask.Received([text], tokens, message.stop_reason == "refusal", None, batch=True)
            yield Result(line.custom_id, received)
        elif result.type == "errored":
            yield Result(line.custom_id, None, f"{result.error.error.type}: {result.error.error.message}")
        else:
            yield Result(line.custom_id, None, f"{result.type} before it was answered")
