"""The canonical format for users' own data (documented in README.md), as JSON Lines.

One summary per line: `document_id`, `summary_id`, `sentences` (objects with `text` and optional
`label`, `explanation`, `error_types`, `ambiguity_types`) are required; `document` (source text),
`model`, `split`, `topic`, `claims` (same shape as sentences) and a summary `label` are optional.
Labels use the shared vocabulary and become the dataset's `gold` label source; error types and
ambiguity types (ARM's 1-5, though any strings are kept) become `gold` tags of the unit, of
families `error_type` and `ambiguity_type`. Any other field is refused, so a misspelt `lable`
cannot import as "no labels". `canonical_csv` reads the same content from a CSV into the same
`Summary` records; `build` turns either into a Bundle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithlens.datasets.bundle import Bundle
from faithlens.datasets.readers import read_jsonl, refuse_unknown, require
from faithlens.errors import InputError
from faithlens.vocab import AMBIGUITY_FAMILY, GOLD, VERDICTS

FORMAT = "canonical"
EXPECTED = "a summary object {document_id, summary_id, sentences: [{text, label?, ...}], ...}"
SUMMARY_FIELDS = ("document_id", "summary_id", "sentences", "document", "model", "split", "topic", "claims", "label")
UNIT_FIELDS = ("text", "label", "explanation", "error_types", "ambiguity_types")
NO_TEXT = "No source text was given for this document in the imported file (field or column `document`)."


@dataclass(frozen=True)
class Unit:
    """One sentence or claim as given, checked."""

    text: str
    label: str | None = None
    explanation: str | None = None
    error_types: tuple[str, ...] = ()
    ambiguity_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Summary:
    """One summary as given, checked; `where` is its position in the file, for later errors."""

    where: str
    document_id: str
    summary_id: str
    sentences: tuple[Unit, ...]
    document: str | None = None
    model: str | None = None
    split: str | None = None
    topic: str | None = None
    label: str | None = None
    claims: tuple[Unit, ...] = ()


def verdict(name: str, where: str, value: Any) -> str | None:
    """A label in the shared vocabulary (None when absent)."""
    if value is not None and value not in VERDICTS:
        raise InputError(name, where, f"unknown label value {value!r}; expected one of {', '.join(VERDICTS)}")
    return value


def nonempty(name: str, where: str, field: str, value: str, what: str) -> str:
    if not value.strip():
        raise InputError(name, where, f"{field} is empty; expected {what}")
    return value


def load(path: Path, dataset: str) -> Bundle:
    """Load a canonical JSON Lines file."""
    name = str(path)
    summaries = [_json_summary(name, f"line {number}", record) for number, record in read_jsonl(path, EXPECTED)]
    return build(name, path, dataset, summaries)


def _optional_str(name: str, where: str, record: dict, field: str) -> str | None:
    value = record.get(field)
    if value is not None and not isinstance(value, str):
        raise InputError(name, where, f"field {field!r} is {type(value).__name__}; expected a string")
    return value


def _json_summary(name: str, where: str, record: dict[str, Any]) -> Summary:
    refuse_unknown(name, where, record, SUMMARY_FIELDS, "field")
    ids = {
        field: nonempty(name, where, f"field {field!r}", require(name, where, record, field, str, what), what)
        for field, what in (("document_id", "a document id"), ("summary_id", "a summary id"))
    }
    sentences = require(name, where, record, "sentences", list, "a list of {text, label?, explanation?, ...}")
    if not sentences:
        raise InputError(name, where, "field 'sentences' is an empty list; expected at least one sentence")
    claims = record.get("claims", [])
    if not isinstance(claims, list):
        raise InputError(name, where, f"field 'claims' is {type(claims).__name__}; expected a list")
    return Summary(
        where=where,
        document_id=ids["document_id"],
        summary_id=ids["summary_id"],
        sentences=tuple(_json_unit(name, f"{where} sentence {i}", item) for i, item in enumerate(sentences, start=1)),
        claims=tuple(_json_unit(name, f"{where} claim {i}", item) for i, item in enumerate(claims, start=1)),
        label=verdict(name, where, record.get("label")),
        **{field: _optional_str(name, where, record, field) for field in ("document", "model", "split", "topic")},
    )


def _json_unit(name: str, where: str, item: Any) -> Unit:
    if not isinstance(item, dict):
        raise InputError(name, where, f"found a JSON {type(item).__name__}; expected an object {{text, label?, ...}}")
    refuse_unknown(name, where, item, UNIT_FIELDS, "field")
    text = require(name, where, item, "text", str, "the sentence or claim text")
    return checked_unit(
        name,
        (where, "field 'text'"),
        Unit(
            text=text,
            label=verdict(name, where, item.get("label")),
            explanation=_optional_str(name, where, item, "explanation"),
            error_types=_strings(name, where, item, "error_types"),
            ambiguity_types=_strings(name, where, item, "ambiguity_types"),
        ),
    )


def _strings(name: str, where: str, item: dict, field: str) -> tuple[str, ...]:
    """An optional list of strings, repeats dropped (a tag is there or not)."""
    values = item.get(field, [])
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise InputError(name, where, f"field {field!r} should be a list of strings")
    return tuple(dict.fromkeys(values))


def checked_unit(name: str, at: tuple[str, str], given: Unit) -> Unit:
    """`given`, refused when its text is blank or it explains a label it does not have. `at` is
    (position, what holds the text: a field or a column)."""
    where, text_field = at
    nonempty(name, where, text_field, given.text, "the sentence or claim text")
    if given.explanation and given.label is None:
        raise InputError(name, where, "an explanation without a label; expected a label for an explained unit")
    return given


def _document_texts(name: str, summaries: list[Summary]) -> dict[str, str | None]:
    """Each document's text, given on any of its summaries (once or repeated identically)."""
    texts: dict[str, str | None] = {}
    for summary in summaries:
        known, given = texts.get(summary.document_id), summary.document
        if known and given and known != given:
            raise InputError(
                name,
                summary.where,
                f"document {summary.document_id!r} has a different text than earlier; expected one text per document_id",
            )
        texts[summary.document_id] = known or given
    return texts


def build(name: str, path: Path, dataset: str, summaries: list[Summary]) -> Bundle:
    """The Bundle of checked summaries: documents, summaries, units, gold labels, error- and ambiguity-type tags."""
    first: dict[str, str] = {}
    for summary in summaries:
        if summary.summary_id in first:
            raise InputError(
                name,
                summary.where,
                f"duplicate summary_id {summary.summary_id!r} (first on {first[summary.summary_id]}); "
                "expected each summary once",
            )
        first[summary.summary_id] = summary.where
    bundle = Bundle(dataset)
    for document_id, text in _document_texts(name, summaries).items():
        bundle.add(
            "document", document_id=document_id, title=document_id, text=text, text_note=None if text else NO_TEXT
        )
    for summary in summaries:
        _add_summary(bundle, summary)
    bundle.label_source(GOLD, "gold", "import", name, f"Labels given in {path.name}.")
    return bundle


def _add_summary(bundle: Bundle, summary: Summary) -> None:
    bundle.add(
        "summary",
        summary_id=summary.summary_id,
        document_id=summary.document_id,
        model=summary.model,
        split=summary.split,
        topic=summary.topic,
        text=" ".join(unit.text for unit in summary.sentences),
    )
    for kind, units in (("sentence", summary.sentences), ("claim", summary.claims)):
        for position, unit in enumerate(units):
            target = bundle.unit(summary.summary_id, kind, position, unit.text)
            if unit.label is not None:
                bundle.label(kind, target, unit.label, raw_value=unit.label, explanation=unit.explanation)
            for value in unit.error_types:
                bundle.tag(kind, target, "error_type", value)
            for value in unit.ambiguity_types:
                bundle.tag(kind, target, AMBIGUITY_FAMILY, value)
    if summary.label is not None:
        bundle.label("summary", summary.summary_id, summary.label, raw_value=summary.label)
