"""StorySumm (Subbiah et al., 2024): stories, LLM summaries, sentence labels with explanations.

Raw format: a JSON object keyed by summary id (see data/README.md). Two defects of the published
release are mended here and recorded in the ingest log; every other deviation is an error:

* a stray `", "` before a line break inside one `summary` list makes the file invalid JSON;
* one summary has 7 sentences but 6 sentence labels (its labels were given on another
  segmentation), so its sentence labels cannot be aligned and are not attached.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from faithlens.datasets.bundle import Bundle, unit_id
from faithlens.datasets.readers import decode_utf8, parse_json, read_bytes, require
from faithlens.errors import InputError
from faithlens.vocab import GOLD

FORMAT = "storysumm"
EXPECTED = "a JSON object keyed by summary id, each with story, summary, errors, label, ..."
LICENSE = "MIT (data/storysumm/LICENSE)"
CITATION = (
    "Melanie Subbiah, Faisal Ladhak, Akankshya Mishra, Griffin Adams, Lydia B. Chilton, Kathleen McKeown. "
    "STORYSUMM: Evaluating Faithfulness in Story Summarization. EMNLP 2024."
)
DESCRIPTION = "96 LLM summaries of 32 short stories with sentence labels, explanations and easy/hard difficulty."
BINARY = {0: "unfaithful", 1: "faithful"}
DIFFICULTIES = ("easy", "hard", "")

# `", "` + newline inside a list of strings: the stray opening quote swallows the line break.
_STRAY_SEPARATOR = re.compile(r'",[ \t]*"\n(?=[ \t]*")')
# Published summaries whose sentence labels were given on a different segmentation:
# summary id -> (sentences, labels) as published.
KNOWN_UNALIGNED_LABELS = {"8167058533589479g1cebe": (7, 6)}


def repair_stray_separators(text: str) -> tuple[str, list[str]]:
    """Remove stray `"` openers before a line break in string lists; report each by line."""
    notes = []
    for match in _STRAY_SEPARATOR.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        notes.append(f'line {line}: removed a stray `"` after `,` that opened a string across the line break')
    return _STRAY_SEPARATOR.sub('",\n', text), notes


def parse(name: str, data: bytes) -> tuple[dict[str, Any], list[str]]:
    """Strict JSON, or strict JSON after the known repair; returns the object and repair notes.

    The repair keeps every line where it was, so an error in the repaired text (another defect,
    a summary id given twice) is reported at its place in the file as given.
    """
    text = decode_utf8(name, data)
    try:
        return _object(name, parse_json(name, text, EXPECTED)), []
    except InputError:
        repaired, notes = repair_stray_separators(text)
        if not notes:
            raise
    return _object(name, parse_json(name, repaired, EXPECTED)), notes


def _object(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(name, "top level", f"found a JSON {type(value).__name__}; expected {EXPECTED}")
    return value


def _binary(name: str, position: str, value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value not in BINARY:
        raise InputError(name, position, f"unknown label value {value!r} in {what}; expected 0 or 1")
    return BINARY[value]


def load(path: Path, dataset: str = FORMAT) -> Bundle:
    """Load `storysumm.json` into a Bundle (documents, summaries, sentences, claims, gold labels)."""
    name = str(path)
    records, repairs = parse(name, read_bytes(path))
    bundle = Bundle(dataset)
    for note in repairs:
        position, _, message = note.partition(": ")
        bundle.log(name, position, "repair", message)
    stories: dict[str, str] = {}
    for summary_id, record in records.items():
        _load_record(bundle, name, summary_id, record, stories)
    bundle.label_source(
        GOLD,
        "gold",
        "bundled",
        name,
        "Expanded gold labels: annotator, expert and hybrid protocols merged (StorySumm paper).",
    )
    return bundle


def _fields(name: str, where: str, record: Any) -> dict[str, Any]:
    """Every field a record must have, type-checked."""
    values = {
        "story": require(name, where, record, "story", str, "the story text"),
        "story-id": require(name, where, record, "story-id", int, "an integer story id"),
        "summary": require(name, where, record, "summary", list, "a list of summary sentences"),
        "errors": require(name, where, record, "errors", list, "one 0/1 per summary sentence"),
        "explanations": require(name, where, record, "explanations", list, "one explanation per sentence marked 0"),
        "label": _binary(name, where, require(name, where, record, "label", int, "0 or 1"), "label"),
        "difficulty": require(name, where, record, "difficulty", str, "easy, hard or empty"),
        "claims": require(name, where, record, "claims", list, "a list of claim strings"),
        "split": require(name, where, record, "split", str, "val or test"),
        "model": require(name, where, record, "model", str, "the generator's name"),
    }
    for what in ("summary", "explanations", "claims"):
        if not all(isinstance(item, str) for item in values[what]):
            raise InputError(name, where, f"field {what!r} holds a non-string; expected a list of strings")
    if values["difficulty"] not in DIFFICULTIES:
        raise InputError(name, where, f"unknown difficulty {values['difficulty']!r}; expected easy, hard or empty")
    return values


def _document(bundle: Bundle, name: str, where: str, record: dict[str, Any], stories: dict[str, str]) -> str:
    """The story as a document (once per story-id); returns its document id."""
    story_id, story = record["story-id"], record["story"]
    document_id = str(story_id)
    if document_id not in stories:
        stories[document_id] = story
        bundle.add("document", document_id=document_id, title=f"Story {story_id}", text=story, split=record["split"])
    elif stories[document_id] != story:
        raise InputError(
            name,
            where,
            f"story-id {story_id} has a different story text than an earlier record; expected one text per story-id",
        )
    return document_id


def _load_record(bundle: Bundle, name: str, summary_id: str, raw: Any, stories: dict[str, str]) -> None:
    where = f"record {summary_id!r}"
    record = _fields(name, where, raw)
    sentences = record["summary"]
    bundle.add(
        "summary",
        summary_id=summary_id,
        document_id=_document(bundle, name, where, record, stories),
        model=record["model"],
        split=record["split"],
        text=" ".join(sentences),
    )
    for kind, items in (("sentence", sentences), ("claim", record["claims"])):
        for position, text in enumerate(items):
            bundle.unit(summary_id, kind, position, text)
    if record["difficulty"]:
        bundle.tag("summary", summary_id, "difficulty", record["difficulty"])
    summary_explanation = _sentence_labels(bundle, name, summary_id, record)
    bundle.label("summary", summary_id, record["label"], raw_value=str(raw["label"]), explanation=summary_explanation)


def _sentence_labels(bundle: Bundle, name: str, summary_id: str, record: dict[str, Any]) -> str | None:
    """Attach one gold label per sentence, explanations to the sentences marked 0, in order.

    Returns the explanation that belongs to the summary as a whole (an unfaithful summary whose
    error is known only at summary level), else None.
    """
    where = f"record {summary_id!r}"
    sentences, errors, explanations = record["summary"], record["errors"], record["explanations"]
    values = [_binary(name, where, value, "errors") for value in errors]
    if len(values) != len(sentences):
        if KNOWN_UNALIGNED_LABELS.get(summary_id) == (len(sentences), len(values)):
            bundle.log(
                name,
                where,
                "repair",
                (
                    f"{len(sentences)} sentences but {len(values)} sentence labels as published; "
                    "sentence labels not attached (they cannot be aligned), summary label kept"
                ),
            )
            return None
        raise InputError(
            name,
            where,
            f"{len(sentences)} summary sentences but {len(values)} labels in 'errors'; expected one label per sentence",
        )
    flagged = [i for i, value in enumerate(values) if value == "unfaithful"]
    summary_explanation = None
    if len(explanations) != len(flagged):
        if not flagged and record["label"] == "unfaithful" and len(explanations) == 1:
            summary_explanation = explanations[0]
            bundle.log(
                name, where, "note", "unfaithful with no sentence marked 0: its explanation is kept at summary level"
            )
            explanations = []
        else:
            raise InputError(
                name,
                where,
                f"{len(flagged)} sentences marked 0 but {len(explanations)} explanations; expected one explanation per sentence marked 0",
            )
    reasons = dict(zip(flagged, explanations, strict=True))
    for position, value in enumerate(values):
        bundle.label(
            "sentence",
            unit_id(summary_id, "sentence", position),
            value,
            raw_value=str(errors[position]),
            explanation=reasons.get(position),
        )
    return summary_explanation
