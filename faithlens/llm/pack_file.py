"""A demo pack's file: what it holds and how it is checked before anything is written.

A pack is one UTF-8 JSON object:

    {"format": "faithlens-demo-pack", "version": 1, "exported_at": "...", "dataset": "storysumm",
     "summaries": [...], "units": [...],          # what the presenter chose
     "targets": {"<summary or unit id>": "<its text>", ...},
     "answers": [{<an llm_call row: request_key, sample, target, provider, model, prompt, parameters,
                  request, replies, status, parsed, tokens, cost, latency>, "asked_by", "asked_at"}, ...]}

Every answer is checked on its own (`read` names the first faulty one): its fields and their types,
and its request key recomputed from what it says was sent, so a pack edited by hand or cut short
never puts an answer under a request it does not answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from faithlens.errors import InputError
from faithlens.llm import records

FORMAT = "faithlens-demo-pack"
VERSION = 1
STATUSES = ("ok", "parse_failure", "refused", "empty")
_TEXT, _INT, _NUMBER, _DICT, _LIST = (str,), (int,), (int, float), (dict,), (list,)
ANSWER_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "request_key": (_TEXT, False),
    "sample": (_INT, False),
    "dataset": (_TEXT, False),
    "level": (_TEXT, False),
    "target_id": (_TEXT, False),
    "source": (_TEXT, False),
    "provider": (_TEXT, False),
    "base_url": (_TEXT, True),
    "model": (_TEXT, False),
    "method": (_TEXT, False),
    "prompt_name": (_TEXT, False),
    "prompt_version": (_TEXT, False),
    "parameters": (_DICT, False),
    "request": (_DICT, False),
    "replies": (_LIST, False),
    "status": (_TEXT, False),
    "failure": (_TEXT, True),
    "parsed": (_DICT, False),
    "input_tokens": (_INT, True),
    "output_tokens": (_INT, True),
    "cost_usd": (_NUMBER, True),
    "latency_ms": (_NUMBER, True),
    "asked_by": (_TEXT, True),
    "asked_at": (_TEXT, False),
}
"""Each answer's fields: (the JSON types allowed, whether null is allowed)."""
CALL_FIELDS = tuple(name for name in ANSWER_FIELDS if name not in ("asked_by", "asked_at"))
"""The fields that are `llm_call` columns of the same name."""


@dataclass(frozen=True)
class Pack:
    """A pack read and checked: `sha256` is the file's digest, which an import is recorded under."""

    name: str
    sha256: str
    exported_at: str | None
    dataset: str
    targets: dict[str, str]
    answers: list[dict[str, Any]]


def read(name: str, data: bytes) -> Pack:
    """The pack in `data` (the file `name`), checked; an InputError names the first fault."""
    try:
        top = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            name, "", f"not a JSON file ({exc}); expected a demo pack written by `demo-pack export`"
        ) from None
    if not isinstance(top, dict) or top.get("format") != FORMAT:
        raise InputError(name, "", f'no "format": "{FORMAT}"; expected a demo pack written by `demo-pack export`')
    if top.get("version") != VERSION:
        raise InputError(
            name, "", f"pack version {top.get('version')!r}; expected {VERSION} (a newer FaithLens wrote it?)"
        )
    dataset, targets, answers = top.get("dataset"), top.get("targets"), top.get("answers")
    if not isinstance(dataset, str) or not dataset:
        raise InputError(name, '"dataset"', "missing or not text; expected the name of the dataset asked about")
    if not isinstance(targets, dict) or not all(isinstance(v, str) for v in targets.values()):
        raise InputError(name, '"targets"', "missing or not an object; expected {unit id: its text}")
    if not isinstance(answers, list) or not answers:
        raise InputError(name, '"answers"', "missing or empty; expected the list of stored answers")
    seen: dict[tuple[str, int], int] = {}
    for number, answer in enumerate(answers, start=1):
        _check(name, f"answer {number}", answer, dataset, targets)
        key = (answer["request_key"], answer["sample"])
        if key in seen:
            raise InputError(
                name, f"answer {number}", f"the same request and sample as answer {seen[key]}; expected once"
            )
        seen[key] = number
    exported = top.get("exported_at")
    digest = hashlib.sha256(data).hexdigest()
    return Pack(name, digest, exported if isinstance(exported, str) else None, dataset, targets, answers)


def _check(name: str, where: str, answer: object, dataset: str, targets: dict[str, str]) -> None:
    if not isinstance(answer, dict):
        raise InputError(name, where, "not an object; expected a stored answer")
    for field, (kinds, nullable) in ANSWER_FIELDS.items():
        value = answer.get(field)
        if value is None and (nullable and field in answer):
            continue
        if isinstance(value, bool) or not isinstance(value, kinds):
            wanted = " or ".join(kind.__name__ for kind in kinds) + (" or null" if nullable else "")
            raise InputError(name, where, f"field {field!r} is {value!r}; expected {wanted}")
    try:
        datetime.fromisoformat(answer["asked_at"])
    except ValueError:
        raise InputError(name, where, f"asked_at {answer['asked_at']!r}; expected a date and time") from None
    if answer["status"] not in STATUSES:
        raise InputError(name, where, f"status {answer['status']!r}; expected one of {', '.join(STATUSES)}")
    if not all(isinstance(reply, str) for reply in answer["replies"]):
        raise InputError(name, where, "a reply is not text; expected the replies as received")
    if answer["dataset"] != dataset:
        raise InputError(name, where, f"dataset {answer['dataset']!r}; expected the pack's {dataset!r}")
    if answer["target_id"] not in targets:
        raise InputError(name, where, f"unit {answer['target_id']!r} is not among the pack's targets")
    if records.request_key(_identity(answer)) != answer["request_key"]:
        raise InputError(
            name, where, "its request_key does not match the request it records; expected the file as exported"
        )


def _identity(answer: dict[str, Any]) -> dict[str, object]:
    """What `faithlens.llm.ask.render` hashes into a request key, read back from a stored answer."""
    request = answer["request"]
    return {
        "provider": answer["provider"],
        "base_url": answer["base_url"],
        "model": answer["model"],
        "prompt": answer["prompt_name"],
        "version": answer["prompt_version"],
        "parameters": answer["parameters"],
        "system": request.get("system"),
        "turns": request.get("turns"),
    }
