"""One streamed chat completion from OpenAI, Anthropic, or any OpenAI-compatible server.

The SDKs are imported lazily (anthropic alone costs over a second) and each client is made once
per (provider, base URL, key) so its connection pool is reused. Retries and timeouts are the SDKs'
own; what still fails after them becomes one `ProviderError` carrying the provider's message.
Keys are read from the settings at call time and never leave this module.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from faithlens import config
from faithlens.errors import FaithLensError

PROVIDERS = ("openai", "anthropic")
KEY_SETTING = {"openai": "openai_key", "anthropic": "anthropic_key"}
BASE_URL_SETTING = {"openai": "openai_base_url", "anthropic": "anthropic_base_url"}
LOCAL_KEY = "not-needed"
"""Sent to an OpenAI-compatible server given by base URL when no key is set (Ollama, vLLM and
llama.cpp accept any key; the SDK refuses to send none)."""


@dataclass(frozen=True)
class Endpoint:
    """Where a request goes: a provider and, for a compatible server, its base URL."""

    provider: str
    base_url: str | None = None

    @classmethod
    def resolve(cls, provider: str, base_url: str | None = None) -> Endpoint:
        if provider not in PROVIDERS:
            raise FaithLensError(f"unknown provider {provider!r}", f"use one of {', '.join(PROVIDERS)}")
        return cls(provider, base_url or config.get(BASE_URL_SETTING[provider]) or None)

    def __str__(self) -> str:
        return f"{self.provider} at {self.base_url}" if self.base_url else self.provider


@dataclass(frozen=True)
class Completion:
    """What came back: the text, the provider's token counts, and why it stopped."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    stop_reason: str | None
    refused: bool
    latency_ms: float


class ProviderError(FaithLensError):
    """The call failed after the SDK's own retries; `kind` says how (auth, rate_limit, server, timeout,
    malformed, cut, connection, bad_request, no_key). `retry_after` is the wait in seconds the provider
    asked for (its retry-after-ms or retry-after header), None when it sent none."""

    def __init__(
        self, endpoint: Endpoint, kind: str, message: str, hint: str = "", retry_after: float | None = None
    ) -> None:
        super().__init__(f"{endpoint}: {message}", hint)
        self.kind = kind
        self.retry_after = retry_after


def api_key(endpoint: Endpoint) -> str:
    """The key for `endpoint`, or the error that names the setting to set."""
    setting = config.SETTINGS[KEY_SETTING[endpoint.provider]]
    key = config.get(KEY_SETTING[endpoint.provider])
    if key:
        return key
    if endpoint.provider == "openai" and endpoint.base_url:
        return LOCAL_KEY
    raise ProviderError(
        endpoint,
        "no_key",
        f"no API key: set {setting.env}",
        f"export {setting.env}=... before starting, or add it to .streamlit/secrets.toml",
    )


def timeout_setting() -> float:
    """FAITHLENS_LLM_TIMEOUT in seconds, or the error that names it."""
    setting = config.SETTINGS["llm_timeout"]
    try:
        seconds = float(config.get("llm_timeout"))
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise FaithLensError(f"{setting.env}={config.get('llm_timeout')!r} is not a number of seconds", "e.g. 60")
    return seconds


def call_errors(provider: str) -> tuple[type[BaseException], ...]:
    """What a call may raise that is the provider's or the network's fault, not ours: the SDK's errors,
    a body that is not JSON (never retried by the SDKs), and a transport error escaping a stream."""
    import httpx2

    if provider == "openai":
        import openai

        return (openai.OpenAIError, json.JSONDecodeError, httpx2.HTTPError)
    import anthropic

    return (anthropic.AnthropicError, json.JSONDecodeError, httpx2.HTTPError)


def client(endpoint: Endpoint, timeout: float | None = None) -> object:
    """The SDK client for `endpoint` (one per provider, base URL and key, so its connection pool is reused)."""
    return _client(endpoint.provider, endpoint.base_url, api_key(endpoint), timeout or timeout_setting())


@functools.lru_cache(maxsize=16)
def _client(provider: str, base_url: str | None, key: str, timeout: float) -> object:
    if provider == "openai":
        import openai

        return openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout)
    import anthropic

    return anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout)


def complete(
    endpoint: Endpoint,
    model: str,
    system: str | None,
    messages: Sequence[dict[str, str]],
    temperature: float,
    max_tokens: int,
    on_text: Callable[[str], None] | None = None,
    timeout: float | None = None,
    retries: int | None = None,
) -> Completion:
    """Stream one reply to `messages` ([{role, content}, ...]), passing each piece of text to `on_text`.

    `retries` overrides the SDK's own count (2) of retries on 408, 409, 429, 5xx and lost connections.
    A compatible server whose streams carry no token counts (llama-cpp-python ignores
    `stream_options.include_usage`) is asked without streaming from then on when no one watches the
    text (a run), since its whole answers do report usage."""
    timeout = timeout or timeout_setting()
    sdk = client(endpoint, timeout)
    if retries is not None:
        sdk = sdk.with_options(max_retries=retries)
    streamed = on_text is not None or endpoint not in _STREAMS_WITHOUT_USAGE
    if endpoint.provider == "openai":
        send = _stream_openai if streamed else _whole_openai
    else:
        send = _stream_anthropic
    started = time.perf_counter()
    try:
        text, usage, stop_reason, refused = send(sdk, model, system, messages, temperature, max_tokens, on_text)
    except _Cut as cut:
        cause = _redacted(_provider_message(cut.error), endpoint)
        raise ProviderError(endpoint, "cut", f"the answer was cut off mid-stream: {cause}", "try again") from cut.error
    except call_errors(endpoint.provider) as exc:
        raise as_provider_error(endpoint, exc) from exc
    if streamed and endpoint.base_url and usage == (None, None):
        _STREAMS_WITHOUT_USAGE.add(endpoint)
    latency_ms = (time.perf_counter() - started) * 1000
    return Completion(text, usage[0], usage[1], stop_reason, refused, latency_ms)


_STREAMS_WITHOUT_USAGE: set[Endpoint] = set()
"""Compatible servers seen streaming an answer without token counts (this process)."""


class _Cut(Exception):
    """A stream that broke after it began: the answer was cut off."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _pieces(events, provider: str) -> Iterator:
    """The stream's events; a transport error once it has begun is a cut (a timeout stays a timeout)."""
    import httpx2

    lost = (httpx2.HTTPError, _sdk(provider).APIConnectionError)
    try:
        yield from events
    except lost as exc:
        if _timed_out(exc):
            raise
        raise _Cut(exc) from exc


def _sdk(provider: str):
    """The provider's SDK module (imported by its client already; anthropic alone costs a second)."""
    if provider == "openai":
        import openai

        return openai
    import anthropic

    return anthropic


def _timed_out(exc: BaseException) -> bool:
    return type(exc).__name__ in ("APITimeoutError", "ReadTimeout", "TimeoutException")


def _stream_openai(client, model, system, messages, temperature, max_tokens, on_text):
    sent = ([{"role": "system", "content": system}] if system else []) + list(messages)
    chunks = client.chat.completions.create(
        model=model,
        messages=sent,
        temperature=temperature,
        max_tokens=max_tokens,
        stream=True,
        stream_options={"include_usage": True},
    )
    parts, refusal, usage, stop_reason, chars = [], [], (None, None), None, 0
    for chunk in _pieces(chunks, "openai"):
        if chunk.usage is not None:
            usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        elif usage == (None, None):
            usage = _server_counts(chunk)
        for choice in chunk.choices:
            stop_reason = choice.finish_reason or stop_reason
            if choice.delta.content:
                parts.append(choice.delta.content)
                chars += len(choice.delta.content)
                if on_text:
                    on_text(choice.delta.content)
            if getattr(choice.delta, "refusal", None):
                refusal.append(choice.delta.refusal)
    refused = bool(refusal) or stop_reason == "content_filter"
    return "".join(parts) or "".join(refusal), usage, stop_reason, refused


def _server_counts(chunk) -> tuple[int | None, int | None]:
    """Token counts a server sends in its own fields: llama.cpp's `timings` on the last chunk, where the
    prompt's tokens are those evaluated (`prompt_n`) plus those reused from its cache (`cache_n`)."""
    timings = getattr(chunk, "timings", None)
    if not isinstance(timings, dict):
        return None, None
    prompt, predicted, reused = timings.get("prompt_n"), timings.get("predicted_n"), timings.get("cache_n", 0)
    if not all(isinstance(n, int) for n in (prompt, predicted, reused)):
        return None, None
    return prompt + reused, predicted


def _whole_openai(client, model, system, messages, temperature, max_tokens, on_text):
    """One answer without streaming: for a server whose streams carry no token counts."""
    sent = ([{"role": "system", "content": system}] if system else []) + list(messages)
    reply = client.chat.completions.create(
        model=model, messages=sent, temperature=temperature, max_tokens=max_tokens, stream=False
    )
    choice = reply.choices[0] if reply.choices else None
    text = (choice.message.content or "") if choice else ""
    refusal = getattr(choice.message, "refusal", None) if choice else None
    usage = (reply.usage.prompt_tokens, reply.usage.completion_tokens) if reply.usage else (None, None)
    if text and on_text:
        on_text(text)
    stop_reason = choice.finish_reason if choice else None
    return text or refusal or "", usage, stop_reason, bool(refusal) or stop_reason == "content_filter"


def _stream_anthropic(client, model, system, messages, temperature, max_tokens, on_text):
    extra = {"system": system} if system else {}
    # This SDK version has no `temperature` argument; the Messages API still takes it in the body.
    events = client.messages.create(
        model=model,
        messages=list(messages),
        max_tokens=max_tokens,
        stream=True,
        extra_body={"temperature": temperature},
        **extra,
    )
    parts, input_tokens, output_tokens, stop_reason = [], None, None, None
    for event in _pieces(events, "anthropic"):
        if event.type == "message_start":
            input_tokens = event.message.usage.input_tokens
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            parts.append(event.delta.text)
            if on_text:
                on_text(event.delta.text)
        elif event.type == "message_delta":
            stop_reason = event.delta.stop_reason or stop_reason
            output_tokens = event.usage.output_tokens
    return "".join(parts), (input_tokens, output_tokens), stop_reason, stop_reason == "refusal"


def as_provider_error(endpoint: Endpoint, exc: Exception) -> ProviderError:
    """One line a user can act on, from whichever SDK or transport raised."""
    status = getattr(exc, "status_code", None)
    message = _redacted(_provider_message(exc), endpoint)
    wait = retry_after(exc)
    if isinstance(exc, json.JSONDecodeError):
        return ProviderError(endpoint, "malformed", "the reply was not valid JSON", "the server may not speak this API")
    if status in (401, 403):
        setting = config.SETTINGS[KEY_SETTING[endpoint.provider]].env
        return ProviderError(endpoint, "auth", f"{status}: {message}", f"check {setting}")
    if status == 429:
        return ProviderError(
            endpoint, "rate_limit", f"429 rate limited: {message}", "wait a moment and try again", wait
        )
    if status is not None and status >= 500:
        return ProviderError(endpoint, "server", f"{status} server error: {message}", "try again later", wait)
    if status is not None:
        return ProviderError(endpoint, "bad_request", f"{status}: {message}", "check the model name and settings")
    if _timed_out(exc):
        return ProviderError(endpoint, "timeout", "no answer in time", "raise FAITHLENS_LLM_TIMEOUT or try again")
    return ProviderError(endpoint, "connection", f"connection failed: {message}", "check the server and base URL")


def retry_after(exc: Exception) -> float | None:
    """Seconds the provider asked to wait, from the response an SDK error carries: `retry-after-ms`,
    else `retry-after` in seconds or as an HTTP date; None when it sent neither."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    if (millis := headers.get("retry-after-ms")) is not None:
        with contextlib.suppress(ValueError):
            return max(float(millis) / 1000, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(float(value), 0.0)
    with contextlib.suppress(TypeError, ValueError):
        return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    return None


def _redacted(message: str, endpoint: Endpoint) -> str:
    """The provider's message without the key, should a server echo it back (shown on the page)."""
    key = config.get(KEY_SETTING[endpoint.provider])
    return message.replace(key, "[key hidden]") if key else message


def _provider_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__
