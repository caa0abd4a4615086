"""What a test scripts (`Reply`) and what it can check afterwards (`Request`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Protocol = Literal["openai", "anthropic"]
REFUSAL_TEXT = "I can't help with that."


@dataclass
class Reply:
    """One scripted answer. A plain str wherever a Reply is accepted means `Reply(text)`."""

    text: str = ""
    status: int = 200  # non-200: an error body in the provider's format carrying `message`
    message: str = ""  # the error message (default: the status phrase)
    headers: dict[str, str] = field(default_factory=dict)  # sent with any status, e.g. {"retry-after-ms": "50"}
    delay: float = 0.0  # seconds before answering, to trip client timeouts (cut short when the server stops)
    # Streaming: drop the connection after this many text chunks, before the closing events.
    # Non-streaming: drop it without sending a response at all.
    cut_after: int | None = None
    malformed: bool = False  # status 200 whose body (or first stream event) is not JSON
    reset: bool = False  # close the connection before any response (a connection reset)
    # openai: `message.refusal` = text (or REFUSAL_TEXT) and `content` null.
    # anthropic: stop_reason "refusal" and no content blocks (text ignored).
    refusal: bool = False
    input_tokens: int | None = None  # default: words in the system prompt and messages
    output_tokens: int | None = None  # default: words in the answer


def text_of(content: Any) -> str:
    """The text of a message `content` or anthropic `system`: a str, or a list of blocks with "text"."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


@dataclass(frozen=True)
class Request:
    """One request as the server received it, normalised across the two protocols."""

    protocol: Protocol
    path: str  # without the query string
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]  # the JSON body as sent ({} for GET or a body that is not a JSON object)
    model: str = ""
    stream: bool = False
    system: str | None = None  # openai system/developer messages or anthropic `system` (str or blocks), as text
    messages: list[dict[str, Any]] = field(default_factory=list)  # openai: without the system messages
    # A line of a batch (see `batches`): the batch's id and the line's custom_id; None for a direct call.
    batch_id: str | None = None
    custom_id: str | None = None

    @classmethod
    def parse(cls, protocol: Protocol, path: str, headers: dict[str, str], body: dict[str, Any]) -> Request:
        messages = list(body.get("messages") or [])
        if protocol == "openai":
            lifted = [text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
            system = "\n\n".join(lifted) if lifted else None
            messages = [m for m in messages if m.get("role") not in ("system", "developer")]
        else:
            system = text_of(body["system"]) if body.get("system") is not None else None
        model, stream = str(body.get("model", "")), bool(body.get("stream"))
        return cls(protocol, path, headers, body, model, stream, system, messages)

    def last_user_text(self) -> str:
        return next((text_of(m.get("content")) for m in reversed(self.messages) if m.get("role") == "user"), "")

    @property
    def retry_count(self) -> int:
        """0 on the first attempt; both SDKs number their retries in `x-stainless-retry-count`."""
        return int(self.headers.get("x-stainless-retry-count", "0"))

    def prompt_words(self) -> int:
        """The default `input_tokens`: a deterministic stand-in for a tokenizer."""
        texts = [self.system or ""] + [text_of(m.get("content")) for m in self.messages]
        return sum(len(t.split()) for t in texts)


Responder = Callable[[Request], "Reply | str"]


def chunks(text: str) -> list[str]:
    """Word-sized pieces (each keeps its surrounding spaces) that join back to `text`: one per stream event."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
