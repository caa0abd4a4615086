"""The canonical JSON Lines format for users' own data (documented in README.md).

One summary per line: `document_id`, `summary_id`, `sentences` (objects with `text` and optional
`label`, `explanation`, `error_types`) are required; `document` (source text), `model`, `split`,
`topic`, `claims` (same shape as sentences) and a summary `label` are optional. Labels use the
shared vocabulary and become the dataset's `gold` label source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faithlens.datasets.bundle import Bundle
from faithlens.datasets.readers import decode_utf8, read_bytes, require
from faithlens.errors import InputError
from faithlens.vocab import GOLD, VERDICTS

FORMAT = "canonical"
NO_TEXT = "No source text was given for this document in the imported file (field `document`)."


def _optional_str(name: str, where: str, record: dict, field: str) -> str | None:
    value = record.get(field)
    if value is not None and not isinstance(value, str):
        raise InputError(name, where, f"field {field!r} is {type(value).__name__}; expected a string")
    return value


def _verdict(name: str, where: str, value: Any) -> str:
    if value not in VERDICTS:
        raise InputError(name, where, f"unknown label value {value!r}; expected one of {', '.join(VERDICTS)}")
    return value


def load(path: Path, dataset: str) -> Bundle:
    name = str(path)
    text = decode_utf8(name, read_bytes(path))
    bundle = Bundle(dataset)
    documents: dict[str, str | None] = {}
    seen: dict[str, int] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {line_number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                name, f"{where} column {exc.colno}", f"invalid JSON ({exc.msg}); expected one JSON object per line"
            ) from None
        if not isinstance(record, dict):
            raise InputError(name, where, f"found a JSON {type(record).__name__}; expected one summary object per line")
        summary_id = require(name, where, record, "summary_id", str, "a summary id string")
        if summary_id in seen:
            raise InputError(
                name,
                where,
                f"duplicate summary_id {summary_id!r} (first on line {seen[summary_id]}); expected each summary once",
            )
        seen[summary_id] = line_number
        _record(bundle, name, where, summary_id, record, documents)
    if not seen:
        raise InputError(name, "", "no summaries; expected one JSON object per line")
    for document_id, document in documents.items():
        bundle.add(
            "document",
            document_id=document_id,
            title=document_id,
            text=document,
            text_note=None if document else NO_TEXT,
        )
    bundle.label_source(GOLD, "gold", "import", name, f"Labels given in {path.name}.")
    return bundle


def _record(
    bundle: Bundle, name: str, where: str, summary_id: str, record: dict, documents: dict[str, str | None]
) -> None:
    document_id = require(name, where, record, "document_id", str, "a document id string")
    document = _optional_str(name, where, record, "document")
    if document_id in documents and document and documents[document_id] and documents[document_id] != document:
        raise InputError(
            name,
            where,
            f"document {document_id!r} has a different text than on an earlier line; expected one text per document_id",
        )
    documents[document_id] = documents.get(document_id) or document
    sentences = require(name, where, record, "sentences", list, "a list of {text, label?, explanation?, error_types?}")
    claims = record.get("claims", [])
    if not isinstance(claims, list):
        raise InputError(name, where, f"field 'claims' is {type(claims).__name__}; expected a list")
    bundle.add(
        "summary",
        summary_id=summary_id,
        document_id=document_id,
        model=_optional_str(name, where, record, "model"),
        split=_optional_str(name, where, record, "split"),
        topic=_optional_str(name, where, record, "topic"),
        text=" ".join(item.get("text", "") for item in sentences if isinstance(item, dict)),
    )
    for kind, items in (("sentence", sentences), ("claim", claims)):
        for position, item in enumerate(items):
            _unit(bundle, name, f"{where} {kind} {position}", summary_id, kind, position, item)
    if record.get("label") is not None:
        bundle.label("summary", summary_id, _verdict(name, where, record["label"]), raw_value=record["label"])


def _unit(bundle: Bundle, name: str, where: str, summary_id: str, kind: str, position: int, item: Any) -> None:
    text = require(name, where, item, "text", str, "the sentence or claim text")
    target = bundle.unit(summary_id, kind, position, text)
    explanation = _optional_str(name, where, item, "explanation")
    if item.get("label") is not None:
        bundle.label(
            kind, target, _verdict(name, where, item["label"]), raw_value=item["label"], explanation=explanation
        )
    error_types = item.get("error_types", [])
    if not isinstance(error_types, list) or not all(isinstance(value, str) for value in error_types):
        raise InputError(name, where, "field 'error_types' should be a list of strings")
    for value in dict.fromkeys(error_types):
        bundle.tag(kind, target, "error_type", value)
