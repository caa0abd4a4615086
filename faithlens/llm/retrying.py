"""Asking again within a run: a call that gave no answer is sent again, with exponential backoff and
jitter, honouring the wait the provider asked for, up to FAITHLENS_LLM_ATTEMPTS attempts in all.

The SDKs' own retries are off for these calls (`max_retries=0`), so every request sent is one attempt
this module sees, waits for, and reports to its `Calls` (a run records each fault as it happens).

What is asked again: 429 and 5xx, timeouts, lost connections, streams cut off, bodies that are not
JSON, and empty answers. Refused and unparseable answers are answers: they are stored, not asked
again. An empty answer from a compatible server (a base URL: llama.cpp, Ollama, vLLM) while no other
call was in flight is that model's own answer (asking a local model again at the same settings gives
it again), so it is stored too; one that came back while another call was in flight may be a request
the server interrupted for the next one (llama.cpp's default), which the run watches for
(`faithlens.llm.runs.slots`) before it asks again into it.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from faithlens import config
from faithlens.errors import FaithLensError
from faithlens.llm import providers
from faithlens.store import stamp

CAUSES = ("rate limit", "server error", "timeout", "malformed", "cut", "connection", "empty")
"""What an attempt that gave no answer ran into, as runs record and show it."""
KIND_CAUSE = {
    "rate_limit": "rate limit",
    "server": "server error",
    "timeout": "timeout",
    "malformed": "malformed",
    "cut": "cut",
    "connection": "connection",
}
"""`ProviderError.kind` -> cause, for the kinds asked again; other kinds (auth, bad_request, no_key)
would fail every time and stop the run instead."""
MAX_RETRY_AFTER_S = 120.0
"""A provider asking to wait longer than this is not waited for (the SDKs' own limit): the call fails."""
BACKOFF_CAP_S = 30.0


@dataclass(frozen=True)
class Policy:
    """How many attempts a call gets in all, and the first backoff (doubling, capped, with jitter)."""

    attempts: int
    backoff_s: float

    @classmethod
    def from_settings(cls, attempts: int | None = None) -> Policy:
        """FAITHLENS_LLM_ATTEMPTS (unless `attempts` is given) and FAITHLENS_LLM_BACKOFF, checked."""
        count = attempts if attempts is not None else _number("llm_attempts", int)
        if count < 1:
            env = config.SETTINGS["llm_attempts"].env
            raise FaithLensError(f"{env}={count} is out of range", "use 1 (no retries) or more, e.g. 4")
        return cls(count, _number("llm_backoff", float))

    def wait(self, attempt: int, asked: float | None) -> float:
        """Seconds before attempt `attempt + 1`: what the provider asked for (plus up to 10% so that
        the calls it turned away do not return at once), else base x 2^(attempt-1), capped, less up
        to 25% of jitter (as the SDKs do)."""
        if asked is not None:
            return asked * random.uniform(1.0, 1.1)
        return min(BACKOFF_CAP_S, self.backoff_s * 2 ** (attempt - 1)) * random.uniform(0.75, 1.0)


def _number(name: str, kind: type) -> float:
    setting = config.SETTINGS[name]
    try:
        value = kind(config.get(name))
    except ValueError:
        raise FaithLensError(f"{setting.env}={config.get(name)!r} is not a number", f"e.g. {setting.default}") from None
    if value < 0:
        raise FaithLensError(f"{setting.env}={value} is out of range", f"e.g. {setting.default}")
    return value


@dataclass(frozen=True)
class Fault:
    """One attempt that gave no answer: which, why, how long it took, and the wait that followed it
    (None: no attempt followed, because it was the last one or the run stopped)."""

    attempt: int
    cause: str
    message: str
    seconds: float
    in_flight: int
    """Other calls of the run in flight while this one was: a single-slot server interrupts them."""
    wait_s: float | None
    started_at: str


@dataclass
class Slot:
    """One call in flight; `others` counts the calls that ran beside it (in flight when it began, or
    begun before it ended)."""

    others: int = 0
    started: int = field(default=0, repr=False)


class Traffic:
    """A run's calls in flight: at most `concurrency` at once, counted so that each call knows how many
    ran beside it; `wake` ends every wait between attempts (the run stops)."""

    def __init__(self, concurrency: int) -> None:
        self._limit = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._in_flight = 0
        self._begun = 0
        self.woken = threading.Event()

    @contextlib.contextmanager
    def slot(self) -> Iterator[Slot]:
        with self._limit:
            with self._lock:
                slot = Slot(others=self._in_flight, started=self._begun)
                self._in_flight += 1
                self._begun += 1
            try:
                yield slot
            finally:
                with self._lock:
                    self._in_flight -= 1
                    slot.others = max(slot.others, self._begun - slot.started - 1)

    def wake(self) -> None:
        self.woken.set()


class Calls:
    """The calls of one item of a run: through the run's `Traffic`, faults asked again by `policy`.

    A run subclasses it to record each fault (`fault`) and answer (`answered`) and to say when it
    stops (`stopping`), which ends the waiting: an attempt cut short by a stop leaves its item to do."""

    def __init__(self, traffic: Traffic, policy: Policy) -> None:
        self.traffic, self.policy = traffic, policy

    def fault(self, request_key: str, fault: Fault) -> None:
        """Called for every attempt that gave no answer, before its wait."""

    def seen(self, cause: str | None, others: int) -> None:
        """Called after every attempt, before anything is decided: its cause (None: it answered) and
        the number of calls that ran beside it."""

    def stopping(self) -> bool:
        return False

    def pause(self, seconds: float) -> bool:
        """Wait `seconds`; False when the run stopped meanwhile."""
        if seconds > 0:
            self.traffic.woken.wait(seconds)
        return not self.stopping()


def complete(
    calls: Calls, request_key: str, endpoint: providers.Endpoint, send: Callable[[], providers.Completion]
) -> providers.Completion:
    """`send()` until it answers, within the policy; the last fault is raised as a ProviderError whose
    message says how many attempts were made. An empty answer left after the last attempt is returned
    (stored as an empty answer); one the run stopped on is raised, so its item stays to do."""
    policy = calls.policy
    for attempt in range(1, policy.attempts + 1):
        started, began = time.perf_counter(), stamp()
        error: providers.ProviderError | None = None
        with calls.traffic.slot() as slot:
            try:
                done = send()
            except providers.ProviderError as exc:
                if exc.kind not in KIND_CAUSE:
                    raise
                error = exc
        if error is None and (not _empty(done) or (endpoint.base_url and not slot.others)):
            calls.seen(None, slot.others)  # an empty one here is a local model's own: asked again, it comes again
            return done
        cause = KIND_CAUSE[error.kind] if error else "empty"
        calls.seen(cause, slot.others)
        message = error.message if error else f"{endpoint}: the answer was empty"
        asked = error.retry_after if error else None
        last = attempt == policy.attempts or calls.stopping() or (asked or 0) > MAX_RETRY_AFTER_S
        wait = None if last else policy.wait(attempt, asked)
        seconds = time.perf_counter() - started
        calls.fault(request_key, Fault(attempt, cause, message, seconds, slot.others, wait, began))
        if wait is not None and calls.pause(wait):
            continue
        if error is None and not calls.stopping():
            return done
        raise _given_up(endpoint, error, cause, attempt, asked)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _empty(done: providers.Completion) -> bool:
    return not done.refused and not done.text.strip()


def _given_up(
    endpoint: providers.Endpoint, error: providers.ProviderError | None, cause: str, attempts: int, asked: float | None
) -> providers.ProviderError:
    tried = f"{attempts} attempt" + ("s" if attempts > 1 else "")
    if error is None:
        return providers.ProviderError(endpoint, "empty", f"the answer was empty ({tried})", "try again")
    detail = error.message.removeprefix(f"{endpoint}: ")
    if (asked or 0) > MAX_RETRY_AFTER_S:
        detail += f"; the provider asked to wait {asked:,.0f} s"
    return providers.ProviderError(endpoint, error.kind, f"{detail} ({tried})", error.hint, error.retry_after)
