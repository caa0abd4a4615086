"""The providers' batch APIs: OpenAI files and batches (/v1/files, /v1/batches) and Anthropic message
batches (/v1/messages/batches). Each line of a batch is answered like a direct request (the queue,
then the responder, then the default text) and recorded in `LLMServer.requests` as a `Request` with
`batch_id` and `custom_id` set.

A batch answers "in progress" to its first `polls` retrieves (`LLMServer.batch_polls` when it was
created) and completes at the next one, answering all its lines then, in input order; with
`polls=0` it completes when created. A cancel before completion answers no line: the batch is
"cancelling"/"canceling" until the next retrieve, then ended with every line canceled.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tests.llmserver import wire
from tests.llmserver.script import Protocol, Request

if TYPE_CHECKING:
    from tests.llmserver.server import LLMServer

Response = tuple[int, bytes, str]  # status, payload, content type
DAY = 24 * 3600
ENDPOINT = "/v1/chat/completions"
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ENDED = ("completed", "cancelled", "ended")
_ID = r"([^/]+)"
_ROUTES = [
    ("POST", "/v1/files", "upload"),
    ("GET", f"/v1/files/{_ID}", "file"),
    ("GET", f"/v1/files/{_ID}/content", "content"),
    ("POST", "/v1/batches", "create_openai"),
    ("GET", f"/v1/batches/{_ID}", "retrieve"),
    ("POST", f"/v1/batches/{_ID}/cancel", "cancel"),
    ("POST", "/v1/messages/batches", "create_anthropic"),
    ("GET", f"/v1/messages/batches/{_ID}", "retrieve"),
    ("POST", f"/v1/messages/batches/{_ID}/cancel", "cancel"),
    ("GET", f"/v1/messages/batches/{_ID}/results", "results"),
]


def route(method: str, path: str) -> tuple[str, str] | None:
    """(handler name, id in the path or "") for a batch route, else None."""
    for verb, pattern, name in _ROUTES:
        found = re.fullmatch(pattern, path)
        if found and verb == method:
            return name, found.group(1) if found.groups() else ""
    return None


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _iso(moment: float | None) -> str | None:
    return None if moment is None else datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")


def _jsonl(lines: list[dict[str, Any] | str]) -> bytes:
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines).encode()


def _json(status: int, data: dict[str, Any]) -> Response:
    return status, json.dumps(data).encode(), "application/json"


@dataclass
class StoredFile:
    """An OpenAI file: an uploaded batch input, or a batch's output or error file."""

    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def body(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class Batch:
    """One batch as a test sees it in `LLMServer.batches`."""

    id: str
    protocol: Protocol
    custom_ids: list[str]
    bodies: list[dict[str, Any]]  # each line's chat.completions body / messages params, in input order
    polls: int  # retrieves answered "in progress" before it completes
    headers: dict[str, str]  # of the create request; its lines' Requests carry them
    # openai: validating, in_progress, cancelling, cancelled, completed; anthropic: in_progress, canceling, ended
    status: str
    retrieves: int = 0  # GETs of the batch (anthropic `results()` makes one too)
    outcomes: dict[str, str] = field(default_factory=dict)  # custom_id -> succeeded | errored | canceled, once ended
    lines: list[dict[str, Any] | str] = field(default_factory=list)  # the output lines in input order, once ended
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    created_at: float = field(default_factory=time.time)
    cancelled_at: float | None = None  # when the cancel was asked
    ended_at: float | None = None
    input_file_id: str = ""  # openai
    output_file_id: str | None = None  # openai: None while running or when there is no such line
    error_file_id: str | None = None
    metadata: dict[str, Any] | None = None

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def count(self, outcome: str) -> int:
        return sum(1 for value in self.outcomes.values() if value == outcome)


def _form(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """multipart/form-data fields: name -> (filename or None, bytes)."""
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    if not found:
        return {}
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in raw.split(b"--" + found.group(1).encode())[1:-1]:
        head, _, data = part[2:-2].partition(b"\r\n\r\n")  # each part is CRLF, headers, CRLF CRLF, data, CRLF
        name = re.search(rb'\bname="([^"]*)"', head)
        filename = re.search(rb'\bfilename="([^"]*)"', head)
        if name:
            fields[name.group(1).decode()] = (filename.group(1).decode() if filename else None, data)
    return fields


def _openai_lines(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(custom_id, body) of each line of an OpenAI batch input file, or _Refused."""
    lines = []
    for number, text in enumerate(data.decode(errors="replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            raise _Refused(400, f"line {number} is not JSON") from None
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            raise _Refused(400, f"line {number}: a JSON object with a string custom_id is required")
        if line.get("method") != "POST" or line.get("url") != ENDPOINT or not isinstance(line.get("body"), dict):
            raise _Refused(400, f'line {number}: method must be "POST", url "{ENDPOINT}" and body an object')
        lines.append((line["custom_id"], line["body"]))
    return lines


def _anthropic_lines(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise _Refused(400, "requests: a non-empty list is required")
    lines = []
    for index, item in enumerate(requests):
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            raise _Refused(400, f"requests.{index}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$")
        params = item.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("messages"), list):
            raise _Refused(400, f"requests.{index}.params: an object with messages is required")
        lines.append((custom_id, params))
    return lines


def _unique(custom_ids: list[str]) -> None:
    seen: set[str] = set()
    for custom_id in custom_ids:
        if custom_id in seen:
            raise _Refused(400, f"custom_id {custom_id!r} is used more than once; custom_ids must be unique")
        seen.add(custom_id)


class BatchStore:
    """The files and batches of one `LLMServer`; `handle` serves the routes above."""

    def __init__(self, owner: LLMServer) -> None:
        self.owner = owner
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, StoredFile] = {}
        self._lock = threading.RLock()

    def handle(self, name: str, ident: str, request: Request, raw: bytes) -> Response:
        try:
            with self._lock:
                return getattr(self, f"_{name}")(ident, request, raw)
        except _Refused as refused:
            return _json(refused.status, wire.error_body(request.protocol, refused.status, refused.message))

    def _upload(self, _ident: str, request: Request, raw: bytes) -> Response:
        fields = _form(request.headers.get("content-type", ""), raw)
        filename, data = fields.get("file", (None, b""))
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if filename is None or not purpose:
            raise _Refused(400, "a multipart body with a file and a purpose is required")
        stored = StoredFile(wire.new_id("file-"), filename, purpose, data)
        self.files[stored.id] = stored
        return _json(200, stored.body())

    def _stored(self, ident: str) -> StoredFile:
        if ident not in self.files:
            raise _Refused(404, f"No such File object: {ident}")
        return self.files[ident]

    def _file(self, ident: str, _request: Request, _raw: bytes) -> Response:
        return _json(200, self._stored(ident).body())

    def _content(self, ident: str, _request: Request, _raw: bytes) -> Response:
        return 200, self._stored(ident).data, "application/octet-stream"

    def _create_openai(self, _ident: str, request: Request, _raw: bytes) -> Response:
        body = request.body
        if body.get("endpoint") != ENDPOINT or body.get("completion_window") != "24h":
            raise _Refused(400, f'endpoint must be "{ENDPOINT}" and completion_window "24h"')
        source = self.files.get(str(body.get("input_file_id")))
        if source is None or source.purpose != "batch":
            raise _Refused(400, f"input_file_id {body.get('input_file_id')!r} is not a file uploaded for batch")
        lines = _openai_lines(source.data)
        if not lines:
            raise _Refused(400, "the input file has no requests")
        batch = self._create(request, lines, "validating")
        batch.input_file_id, batch.metadata = source.id, body.get("metadata")
        return _json(200, self._body(batch))

    def _create_anthropic(self, _ident: str, request: Request, _raw: bytes) -> Response:
        batch = self._create(request, _anthropic_lines(request.body), "in_progress")
        return _json(200, self._body(batch))

    def _create(self, request: Request, lines: list[tuple[str, dict[str, Any]]], status: str) -> Batch:
        custom_ids = [custom_id for custom_id, _ in lines]
        _unique(custom_ids)
        prefix = "msgbatch_" if request.protocol == "anthropic" else "batch_"
        bodies = [body for _, body in lines]
        polls = self.owner.batch_polls
        batch = Batch(wire.new_id(prefix), request.protocol, custom_ids, bodies, polls, request.headers, status)
        self.batches[batch.id] = batch
        if batch.polls <= 0:
            self._finish(batch, cancelled=False)
        return batch

    def _batch(self, ident: str, request: Request) -> Batch:
        batch = self.batches.get(ident)
        if batch is None or batch.protocol != request.protocol:
            raise _Refused(404, f"No such batch: {ident}")
        return batch

    def _retrieve(self, ident: str, request: Request, _raw: bytes) -> Response:
        batch = self._batch(ident, request)
        batch.retrieves += 1
        if batch.status in ("cancelling", "canceling"):
            self._finish(batch, cancelled=True)
        elif not batch.ended and batch.retrieves > batch.polls:
            self._finish(batch, cancelled=False)
        elif not batch.ended:
            batch.status = "in_progress"
        return _json(200, self._body(batch))

    def _cancel(self, ident: str, request: Request, _raw: bytes) -> Response:
        batch = self._batch(ident, request)
        if batch.ended:
            raise _Refused(409, f"Cannot cancel a batch with status {batch.status!r}.")
        if batch.cancelled_at is None:
            batch.status = "canceling" if batch.protocol == "anthropic" else "cancelling"
            batch.cancelled_at = time.time()
        return _json(200, self._body(batch))

    def _results(self, ident: str, request: Request, _raw: bytes) -> Response:
        batch = self._batch(ident, request)
        if not batch.ended:
            raise _Refused(404, f"Results of batch {ident} are not available until it has ended.")
        return 200, _jsonl(batch.lines), "application/binary"

    def _finish(self, batch: Batch, *, cancelled: bool) -> None:
        """Answer every line (or cancel every line), in input order, and end the batch."""
        for custom_id, body in zip(batch.custom_ids, batch.bodies, strict=True):
            if cancelled:
                outcome, line = "canceled", wire.canceled_batch_line(batch.protocol, custom_id)
            else:
                outcome, line = self._answer(batch, custom_id, body)
            batch.outcomes[custom_id] = outcome
            batch.lines.append(line)
        batch.ended_at = time.time()
        if batch.protocol == "anthropic":
            batch.status = "ended"
            return
        batch.status = "cancelled" if cancelled else "completed"
        succeeded = [batch.outcomes[custom_id] == "succeeded" for custom_id in batch.custom_ids]
        lines = list(zip(succeeded, batch.lines, strict=True))
        batch.output_file_id = self._output(batch, [line for ok, line in lines if ok], "output")
        batch.error_file_id = self._output(batch, [line for ok, line in lines if not ok], "error")

    def _output(self, batch: Batch, lines: list[dict[str, Any] | str], kind: str) -> str | None:
        if not lines:
            return None
        stored = StoredFile(wire.new_id("file-"), f"{batch.id}_{kind}.jsonl", "batch_output", _jsonl(lines))
        self.files[stored.id] = stored
        return stored.id

    def _answer(self, batch: Batch, custom_id: str, body: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
        path = "/v1/messages" if batch.protocol == "anthropic" else ENDPOINT
        request = Request.parse(batch.protocol, path, batch.headers, body)
        request = replace(request, batch_id=batch.id, custom_id=custom_id)
        self.owner._record(request)
        reply = self.owner._next_reply(request)
        outcome, line = (
            wire.openai_batch_line(request, reply)
            if batch.protocol == "openai"
            else wire.anthropic_batch_line(request, reply)
        )
        if outcome == "succeeded" and not reply.malformed and isinstance(line, dict):
            answer = line["response"]["body"] if batch.protocol == "openai" else line["result"]["message"]
            usage = answer["usage"]
            batch.usage["input_tokens"] += usage.get("input_tokens", usage.get("prompt_tokens", 0))
            batch.usage["output_tokens"] += usage.get("output_tokens", usage.get("completion_tokens", 0))
        return outcome, line

    def _body(self, batch: Batch) -> dict[str, Any]:
        return self._anthropic_body(batch) if batch.protocol == "anthropic" else _openai_body(batch)

    def _anthropic_body(self, batch: Batch) -> dict[str, Any]:
        counts = {key: batch.count(key) for key in ("succeeded", "errored", "canceled")}
        counts |= {"processing": 0 if batch.ended else len(batch.custom_ids), "expired": 0}
        url = f"http://127.0.0.1:{self.owner.port}/v1/messages/batches/{batch.id}/results"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + DAY),
            "ended_at": _iso(batch.ended_at),
            "cancel_initiated_at": _iso(batch.cancelled_at),
            "archived_at": None,
            "results_url": url if batch.ended else None,
        }


def _openai_body(batch: Batch) -> dict[str, Any]:
    created, ended = int(batch.created_at), batch.ended_at and int(batch.ended_at)
    completed = ended if batch.status == "completed" else None
    inp, out = batch.usage["input_tokens"], batch.usage["output_tokens"]
    usage = {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}
    usage |= {"input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": ENDPOINT,
        "model": str(batch.bodies[0].get("model", "")),
        "errors": None,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": batch.status,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": created,
        "in_progress_at": None if batch.status == "validating" else created,
        "expires_at": created + DAY,
        "finalizing_at": completed,
        "completed_at": completed,
        "failed_at": None,
        "expired_at": None,
        "cancelling_at": batch.cancelled_at and int(batch.cancelled_at),
        "cancelled_at": ended if batch.status == "cancelled" else None,
        "request_counts": {
            "total": len(batch.custom_ids),
            "completed": batch.count("succeeded"),
            "failed": batch.count("errored"),
        },
        "metadata": batch.metadata,
        "usage": usage,
    }
