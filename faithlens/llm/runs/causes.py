"""Why a run's item failed, in the words the Runs page and `llm run(s) --json` group failures by.

This is the one place that maps a failed item's stored reason to a cause: a provider error's message
(after the run's retries, `faithlens.llm.retrying`, whose `KIND_CAUSE` names each attempt's cause in
the same words), or the status of the answer that came back and is stored. What asks again depends on
what is stored: a call that failed has nothing stored and Resume asks for it; an answer that came back
unusable is stored, and only Retry failed asks for a new sample. 'budget' counts the items a run left
unasked when it stopped at its budget: they are not failures, but they stand between the run and its end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RESUME = "Resume asks again"
RETRY = "Retry failed asks for a new sample"
NEW_BUDGET = "Resume with a new budget"


@dataclass(frozen=True)
class Cause:
    name: str
    meaning: str


@dataclass(frozen=True)
class Counted:
    """How many items failed for one cause, and how many of them have no answer stored."""

    cause: Cause
    items: int
    unanswered: int

    @property
    def remedy(self) -> str:
        if self.cause.name == BUDGET:
            return NEW_BUDGET
        if self.unanswered == self.items:
            return RESUME
        return RETRY if not self.unanswered else f"{RESUME} ({self.unanswered:,}); {RETRY} (the rest)"


CAUSES = (
    Cause("rate limit", "the provider answered 429 (too many requests) to every attempt"),
    Cause("server error", "the provider answered 5xx to every attempt"),
    Cause("timeout", "no answer within FAITHLENS_LLM_TIMEOUT"),
    Cause("connection", "the server could not be reached, or dropped the connection before answering"),
    Cause("cut", "the answer's stream stopped before it was complete"),
    Cause("malformed", "the reply was not the API's JSON"),
    Cause("empty", "the model answered with no text"),
    Cause("refused", "the model declined to answer"),
    Cause("unparseable", "the answer did not follow the prompt's answer format"),
    Cause("budget", "not asked: the run stopped before it would pass its budget"),
    Cause("other", "any other failure (see the detail)"),
)
BY_NAME = {cause.name: cause for cause in CAUSES}
ORDER = {cause.name: n for n, cause in enumerate(CAUSES)}
BUDGET = "budget"
OTHER = "other"

ANSWER_STATUSES = {"empty": "empty", "refused": "refused", "parse_failure": "unparseable"}
"""An `llm_call.status` that is not ok -> cause: an answer came back and is stored."""

_ENDPOINT = re.compile(r"^(?:openai|anthropic)(?: at \S+?)?: ")
"""How a provider error's message begins (`providers.Endpoint`): named once above the list instead."""
_MESSAGES = (
    (re.compile(r"^429\b|rate.?limit", re.IGNORECASE), "rate limit"),
    (re.compile(r"^5\d\d\b|server error", re.IGNORECASE), "server error"),
    (re.compile(r"no answer in time|timed? ?out", re.IGNORECASE), "timeout"),
    (re.compile(r"incomplete chunked read|complete message body|stream (?:was )?cut|\bcut\b", re.IGNORECASE), "cut"),
    (re.compile(r"not valid JSON|malformed", re.IGNORECASE), "malformed"),
    (re.compile(r"^connection|connect", re.IGNORECASE), "connection"),
    (re.compile(r"^empty\b|empty answer|answer was empty", re.IGNORECASE), "empty"),
    (re.compile(r"^refused\b", re.IGNORECASE), "refused"),
    (re.compile(r"^parse_failure\b", re.IGNORECASE), "unparseable"),
)


def detail(reason: str) -> str:
    """The reason without what the list says above it: the provider and base URL a provider error begins
    with, or the status of a stored answer ('refused: ', 'parse_failure: '), which its cause names."""
    text = _ENDPOINT.sub("", reason, count=1)
    status, _, rest = text.partition(": ")
    return rest if status in ANSWER_STATUSES and rest else text


def endpoint(reason: str) -> str | None:
    """The provider and base URL a provider error's message begins with ('openai at http://...'), or None."""
    found = _ENDPOINT.match(reason)
    return found.group(0).removesuffix(": ") if found else None


def of_reason(reason: str | None) -> str:
    """The cause of a failed item from its stored reason: an answer's status ('refused: ...'), or a
    provider error's message after its endpoint ('429 rate limited: ...', 'no answer in time')."""
    text = _ENDPOINT.sub("", reason or "", count=1)
    status = text.split(":", 1)[0].strip()
    if status in ANSWER_STATUSES:
        return ANSWER_STATUSES[status]
    return next((cause for pattern, cause in _MESSAGES if pattern.search(text)), OTHER)


def counted(failed: list[tuple[str, bool]], unasked_by_budget: int = 0) -> list[Counted]:
    """Each cause that occurs, in the vocabulary's order, from (cause, answer stored) per failed item;
    `unasked_by_budget` adds the items a budget stop left unasked."""
    items: dict[str, int] = {}
    unanswered: dict[str, int] = {}
    for name, bought in failed:
        items[name] = items.get(name, 0) + 1
        unanswered[name] = unanswered.get(name, 0) + (not bought)
    if unasked_by_budget:
        items[BUDGET], unanswered[BUDGET] = unasked_by_budget, unasked_by_budget
    return [Counted(BY_NAME[name], items[name], unanswered[name]) for name in sorted(items, key=ORDER.__getitem__)]
